import type { ColumnSpec } from '../definitions/definition';
import type { EngineValue } from '../engine/engine';
import { formatIsoMicros } from '../time/iso';
import { parseExactJson } from '../util/exact-json';

/** A result row as every entry point shows it (docs/semantics.md, "Values in results"). */
export type Row = Record<string, string | number | boolean | Record<string, unknown> | unknown[] | null>;

/**
 * The one place engine values become result values: timestamps as ISO strings with six
 * fractional digits, counts and times as numbers, metadata as an object. The library, the
 * HTTP formats and the CLI all start from these rows.
 */
export function shapeRows(columns: readonly ColumnSpec[], rows: readonly Record<string, EngineValue>[]): Row[] {
  return rows.map((row) => {
    const out: Row = {};
    for (const column of columns) out[column.name] = shapeValue(column, row[column.name] ?? null);
    return out;
  });
}

/** One engine value as a result value of its column (see `shapeRows`). */
export function shapeValue(column: Pick<ColumnSpec, 'type'>, value: EngineValue): Row[string] {
  if (value === null) return null;
  switch (column.type) {
    case 'timestamp':
      return formatIsoMicros(BigInt(value as bigint | number));
    case 'integer':
    case 'float':
      return Number(value);
    case 'text':
      return String(value);
    case 'boolean':
      return typeof value === 'boolean' ? value : value === 'true' || Number(value) !== 0;
    case 'json':
      return parseJson(value);
  }
}

/** A JSON value as JavaScript: an object (a source's `metadata`), an array, or a scalar (a field a caller's SQL read). */
function parseJson(value: EngineValue): Row[string] {
  if (typeof value !== 'string') return null;
  try {
    // Integers past 2^53 come back as bigint, written as their digits by every format.
    return parseExactJson(value) as Row[string];
  } catch {
    return null;
  }
}
