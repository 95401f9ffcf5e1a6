import {
  DuckDBTimestampMillisecondsValue,
  DuckDBTimestampNanosecondsValue,
  DuckDBTimestampSecondsValue,
  DuckDBTypeId,
  type DuckDBPreparedStatement,
  type DuckDBResultReader,
  type DuckDBValue,
} from '@duckdb/node-api';
import type { ColumnType } from '../engine';
import { InvalidSqlError } from '../../errors';
import type { CompiledQuery, CompiledStatement, EngineResult, EngineValue } from '../engine';
import { arraysFlagFalse, type SourceFiles } from '../../duckdb/source-relations';
import type { SourceDescriptor } from '../../sources/source-descriptor';
import { bindRequest } from './bind-request';
import { fullQuerySql } from './statement-sql';

type Columns = NonNullable<EngineResult['columns']>;

/**
 * The columns of a caller's SELECT (sandboxed queries), typed the way rows are shaped:
 * timestamps of any precision as `timestamp`, integers, floats and decimals as numbers, booleans,
 * DuckDB's JSON and every nested type (lists, structs, maps) as `json`, anything else as text.
 *
 * @example
 * callerColumns(reader); // [{ name: 'timestamp', type: 'timestamp' }, { name: 'n', type: 'integer' }]
 */
export function callerColumns(reader: DuckDBResultReader): Columns {
  const columns: Columns = [];
  const seen = new Set<string>();
  for (let i = 0; i < reader.columnCount; i++) {
    const name = reader.columnName(i);
    // Rows are objects: a second column of the same name would silently replace the first.
    if (seen.has(name)) throw new InvalidSqlError('query', `Two result columns are named "${name.slice(0, 64)}": give each its own name (AS ...).`);
    seen.add(name);
    columns.push({ name, type: columnType(reader.columnTypeId(i), reader.columnType(i).alias) });
  }
  return columns;
}

/** The rows of a caller's SELECT as engine values of `callerColumns`' types. */
export function callerRows(reader: DuckDBResultReader, columns: Columns): Record<string, EngineValue>[] {
  const nested = columns.some((c, i) => c.type === 'json' && reader.columnTypeId(i) !== DuckDBTypeId.VARCHAR);
  const json = nested ? reader.getRowObjectsJson() : [];
  return reader.getRowObjects().map((row, r) => {
    const out: Record<string, EngineValue> = {};
    columns.forEach((column, i) => {
      const value = row[column.name] ?? null;
      out[column.name] = value === null ? null : engineValue(value, column.type, reader.columnTypeId(i), () => json[r]![column.name]);
    });
    return out;
  });
}

const INTEGER_TYPES = new Set([
  DuckDBTypeId.TINYINT,
  DuckDBTypeId.SMALLINT,
  DuckDBTypeId.INTEGER,
  DuckDBTypeId.BIGINT,
  DuckDBTypeId.HUGEINT,
  DuckDBTypeId.UTINYINT,
  DuckDBTypeId.USMALLINT,
  DuckDBTypeId.UINTEGER,
  DuckDBTypeId.UBIGINT,
  DuckDBTypeId.UHUGEINT,
]);
const TIMESTAMP_TYPES = new Set([DuckDBTypeId.TIMESTAMP, DuckDBTypeId.TIMESTAMP_TZ, DuckDBTypeId.TIMESTAMP_S, DuckDBTypeId.TIMESTAMP_MS, DuckDBTypeId.TIMESTAMP_NS]);
const NESTED_TYPES = new Set([DuckDBTypeId.LIST, DuckDBTypeId.STRUCT, DuckDBTypeId.MAP, DuckDBTypeId.ARRAY, DuckDBTypeId.UNION]);

function columnType(id: DuckDBTypeId, alias: string | undefined): ColumnType {
  if (TIMESTAMP_TYPES.has(id)) return 'timestamp';
  if (INTEGER_TYPES.has(id)) return 'integer';
  if (id === DuckDBTypeId.FLOAT || id === DuckDBTypeId.DOUBLE || id === DuckDBTypeId.DECIMAL) return 'float';
  if (id === DuckDBTypeId.BOOLEAN) return 'boolean';
  if (NESTED_TYPES.has(id) || (id === DuckDBTypeId.VARCHAR && alias?.toUpperCase() === 'JSON')) return 'json';
  return 'text';
}

function engineValue(value: DuckDBValue, type: ColumnType, id: DuckDBTypeId, asJson: () => unknown): EngineValue {
  switch (type) {
    case 'timestamp':
      // Microseconds, whatever the precision (nanoseconds are floored).
      if (value instanceof DuckDBTimestampSecondsValue) return value.seconds * 1_000_000n;
      if (value instanceof DuckDBTimestampMillisecondsValue) return value.millis * 1000n;
      if (value instanceof DuckDBTimestampNanosecondsValue) return value.nanos / 1000n - (value.nanos % 1000n < 0n ? 1n : 0n);
      return (value as { micros: bigint }).micros;
    case 'integer':
      return typeof value === 'bigint' || typeof value === 'number' ? value : String(value);
    case 'float':
      return typeof value === 'number' ? value : Number(String(value));
    case 'boolean':
      return value === true;
    case 'json':
      return id === DuckDBTypeId.VARCHAR ? String(value) : JSON.stringify(asJson());
    default:
      return typeof value === 'string' ? value : String(value);
  }
}

/**
 * Runs a caller's SELECT over the statement's CTEs (docs/sandboxing.md), as a statement prepared
 * by `prepare`: the engine keeps callers' statements apart from the endpoints' own, so a repeated
 * text with other bounds is not prepared again and callers' many texts never push the dashboard's out.
 * Over files whose arrays flag is false on every row (every source's), the text without the arrays
 * half runs when the query has one (`callerArraysFree`): the same answer, planned without that half.
 *
 * @example
 * const { rows, columns } = await executeCaller((sql) => callerStatements.statement(connection, sql), query.statement, query, files);
 */
export async function executeCaller(
  prepare: (sql: string) => Promise<DuckDBPreparedStatement>,
  statement: CompiledStatement,
  query: CompiledQuery,
  files: ReadonlyMap<SourceDescriptor, SourceFiles>,
): Promise<Pick<EngineResult, 'rows' | 'columns'>> {
  const prepared = await prepare(fullQuerySql(statement, files, callerText(query, files), query.callerColumns));
  bindRequest(prepared, query);
  const reader = await prepared.runAndReadAll();
  const columns = callerColumns(reader);
  return { rows: callerRows(reader, columns), columns };
}

/** The caller's text to run over these files: without the arrays half where every source's flag is known false. */
function callerText(query: CompiledQuery, files: ReadonlyMap<SourceDescriptor, SourceFiles>): string | undefined {
  if (query.callerArraysFree === undefined) return query.caller;
  return [...files].every(([, f]) => arraysFlagFalse(f)) ? query.callerArraysFree : query.caller;
}
