import type { ColumnSpec } from '../definitions/definition';
import type { Row } from './shape-rows';
import { stringifyExactJson } from '../util/exact-json';

/**
 * RFC 4180 CSV of shaped rows: a header line of column names, CRLF line ends, fields quoted only
 * when they need it. Null is an empty field; a `json` column holds the object's JSON text.
 * Values are written as they are (no spreadsheet-formula escaping), so the file stays lossless.
 */
export function rowsToCsv(columns: readonly ColumnSpec[], rows: readonly Row[]): string {
  const lines = [columns.map((c) => csvField(c.name)).join(',')];
  for (const row of rows) lines.push(columns.map((c) => csvField(cellText(c, row[c.name] ?? null))).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

function cellText(column: ColumnSpec, value: Row[string]): string {
  if (value === null) return '';
  if (column.type === 'json' || typeof value === 'object') return stringifyExactJson(value);
  return String(value);
}

function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
