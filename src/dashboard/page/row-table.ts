import { formatCell, type Row, type RowColumn } from './generic-rows';

/** Most rows a table draws (an endpoint may answer 1000; the rest is said, not drawn). */
const MAX_TABLE_ROWS = 200;

/**
 * Fills a table with rows of known columns: one header per column (its type as the title), one
 * cell per value, formatted by type. `data-rows` tells how many rows the answer had.
 */
export function fillRowTable(table: HTMLTableElement, columns: readonly RowColumn[], rows: readonly Row[]): void {
  const head = document.createElement('tr');
  head.append(
    ...columns.map((c) => {
      const th = document.createElement('th');
      th.textContent = c.name;
      th.title = c.type;
      return th;
    }),
  );
  table.tHead?.remove();
  table.createTHead().append(head);
  const body = table.tBodies[0] ?? table.createTBody();
  body.replaceChildren(
    ...rows.slice(0, MAX_TABLE_ROWS).map((row) => {
      const tr = document.createElement('tr');
      tr.append(
        ...columns.map((c) => {
          const td = document.createElement('td');
          const text = formatCell(c.type, row[c.name]);
          td.textContent = text;
          if (c.type === 'integer' || c.type === 'float') td.className = 'number';
          if (text.endsWith('…')) td.title = JSON.stringify(row[c.name]);
          return td;
        }),
      );
      return tr;
    }),
  );
  table.dataset.rows = String(rows.length);
}

/** How a table's rows are summed up in the panel's line: `12 rows`, `the first 200 of 1,000 rows`. */
export function rowCount(rows: number): string {
  if (rows > MAX_TABLE_ROWS) return `the first ${MAX_TABLE_ROWS} of ${rows.toLocaleString('en-US')} rows`;
  return rows === 1 ? '1 row' : `${rows.toLocaleString('en-US')} rows`;
}
