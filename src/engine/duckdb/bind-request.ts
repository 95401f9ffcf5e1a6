import { type DuckDBPreparedStatement, DuckDBTimestampValue, BIGINT, DOUBLE, LIST, listValue, TIMESTAMP, VARCHAR, type DuckDBType, type DuckDBValue } from '@duckdb/node-api';
import type { CompiledQuery, EngineParam, EngineValue } from '../engine';
import { InternalError } from '../../util/internal-error';

// Values in and out of DuckDB: a request's parameters bound by name, a row's values as the engine's.

/**
 * Binds a compiled query's parameters (`$max_rows` among them) to a prepared statement of it.
 *
 * @example
 * bindRequest(await connection.prepare(fullQuerySql(query.statement, files)), query);
 */
export function bindRequest(prepared: DuckDBPreparedStatement, query: Pick<CompiledQuery, 'params'>, lists: Readonly<Record<string, readonly string[]>> = {}): void {
  const count = prepared.parameterCount;
  const names = Array.from({ length: count }, (_, i) => prepared.parameterName(i + 1));
  // The engine's own lists of text (narrowed-rollups.ts) beside the request's values.
  const own = names.filter((n) => n in lists);
  const { values, types } = bindings(query.params, count, (i) => names[i - 1]!, new Set(own));
  for (const name of own) {
    values[name] = listValue([...lists[name]!]);
    types[name] = LIST(VARCHAR);
  }
  prepared.bind(values, types);
}

/** Turns named engine parameters into DuckDB values and types, in the statement's own order. */
function bindings(
  params: Readonly<Record<string, EngineParam>>,
  count: number,
  nameOf: (index: number) => string,
  skip: ReadonlySet<string>,
): { values: Record<string, DuckDBValue>; types: Record<string, DuckDBType> } {
  const values: Record<string, DuckDBValue> = {};
  const types: Record<string, DuckDBType> = {};
  for (let i = 1; i <= count; i++) {
    const name = nameOf(i);
    if (skip.has(name)) continue;
    if (!(name in params)) throw new InternalError('unbound_parameter', `No value for query parameter $${name}`);
    const value = params[name];
    if (value === null || value === undefined) {
      values[name] = null;
    } else if (typeof value === 'string') {
      values[name] = value;
      types[name] = VARCHAR;
    } else if (typeof value === 'number') {
      // Whole numbers as BIGINT (declared integer parameters go to 15 digits), others as DOUBLE.
      values[name] = Number.isInteger(value) ? BigInt(value) : value;
      types[name] = Number.isInteger(value) ? BIGINT : DOUBLE;
    } else {
      values[name] = new DuckDBTimestampValue(value.timestamp);
      types[name] = TIMESTAMP;
    }
  }
  return { values, types };
}

/** A DuckDB row as engine values: timestamps as microseconds, other objects (decimals, lists) as text. */
export function toEngineRow(row: Record<string, DuckDBValue>): Record<string, EngineValue> {
  const out: Record<string, EngineValue> = {};
  // for-in, not Object.entries: no pair array per column and row (every query's rows pass here).
  for (const key in row) {
    const value = row[key]!;
    if (value instanceof DuckDBTimestampValue) out[key] = value.micros;
    else if (value === null || typeof value !== 'object') out[key] = value as EngineValue;
    else out[key] = String(value);
  }
  return out;
}
