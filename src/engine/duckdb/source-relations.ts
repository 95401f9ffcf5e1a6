import type { SourceName } from '../engine';
import { emptyNdjsonFile } from './empty-ndjson-file';
import { sqlStringList } from './sql-literal';
import { MARKER_FIELD } from '../../storage/wal/commit-marker';
import { sourceDescriptor } from '../../sources/registry';

/**
 * The relation each source presents to the endpoints' SQL, whatever the files hold: the event's
 * own fields (`timestamp` as TIMESTAMP, UTC, microseconds; `metadata` whole, as JSON) plus the
 * metadata fields its descriptor derives, flattened (src/sources/). It is also the Parquet layout
 * `compact` writes, so reading that layout back needs no JSON parsing.
 */
export function relationOf(source: SourceName): string {
  return sourceDescriptor(source).relation;
}

/** Column name -> DuckDB type of a source's relation, in order. */
function columnsOf(source: SourceName): Record<string, string> {
  return Object.fromEntries(sourceDescriptor(source).columns.map((c) => [c.name, c.duckdb]));
}

/** Where each derived column lives inside `metadata`. */
function metadataPathsOf(source: SourceName): Record<string, string> {
  return Object.fromEntries(sourceDescriptor(source).columns.filter((c) => c.path !== null).map((c) => [c.name, c.path!]));
}

/** Top-level fields read from newline-delimited JSON, with the explicit types given to DuckDB (timestamps as text: le_timestamp reads every form). */
function jsonFieldsOf(source: SourceName): Record<string, string> {
  return Object.fromEntries(sourceDescriptor(source).columns.filter((c) => c.path === null).map((c) => [c.name, c.name === 'timestamp' ? 'VARCHAR' : c.duckdb]));
}

/**
 * SQL condition on a raw line (`json`) that keeps every line but the commit markers that close
 * each group commit of a managed-storage segment (src/storage/wal/commit-marker.ts). Markers are
 * written byte for byte as `{"_wal_commit":...` (and ingest refuses events with that field), so
 * a prefix test finds them. Not a field of from_json's struct filtered afterwards: that stopped
 * DuckDB from pruning the struct and made every NDJSON scan about 30 % slower.
 */
export const NOT_A_COMMIT_MARKER = `(json IS NULL OR NOT starts_with(json, '{"${MARKER_FIELD}":'))`;

/**
 * The instant of an event's `timestamp` (docs/semantics.md, "Timestamps"): a number (or numeric text) since the
 * epoch whose unit follows its magnitude (below 1e11 seconds, a fraction allowed; below 1e14
 * milliseconds; below 1e17 microseconds; otherwise nanoseconds), else an ISO 8601 string (offset
 * optional, UTC when absent). Unusable gives NULL, so the event falls outside every window
 * instead of failing the query. `eventTimestampMicros` in src/time/event-timestamp.ts is the
 * same rule in TypeScript (DECIMAL(38,9) rounds half away from zero; both floor to microseconds).
 */
export const TIMESTAMP_MACROS = [
  // Exact decimal arithmetic throughout: a DECIMAL divided by an integer becomes a DOUBLE in
  // DuckDB, which would cost nanosecond integers their last digits, so they are floored first.
  `CREATE OR REPLACE MACRO le_ns_to_micros(h) AS (h - ((h % 1000) + 1000) % 1000) // 1000`,
  `CREATE OR REPLACE MACRO le_micros_by_magnitude(n) AS
    CASE
      WHEN abs(n) < CAST('100000000000' AS DECIMAL(38,9)) THEN CAST(floor(n * 1000000) AS BIGINT)
      WHEN abs(n) < CAST('100000000000000' AS DECIMAL(38,9)) THEN CAST(floor(n * 1000) AS BIGINT)
      WHEN abs(n) < CAST('100000000000000000' AS DECIMAL(38,9)) THEN CAST(floor(n) AS BIGINT)
      ELSE CAST(le_ns_to_micros(CAST(floor(n) AS HUGEINT)) AS BIGINT)
    END`,
  // The same rule on integers, in BIGINT (most numeric timestamps are integers: the fast path).
  `CREATE OR REPLACE MACRO le_micros_by_magnitude_int(n) AS
    CASE
      WHEN abs(n) < 100000000000 THEN n * 1000000
      WHEN abs(n) < 100000000000000 THEN n * 1000
      WHEN abs(n) < 100000000000000000 THEN n
      ELSE le_ns_to_micros(n)
    END`,
  // Casting text that is not a number to DECIMAL costs DuckDB microseconds per value (ISO text
  // would pay it on every row), so the exact decimal path runs only for text a DOUBLE accepts.
  `CREATE OR REPLACE MACRO le_timestamp(s) AS
    COALESCE(
      -- (DuckDB's cast to BIGINT rounds '12.5': only text without a point or an exponent takes it)
      TRY(make_timestamp(le_micros_by_magnitude_int(
        CASE WHEN NOT (contains(s, '.') OR contains(s, 'e') OR contains(s, 'E')) THEN TRY_CAST(s AS BIGINT) END))),
      CASE WHEN TRY_CAST(s AS DOUBLE) IS NOT NULL
        THEN TRY(make_timestamp(le_micros_by_magnitude(TRY_CAST(s AS DECIMAL(38,9))))) END,
      TRY_CAST(TRY_CAST(s AS TIMESTAMPTZ) AS TIMESTAMP)
    )`,
];

