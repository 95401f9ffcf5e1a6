import type { ColumnSpec } from '../definitions/definition';
import type { Row } from './shape-rows';
import { stringifyExactJson } from '../util/exact-json';

/** Newline-delimited JSON of shaped rows: one object per line, columns in their declared order. */
export function rowsToNdjson(columns: readonly ColumnSpec[], rows: readonly Row[]): string {
  let out = '';
  for (const row of rows) {
    const ordered: Row = {};
    for (const c of columns) ordered[c.name] = row[c.name] ?? null;
    out += `${stringifyExactJson(ordered)}\n`;
  }
  return out;
}
