import type { ColumnSpec } from '../definitions/definition';
import type { Row } from '../rows/shape-rows';
import { stringifyExactJson } from '../util/exact-json';

const MAX_CELL = 60;

/**
 * Rows as an aligned text table for the terminal: numbers right-aligned, null blank, objects
 * as JSON cut to 60 characters. For machines use `--format json|csv|ndjson|arrow`.
 */
export function formatTable(columns: readonly ColumnSpec[], rows: readonly Row[]): string {
  if (rows.length === 0) return '(no rows)\n';
  const cells = rows.map((row) => columns.map((c) => cellText(row[c.name] ?? null)));
  const widths = columns.map((c, i) => Math.max(c.name.length, ...cells.map((r) => r[i]!.length)));
  const numeric = columns.map((c) => c.type === 'integer' || c.type === 'float');
  const line = (values: string[]) =>
    values
      .map((v, i) => (numeric[i] ? v.padStart(widths[i]!) : v.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  const out = [line(columns.map((c) => c.name)), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)];
  return `${out.join('\n')}\n(${rows.length} row${rows.length === 1 ? '' : 's'})\n`;
}

function cellText(value: Row[string]): string {
  if (value === null) return '';
  const text = typeof value === 'object' ? stringifyExactJson(value) : String(value);
  const oneLine = text.replace(/[\r\n\t]/g, ' ');
  return oneLine.length > MAX_CELL ? `${oneLine.slice(0, MAX_CELL - 1)}…` : oneLine;
}
