import { PanelView, type LoadOutcome } from './panel-view';
import { statusOf, type LogsAllRow } from './series';

/** logs.all: the newest entries as a table (time, status, message); a row opens its metadata. */
export function logsPanel(view: PanelView) {
  const body = view.root.querySelector('tbody')!;
  // Entries opened stay open when the table is redrawn (every refresh).
  const open = new Set<string>();
  const table = view.root.querySelector('table')!;
  return {
    tier: view.control<HTMLSelectElement>('project_tier'),
    after: view.control<HTMLInputElement>('iso_timestamp_start'),
    until: view.control<HTMLInputElement>('iso_timestamp_end'),
    apply: view.root.querySelector<HTMLButtonElement>('[data-role="apply"]')!,
    load(project: string, tier: string, after: string, until: string): Promise<LoadOutcome> {
      return view.load<LogsAllRow>({ project, project_tier: tier, iso_timestamp_start: after.trim(), iso_timestamp_end: until.trim() }, (rows) => {
        body.replaceChildren(...rows.flatMap((row) => entryRows(row, open)));
        table.dataset.rows = String(rows.length);
        return rows.length === 0 ? 'no entries' : `the newest ${rows.length} entries`;
      });
    },
  };
}

/** An entry's row and its metadata row (hidden unless open); the toggle button opens and closes it. */
function entryRows(row: LogsAllRow, open: Set<string>): HTMLTableRowElement[] {
  const main = document.createElement('tr');
  main.className = 'entry';
  const status = statusOf(row.metadata);
  const toggle = document.createElement('button');
  toggle.type = 'button';
  toggle.className = 'toggle';
  toggle.textContent = row.timestamp.replace('T', ' ').replace(/\.(\d{3})\d*Z$/, '.$1');
  toggle.title = 'Show the metadata';
  main.append(
    cell(toggle),
    cell(status === null ? '–' : String(status), status !== null && status >= 400 ? 'status bad' : 'status'),
    cell(row.event_message ?? '', 'message'),
  );
  const details = document.createElement('tr');
  details.className = 'metadata';
  details.hidden = !open.has(row.id);
  toggle.setAttribute('aria-expanded', String(!details.hidden));
  const pre = document.createElement('pre');
  pre.textContent = JSON.stringify({ id: row.id, metadata: row.metadata }, null, 2);
  const td = cell(pre);
  td.colSpan = 3;
  details.append(td);
  toggle.addEventListener('click', () => {
    details.hidden = !details.hidden;
    toggle.setAttribute('aria-expanded', String(!details.hidden));
    if (details.hidden) open.delete(row.id);
    else open.add(row.id);
  });
  return [main, details];
}

function cell(content: string | Node, className?: string): HTMLTableCellElement {
  const td = document.createElement('td');
  if (className) td.className = className;
  td.append(content);
  return td;
}
