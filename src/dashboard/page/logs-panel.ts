import { inferColumns, type Row } from './generic-rows';
import { PanelView, type LoadOutcome, type Scope } from './panel-view';
import { fillRowTable, rowCount } from './row-table';
import { statusOf, type LogsAllRow } from './series';
import { bucketBounds, bucketLabel, isoMicros } from './time-range';
import { entryTotals } from './totals';

/**
 * logs.all: the newest entries of the shared time range (or of the bucket clicked in a chart, or
 * of the instants typed in After / Until) as a table (time, status, message); a row opens its
 * metadata. When the endpoint is sandboxable, a query box sends the caller's own SELECT (`sql`)
 * with the same parameters and shows its rows instead.
 */
export function logsPanel(view: PanelView) {
  const body = view.root.querySelector<HTMLTableSectionElement>('table[data-role="entries"] tbody')!;
  // Entries opened stay open when the table is redrawn (every refresh).
  const open = new Set<string>();
  const table = view.root.querySelector<HTMLTableElement>('table[data-role="entries"]')!;
  const sqlForm = view.root.querySelector<HTMLFormElement>('[data-role="sql-form"]')!;
  const sqlInput = sqlForm.querySelector<HTMLTextAreaElement>('textarea')!;
  const sqlTable = view.root.querySelector<HTMLTableElement>('table[data-role="sql-rows"]')!;
  const bucketNote = view.root.querySelector<HTMLElement>('[data-role="bucket"]')!;
  // Only a sandboxable logs.all takes a caller's SELECT (the description says so).
  sqlForm.hidden = view.definition.sandboxed !== true;
  /** The SELECT in effect ('' : the entries). */
  let sql = '';
  /** The bucket clicked, while After / Until still hold its bounds. */
  let bucket: { label: string; after: string; until: string } | null = null;

  const controls = {
    tier: view.control<HTMLSelectElement>('project_tier'),
    after: view.control<HTMLInputElement>('iso_timestamp_start'),
    until: view.control<HTMLInputElement>('iso_timestamp_end'),
    apply: view.root.querySelector<HTMLButtonElement>('[data-role="apply"]')!,
    clear: view.root.querySelector<HTMLButtonElement>('[data-role="clear"]')!,
    sqlForm,
    sqlClear: sqlForm.querySelector<HTMLButtonElement>('[data-role="sql-clear"]')!,
  };

  function showMode(): void {
    const typed = controls.after.value.trim() !== '' || controls.until.value.trim() !== '';
    controls.clear.hidden = !typed;
    if (bucket && (controls.after.value.trim() !== bucket.after || controls.until.value.trim() !== bucket.until)) bucket = null;
    bucketNote.hidden = bucket === null;
    bucketNote.textContent = bucket ? `Entries of the bucket ${bucket.label} (UTC), from a click in a chart.` : '';
    table.closest<HTMLElement>('.table-scroll')!.hidden = sql !== '';
    sqlTable.closest<HTMLElement>('.table-scroll')!.hidden = sql === '';
    controls.sqlClear.hidden = sql === '';
  }

  return {
    ...controls,
    /** Puts a chart bucket's bounds into After / Until (the caller then loads). */
    showBucket(start: number, width: number): void {
      const bounds = bucketBounds(start, width);
      controls.after.value = bounds.after;
      controls.until.value = bounds.until;
      bucket = { label: bucketLabel(start, width), ...bounds };
      sql = '';
      showMode();
    },
    /** The SELECT of the query box becomes the panel's query ('' goes back to the entries). */
    useSql(text: string): void {
      sql = text.trim();
      showMode();
    },
    sqlText: () => sqlInput.value,
    load(scope: Scope, tier: string): Promise<LoadOutcome> {
      showMode();
      // Without typed bounds the entries are those of the shared range.
      const after = controls.after.value.trim() || isoMicros((scope.nowMs - scope.range * 1000) * 1000);
      const params = { project: scope.project, project_tier: tier, iso_timestamp_start: after, iso_timestamp_end: controls.until.value.trim(), ...(sql ? { sql } : {}) };
      if (sql) {
        return view.load<Row>(params, (rows) => {
          fillRowTable(sqlTable, inferColumns(rows), rows);
          view.showTotals([]);
          return `your query: ${rowCount(rows.length)}`;
        });
      }
      return view.load<LogsAllRow>(params, (rows) => {
        body.replaceChildren(...rows.flatMap((row) => entryRows(row, open)));
        table.dataset.rows = String(rows.length);
        view.showTotals(entryTotals(rows));
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
  main.append(cell(toggle), cell(status === null ? '–' : String(status), status !== null && status >= 400 ? 'status bad' : 'status'), cell(row.event_message ?? '', 'message'));
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
