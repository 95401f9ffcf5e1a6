import type { SourceName } from '../engine';
import { sqlStringList } from './sql-literal';

/**
 * The relation each source presents to the queries in queries/duckdb/, whatever the files hold:
 * the event's own fields (`timestamp` as TIMESTAMP, UTC, microseconds; `metadata` whole, as JSON)
 * plus the metadata fields the queries use, flattened. It is also the Parquet layout `compact`
 * writes, so reading that layout back needs no JSON parsing.
 */
export const RELATION_NAME: Record<SourceName, string> = {
  edgeLogs: 'edge_logs',
  functionEdgeLogs: 'function_edge_logs',
};

const COLUMNS: Record<SourceName, Record<string, string>> = {
  edgeLogs: {
    id: 'VARCHAR', timestamp: 'TIMESTAMP', event_message: 'VARCHAR', project: 'VARCHAR',
    metadata: 'JSON', request_path: 'VARCHAR', request_url: 'VARCHAR',
  },
  functionEdgeLogs: {
    id: 'VARCHAR', timestamp: 'TIMESTAMP', event_message: 'VARCHAR', metadata: 'JSON',
    project_ref: 'VARCHAR', function_id: 'VARCHAR', execution_time_ms: 'DOUBLE', status_code: 'INTEGER',
  },
};

/** Where a derived column lives inside `metadata`. */
const METADATA_PATHS: Record<SourceName, Record<string, string>> = {
  edgeLogs: { request_path: '$.request.path', request_url: '$.request.url' },
  functionEdgeLogs: {
    project_ref: '$.project_ref',
    function_id: '$.function_id',
    execution_time_ms: '$.execution_time_ms',
    status_code: '$.response.status_code',
  },
};

/** Top-level fields read from newline-delimited JSON, with the explicit types given to DuckDB. */
const JSON_FIELDS: Record<SourceName, Record<string, string>> = {
  edgeLogs: { id: 'VARCHAR', timestamp: 'VARCHAR', event_message: 'VARCHAR', project: 'VARCHAR', metadata: 'JSON' },
  functionEdgeLogs: { id: 'VARCHAR', timestamp: 'VARCHAR', event_message: 'VARCHAR', metadata: 'JSON' },
};

/**
 * Parses the `timestamp` text of an event: an integer is microseconds since the epoch, anything
 * else an ISO 8601 string (offset optional, UTC when absent). Unparseable gives NULL, so the
 * event falls outside every window instead of failing the query.
 */
export const TIMESTAMP_MACRO = `
CREATE OR REPLACE MACRO le_timestamp(s) AS
  COALESCE(
    TRY(make_timestamp(TRY_CAST(s AS BIGINT))),
    TRY_CAST(TRY_CAST(s AS TIMESTAMPTZ) AS TIMESTAMP)
  )`;

/** SQL of an empty relation with the source's columns. */
function emptyRelation(source: SourceName): string {
  const cols = Object.entries(COLUMNS[source]).map(([name, type]) => `CAST(NULL AS ${type}) AS ${name}`);
  return `SELECT ${cols.join(', ')} LIMIT 0`;
}

/** SQL of the relation over newline-delimited JSON files (any compression DuckDB detects). */
function ndjsonRelation(source: SourceName, files: readonly string[]): string {
  const struct = JSON.stringify(JSON_FIELDS[source]);
  const paths = Object.entries(METADATA_PATHS[source]);
  // One JSON parse of metadata extracts every derived field at once.
  const extract = `json_extract_string(metadata, [${paths.map(([, p]) => `'${p}'`).join(', ')}])`;
  const select = Object.entries(COLUMNS[source]).map(([name, type]) => {
    if (name === 'timestamp') return 'le_timestamp(timestamp) AS timestamp';
    const index = paths.findIndex(([n]) => n === name);
    if (index >= 0) return `TRY_CAST(m[${index + 1}] AS ${type}) AS ${name}`;
    return `${name}`;
  });
  return `SELECT ${select.join(', ')} FROM (
    SELECT *, ${extract} AS m
    FROM (
      -- Not read_json(columns = ...): with ignore_errors it also drops the valid line after a
      -- line cut short where a value was due (after ':' or ','). read_json_objects splits lines
      -- first, then from_json types the fields the same way.
      SELECT s.* FROM (
        SELECT from_json(json, '${struct}') AS s
        FROM read_json_objects(${sqlStringList(files)}, format = 'newline_delimited', compression = 'auto_detect',
                               ignore_errors = true)
      )
    )
  )`;
}

/**
 * SQL of the relation over Parquet files. Parquet carries its own schema, so each column is read
 * by its stored type: `timestamp` as TIMESTAMP[TZ] or INT64 microseconds (or text), `metadata`
 * as a STRUCT or JSON text. Flat columns named like the derived ones (`project_ref`,
 * `request_path`, ..., what `compact` writes) are used directly instead of digging in metadata.
 */
function parquetRelation(source: SourceName, files: readonly string[], types: ReadonlyMap<string, string>): string {
  const paths = METADATA_PATHS[source];
  const select = Object.entries(COLUMNS[source]).map(([name, type]) => {
    const stored = types.get(name);
    // A column stored with the type the queries want is passed through bare, so DuckDB pushes
    // filters on it into the scan and skips row groups by their statistics.
    if (stored?.toUpperCase() === type) return `${quoteIdent(name)} AS ${name}`;
    if (name === 'timestamp') return `${timestampExpression(stored)} AS timestamp`;
    if (name === 'metadata') return stored ? `TRY_CAST(metadata AS JSON) AS metadata` : `CAST(NULL AS JSON) AS metadata`;
    if (stored) return `TRY_CAST(${quoteIdent(name)} AS ${type}) AS ${name}`;
    const path = paths[name];
    if (path && types.has('metadata')) {
      return `TRY_CAST(json_extract_string(TRY_CAST(metadata AS JSON), '${path}') AS ${type}) AS ${name}`;
    }
    return `CAST(NULL AS ${type}) AS ${name}`;
  });
  return `SELECT ${select.join(', ')} FROM read_parquet(${sqlStringList(files)}, union_by_name = true)`;
}

function timestampExpression(stored: string | undefined): string {
  if (!stored) return 'CAST(NULL AS TIMESTAMP)';
  const t = stored.toUpperCase();
  if (t.startsWith('TIMESTAMP') || t === 'DATE') return 'CAST(timestamp AS TIMESTAMP)';
  if (/^(U?(TINY|SMALL|BIG|HUGE)?INT(EGER)?|UHUGEINT)$/.test(t)) return 'TRY(make_timestamp(CAST(timestamp AS BIGINT)))';
  return 'le_timestamp(CAST(timestamp AS VARCHAR))';
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

export interface SourceFiles {
  ndjson: string[];
  parquet: string[];
  /** Column name -> DuckDB type of the Parquet files (union by name). */
  parquetTypes: ReadonlyMap<string, string>;
}

/** The full relation of one source: its NDJSON part and its Parquet part, one after the other. */
export function sourceRelation(source: SourceName, files: SourceFiles): string {
  const parts: string[] = [];
  if (files.ndjson.length) parts.push(ndjsonRelation(source, files.ndjson));
  if (files.parquet.length) parts.push(parquetRelation(source, files.parquet, files.parquetTypes));
  if (!parts.length) return emptyRelation(source);
  return parts.map((p) => `(${p})`).join('\nUNION ALL\n');
}