/** SQL of an empty relation with the source's columns. */
function emptyRelation(source: SourceName): string {
  const cols = Object.entries(columnsOf(source)).map(([name, type]) => `CAST(NULL AS ${type}) AS ${name}`);
  return `SELECT ${cols.join(', ')} LIMIT 0`;
}

/** SQL of the relation over newline-delimited JSON files (any compression DuckDB detects). */
function ndjsonRelation(source: SourceName, files: readonly string[], withFilename: boolean): string {
  // Not read_json(columns = ...): with ignore_errors it also drops the valid line after a line cut
  // short where a value was due (after ':' or ','). read_json_objects splits lines first, then
  // from_json types the fields the same way.
  const lines = `read_json_objects(${sqlStringList([...files, emptyNdjsonFile()])}, format = 'newline_delimited',
                               compression = 'auto_detect', ignore_errors = true${withFilename ? ', filename = true' : ''})`;
  return eventsOfLines(source, lines, withFilename);
}

/**
 * SQL of the relation over NDJSON text bound to a parameter (`$<param>`, one event per line): what
 * managed storage's in-memory tables are filled from, typed exactly as the files are read.
 */
export function ndjsonTextRelation(source: SourceName, param: string): string {
  return eventsOfLines(source, `(SELECT json FROM (SELECT unnest(string_split($${param}, chr(10))) AS json) WHERE json <> '')`, false);
}

/** The source's columns from rows of one JSON object each (`json`), marker lines left out. */
function eventsOfLines(source: SourceName, lines: string, withFilename: boolean): string {
  const struct = JSON.stringify(jsonFieldsOf(source));
  const paths = Object.entries(metadataPathsOf(source));
  // One JSON parse of metadata extracts every derived field at once.
  const extract = `json_extract_string(metadata, [${paths.map(([, p]) => `'${p}'`).join(', ')}])`;
  const select = Object.entries(columnsOf(source)).map(([name, type]) => {
    if (name === 'timestamp') return 'le_timestamp(timestamp) AS timestamp';
    const index = paths.findIndex(([n]) => n === name);
    if (index >= 0) return `TRY_CAST(m[${index + 1}] AS ${type}) AS ${name}`;
    return `${name}`;
  });
  if (withFilename) select.push('filename');
  return `SELECT ${select.join(', ')} FROM (
    SELECT *, ${extract} AS m
    FROM (
      SELECT s.*${withFilename ? ', filename' : ''} FROM (
        SELECT from_json(json, '${struct}') AS s${withFilename ? ', filename' : ''}
        FROM ${lines}
        WHERE ${NOT_A_COMMIT_MARKER}
      )
    )
  )`;
}

/** `CREATE TABLE` columns of a source's relation (what an in-memory table of its events holds). */
export function relationColumns(source: SourceName): ReadonlyArray<[name: string, type: string]> {
  return Object.entries(columnsOf(source));
}

/**
 * SQL of the relation over Parquet files. Parquet carries its own schema, so each column is read
 * by its stored type: `timestamp` as TIMESTAMP[TZ] or INT64 microseconds (or text), `metadata`
 * as a STRUCT or JSON text. Flat columns named like the derived ones (`project_ref`,
 * `request_path`, ..., what `compact` writes) are used directly instead of digging in metadata.
 */
function parquetRelation(source: SourceName, files: readonly string[], types: ReadonlyMap<string, string>): string {
  const paths = metadataPathsOf(source);
  const select = Object.entries(columnsOf(source)).map(([name, type]) => {
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
  // Integers and decimals follow the magnitude rule, like numbers in JSON.
  if (/^(U?(TINY|SMALL|BIG|HUGE)?INT(EGER)?|UHUGEINT|DOUBLE|FLOAT|REAL|DECIMAL.*)$/.test(t)) {
    return 'TRY(make_timestamp(le_micros_by_magnitude(TRY_CAST(timestamp AS DECIMAL(38,9)))))';
  }
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
  /** A SELECT of events held in memory (managed storage's in-memory table), with the source's columns. */
  memory?: string;
  /** A condition on the relation's columns that the engine itself adds (two-phase-newest.ts), never a caller's text. */
  where?: string;
}

/**
 * The full relation of one source: its NDJSON part and its Parquet part, one after the other.
 * `withFilename` adds the NDJSON file each row came from (compaction counts per input; NDJSON only).
 */
export function sourceRelation(source: SourceName, files: SourceFiles, options: { withFilename?: boolean } = {}): string {
  const parts: string[] = [];
  if (files.ndjson.length) parts.push(ndjsonRelation(source, files.ndjson, options.withFilename ?? false));
  if (files.parquet.length) parts.push(parquetRelation(source, files.parquet, files.parquetTypes));
  if (files.memory) parts.push(files.memory);
  if (!parts.length) return emptyRelation(source);
  const union = parts.map((p) => `(${p})`).join('\nUNION ALL\n');
  return files.where ? `SELECT * FROM (\n${union}\n) WHERE ${files.where}` : union;
}
