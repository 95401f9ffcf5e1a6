import type { SourceDescriptor } from '../sources/source-descriptor';
import { emptyNdjsonFile } from './empty-ndjson-file';
import { sqlStringList } from './sql-literal';
import { MARKER_FIELD } from '../wal-format/commit-marker';
import { typedColumnsOf } from '../sources/typed-fields';
import { columnName } from '../sql/column-name';
import { storedTypedColumnNames, storedTypedColumns, storedTypedOf, withTypedColumns, type StoredTyped } from './typed-columns';

// The relation each source presents to the endpoints' SQL (its descriptor's `relation`), whatever
// the files hold: the event's own fields (`timestamp` as TIMESTAMP, UTC, microseconds; `metadata`
// whole, as JSON) plus the metadata fields its descriptor derives, flattened (src/sources/). It is
// also the Parquet layout `compact` writes, so reading that layout back needs no JSON parsing.
// After those, a source with typed fields has its typed columns (typed-columns.ts): read as stored
// from the Parquet files whose commit records them, computed from `metadata` everywhere else.

/** Column name -> DuckDB type of a source's relation, in order. */
function columnsOf(source: SourceDescriptor): Record<string, string> {
  return Object.fromEntries(source.columns.map((c) => [c.name, c.duckdb]));
}

/** Where each derived column lives inside `metadata`. */
function metadataPathsOf(source: SourceDescriptor): Record<string, string> {
  return Object.fromEntries(source.columns.filter((c) => c.path !== null).map((c) => [c.name, c.path!]));
}

/** Top-level fields read from newline-delimited JSON, with the explicit types given to DuckDB (timestamps as text: le_timestamp reads every form). */
function jsonFieldsOf(source: SourceDescriptor): Record<string, string> {
  return Object.fromEntries(source.columns.filter((c) => c.path === null).map((c) => [c.name, c.name === 'timestamp' ? 'VARCHAR' : c.duckdb]));
}

/**
 * SQL condition on a raw line (`json`) that keeps every line but the commit markers that close
 * each group commit of a managed-storage segment (src/wal-format/commit-marker.ts). Markers are
 * written byte for byte as `{"_wal_commit":...` (and ingest refuses events with that field), so
 * a prefix test finds them. Not a field of from_json's struct filtered afterwards: that stopped
 * DuckDB from pruning the struct and made every NDJSON scan about 30 % slower.
 */
export const NOT_A_COMMIT_MARKER = `(json IS NULL OR NOT starts_with(json, '{"${MARKER_FIELD}":'))`;

/**
 * What JavaScript's `trim()` and `\s` take for whitespace, so the SQL trims exactly what
 * `eventTimestampMicros` does.
 */
const JS_WHITESPACE = String.fromCodePoint(9, 10, 11, 12, 13, 32, 160, 5760, ...Array.from({ length: 11 }, (_, i) => 8192 + i), 8232, 8233, 8239, 8287, 12288, 65279);

/** The texts `eventTimestampMicros` reads, as RE2 patterns (matched whole, whitespace trimmed first). */
const INTEGER_TEXT = '[+-]?[0-9]{1,18}';
const DECIMAL_TEXT = '[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?';
// src/time/iso.ts's pattern with its range checks written out (days per month are DuckDB's cast's).
const DATE = '[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])';
const HOUR = '([01][0-9]|2[0-3])';
const MINUTE = '[0-5][0-9]';
const ISO_TEXT = `${DATE}([T ]${HOUR}:${MINUTE}(:${MINUTE}([.,][0-9]{1,9})?)?)?([Zz]|[+-]${HOUR}(:?${MINUTE})?)?`;
/** 2026-11-21T10:15:02Z, with up to 9 fractional digits: a pattern of digits only, cheap to match. */
const CANONICAL_TEXT = '[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}([.][0-9]{1,9})?Z';
/** The ISO texts DuckDB's cast reads as they are (nearly all): seconds present, '.', 'Z'. */
const ISO_CAST_TEXT = `${DATE}([T ]${HOUR}:${MINUTE}:${MINUTE}([.][0-9]{1,9})?(Z|[+-]${HOUR}(:?${MINUTE})?)?)?`;

/**
 * The instant of an event's `timestamp` (docs/semantics.md, "Timestamps"): a number (or numeric text) since the
 * epoch whose unit follows its magnitude (below 1e11 seconds, a fraction allowed; below 1e14
 * milliseconds; below 1e17 microseconds; otherwise nanoseconds), else an ISO 8601 string (offset
 * optional, UTC when absent), within years 1 to 9999. Unusable gives NULL, so the event falls
 * outside every window instead of failing the query. It is the one reader rule:
 * `eventTimestampMicros` in src/time/event-timestamp.ts is the same rule in TypeScript, which
 * ingest checks, and a test holds the two equal on every form; each text form is matched by the
 * same pattern before DuckDB's cast sees it, since the cast alone reads more than the rule (`0x10`,
 * `2026-1-2`, `+24:00`) and less (`10:00Z`, `,5`, `z`).
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
  // An ISO text the rule reads, in the form DuckDB's cast reads: seconds added where they are
  // missing (a date alone gets midnight when an offset follows), ',' as '.', 'z' as 'Z'.
  `CREATE OR REPLACE MACRO le_iso_text(t) AS
    replace(replace(
      CASE
        WHEN length(t) = 10 THEN t
        WHEN substr(t, 11, 1) NOT IN ('T', ' ') THEN substr(t, 1, 10) || ' 00:00:00' || substr(t, 11)
        WHEN substr(t, 17, 1) <> ':' THEN substr(t, 1, 16) || ':00' || substr(t, 17)
        ELSE t
      END, ',', '.'), 'z', 'Z')`,
  // Microseconds within years 1 to 9999, else NULL.
  `CREATE OR REPLACE MACRO le_micros_in_years(m) AS
    CASE WHEN m BETWEEN -62135596800000000 AND 253402300799999999 THEN m END`,
  `CREATE OR REPLACE MACRO le_iso_cast(t) AS TRY_CAST(TRY_CAST(t AS TIMESTAMPTZ) AS TIMESTAMP)`,
  // Only an offset on the first or last day can carry an instant out of years 1 to 9999.
  `CREATE OR REPLACE MACRO le_iso_in_years(t) AS
    CASE WHEN t >= '0001-01-02' AND t < '9999-12-31' THEN le_iso_cast(t)
         ELSE TRY(make_timestamp(le_micros_in_years(epoch_us(le_iso_cast(t))))) END`,
  // A text without whitespace around it; the patterns decide which cast may read it. The common
  // ISO form goes first (a number fails its pattern at the fifth character).
  `CREATE OR REPLACE MACRO le_timestamp_text(t) AS
    CASE
      WHEN regexp_full_match(t, '${ISO_CAST_TEXT}') THEN le_iso_in_years(t)
      WHEN regexp_full_match(t, '${INTEGER_TEXT}') THEN TRY(make_timestamp(le_micros_in_years(le_micros_by_magnitude_int(CAST(t AS BIGINT)))))
      -- Below a tenth of a nanosecond DuckDB's cast rounds by the first digit alone (9e-20 becomes
      -- 1e-9), and fails past 2^31 exponent digits: such a value is the epoch, as in TypeScript.
      -- The cast to DECIMAL(38,9) costs about 25 µs a value: made once (the lambda's argument),
      -- not once per use of the value in the rule.
      WHEN regexp_full_match(t, '${DECIMAL_TEXT}') THEN
        CASE WHEN abs(TRY_CAST(t AS DOUBLE)) < 1e-10 THEN make_timestamp(0)
             ELSE list_transform([TRY_CAST(t AS DECIMAL(38,9))], n -> TRY(make_timestamp(le_micros_in_years(le_micros_by_magnitude(n)))))[1] END
      WHEN regexp_full_match(t, '${ISO_TEXT}') THEN le_iso_in_years(le_iso_text(t))
    END`,
  // Queries pay for this rule on every NDJSON value, and for the size of its expression: the whole
  // rule for every value (patterns, a trim) made queries over NDJSON up to five times slower. So
  // the two forms loggers write nearly always are told cheaply first: an integer by its round trip
  // through BIGINT (digits only, no leading zero), and 2026-11-21T10:15:02.123456Z by a pattern of
  // digit classes (the cast checks the ranges, but for '24:00:00', which it alone takes). The rest
  // goes through the whole rule once: its text (trimmed only when there is whitespace around it)
  // is a lambda's argument, so the rule's many uses of it do not copy the trim.
  `CREATE OR REPLACE MACRO le_timestamp(s) AS
    CASE
      WHEN CAST(TRY_CAST(s AS BIGINT) AS VARCHAR) = s THEN make_timestamp(le_micros_in_years(le_micros_by_magnitude_int(CAST(s AS BIGINT))))
      WHEN regexp_full_match(s, '${CANONICAL_TEXT}') AND substr(s, 12, 2) < '24' AND s >= '0001' THEN le_iso_cast(s)
      ELSE list_transform([CASE WHEN contains('${JS_WHITESPACE}', left(s, 1)) OR contains('${JS_WHITESPACE}', right(s, 1)) THEN trim(s, '${JS_WHITESPACE}') ELSE s END], t -> le_timestamp_text(t))[1]
    END`,
];

/** SQL of an empty relation with the source's columns (those of `kept`, when given). */
function emptyRelation(source: SourceDescriptor, kept?: ReadonlySet<string>): string {
  const cols = relationColumns(source)
    .filter(([name]) => kept?.has(name) ?? true)
    .map(([name, type]) => `CAST(NULL AS ${type}) AS ${columnName(name)}`);
  return `SELECT ${cols.join(', ')} LIMIT 0`;
}

/** SQL of the relation over newline-delimited JSON files (any compression DuckDB detects). */
function ndjsonRelation(source: SourceDescriptor, files: readonly string[], withFilename: boolean): string {
  // Not read_json(columns = ...): with ignore_errors it also drops the valid line after a line cut
  // short where a value was due (after ':' or ','). read_json_objects splits lines first, then
  // from_json types the fields the same way.
  const lines = `read_json_objects(${sqlStringList([...files, emptyNdjsonFile()])}, format = 'newline_delimited',
                               compression = 'auto_detect', ignore_errors = true${withFilename ? ', filename = true' : ''})`;
  return eventsOfLines(source, lines, withFilename);
}

/**
 * SQL of the relation over NDJSON bytes bound to a parameter (`$<param>`, a BLOB of UTF-8, one
 * event per line): what managed storage's in-memory tables are filled from, typed exactly as the
 * files are read. Bytes, not text: a JS string of the lines cost a UTF-8 decode and encode per
 * batch on the main thread; `decode` turns them into text inside DuckDB. With the source's typed
 * columns, computed once here (the memory tables hold them, so queries read them as stored).
 */
export function ndjsonTextRelation(source: SourceDescriptor, param: string): string {
  return eventsOfLines(source, `(SELECT json FROM (SELECT unnest(string_split(decode($${param}), chr(10))) AS json) WHERE json <> '')`, false);
}

/** The source's columns from rows of one JSON object each (`json`), marker lines left out, then its typed columns. */
function eventsOfLines(source: SourceDescriptor, lines: string, withFilename: boolean): string {
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
  const declared = `SELECT ${select.join(', ')} FROM (
    SELECT *, ${extract} AS m
    FROM (
      SELECT s.*${withFilename ? ', filename' : ''} FROM (
        SELECT from_json(json, '${struct}') AS s${withFilename ? ', filename' : ''}
        FROM ${lines}
        WHERE ${NOT_A_COMMIT_MARKER}
      )
    )
  )`;
  return withTypedColumns(source, declared);
}

/**
 * The columns of a source's relation: its declared columns, then its typed columns (names to quote: `columnName`).
 *
 * @example
 * relationColumns(postgresLogs).at(-1); // ['arrays:metadata', 'BOOLEAN']
 */
export function relationColumns(source: SourceDescriptor): ReadonlyArray<[name: string, type: string]> {
  return [...declaredColumns(source), ...typedColumnsOf(source)];
}

/**
 * A source's declared columns, with their DuckDB types (its typed columns come after them in the
 * relation).
 *
 * @example
 * declaredColumns(edgeLogs)[0]; // ['id', 'VARCHAR']
 */
export function declaredColumns(source: SourceDescriptor): ReadonlyArray<[name: string, type: string]> {
  return Object.entries(columnsOf(source));
}

/**
 * SQL of the relation over Parquet files. Parquet carries its own schema, so each column is read
 * by its stored type: `timestamp` as TIMESTAMP[TZ] or INT64 microseconds (or text), `metadata`
 * as a STRUCT or JSON text. Flat columns named like the derived ones (`project_ref`,
 * `request_path`, ..., what `compact` writes) are used directly instead of digging in metadata.
 */
function parquetRelation(
  source: SourceDescriptor,
  files: readonly string[],
  types: ReadonlyMap<string, string>,
  typedFields: SourceFiles['typedFields'],
  arraysFree: SourceFiles['arraysFree'],
  kept?: ReadonlySet<string>,
): string {
  // Files are read in groups of the same stored typed columns (a file of an older declaration or
  // set of discovered paths has fewer): each group reads what it has and computes the rest. Files
  // whose stored arrays flag is never true are a group of their own, the flag read as false.
  const groups = new Map<string, { files: string[]; stored: StoredTyped; free: boolean }>();
  for (const file of files) {
    const stored = storedTypedOf(source, typedFields?.get(file));
    const free = stored.arrays && (arraysFree?.has(file) ?? false);
    const key = `${stored.arrays}\0${free}\0${[...stored.paths].join('\0')}`;
    const group = groups.get(key) ?? { files: [], stored, free };
    group.files.push(file);
    groups.set(key, group);
  }
  const parts = [...groups.values()].map((g) => {
    const columns = storedTypedColumns(source, types, g.stored, { arraysFree: g.free });
    // Files that hold every typed column: their scan projects only the kept columns (the
    // relation's order is the declared columns, then the typed ones as storedTypedColumns gives them).
    if (kept && columns.length === typedColumnsOf(source).length) return parquetColumns(source, g.files, types, columns, kept);
    return typedKeptOf(source, parquetColumns(source, g.files, types, columns), g.stored, kept);
  });
  return parts.length === 1 ? parts[0]! : parts.map((p) => `(${p})`).join('\nUNION ALL\n');
}

/**
 * The declared columns of Parquet files read together, then `extra` (the typed columns as stored);
 * with `kept` (`extra` then holds every typed column, in relation order), only those columns.
 */
function parquetColumns(source: SourceDescriptor, files: readonly string[], types: ReadonlyMap<string, string>, extra: readonly string[], kept?: ReadonlySet<string>): string {
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
  const names = kept ? relationColumns(source).map(([name]) => name) : [];
  const items = [...select, ...extra].filter((_, i) => !kept || kept.has(names[i]!));
  return `SELECT ${items.join(', ')} FROM read_parquet(${sqlStringList(files)}, union_by_name = true)`;
}

/** `part` (a SELECT of the relation's columns) with only the `kept` ones, in relation order; all when none are given. */
function keptOf(source: SourceDescriptor, part: string, kept: ReadonlySet<string> | undefined): string {
  if (!kept) return part;
  const names = relationColumns(source)
    .filter(([name]) => kept.has(name))
    .map(([name]) => columnName(name));
  return `SELECT ${names.join(', ')} FROM (${part})`;
}

/**
 * `relation` (the declared columns, then the typed columns `stored` names) with every typed column
 * (withTypedColumns), cut to `kept`. When each kept column is one the relation holds, the typed
 * columns it lacks are not written at all: they would be computed from `metadata` only to be
 * dropped, and DuckDB still binds and plans their expressions (the memory tables' part of a live
 * page or hourly usage, which hold none of the fields compaction discovered: docs/performance.md,
 * "The live path's statements cut to what they read").
 */
function typedKeptOf(source: SourceDescriptor, relation: string, stored: StoredTyped, kept: ReadonlySet<string> | undefined): string {
  if (kept) {
    const held = new Set([...declaredColumns(source).map(([name]) => name), ...storedTypedColumnNames(source, stored)]);
    if (relationColumns(source).every(([name]) => !kept.has(name) || held.has(name))) return keptOf(source, relation, kept);
  }
  return keptOf(source, withTypedColumns(source, relation, stored), kept);
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

/**
 * Events held in memory (managed storage's in-memory tables, memory-tables.ts): their SELECT, and
 * the typed fields it holds as columns. A relation's typed column of another field (one
 * compaction discovered, which the tables' source does not declare) is computed over it from `metadata`.
 *
 * @example
 * const memory: MemoryRows = { rows: 'SELECT ... FROM le_memory.edge_logs WHERE le_seq IN (3)', typedFields: edgeLogs.typedFields };
 */
export interface MemoryRows {
  /** The SELECT: the source's declared columns, then the typed columns of `typedFields`. */
  readonly rows: string;
  /** The typed fields held as columns (paths; the arrays flag with any), as a Parquet file's commit records them. */
  readonly typedFields: readonly string[];
  /** The oldest timestamp (microseconds) of the rows, when known: a read bounded before it finds none of them. */
  readonly oldest?: bigint;
  /** True when no row's `metadata` holds a `[` (known from ingest's parse): the arrays flag false on every row. */
  readonly arraysFree?: boolean;
  /** Per rollup the memory holds, the SELECT of its rows over the same rows as `rows` (each insert's rollup, kept with it). */
  readonly rollups?: Readonly<Record<string, string>>;
}

export interface SourceFiles {
  ndjson: string[];
  parquet: string[];
  /** Column name -> DuckDB type of the Parquet files (union by name). */
  parquetTypes: ReadonlyMap<string, string>;
  /**
   * Per Parquet file (as in `parquet`), the typed fields its commit records it has as columns (the
   * dataset log's `typedFields`); a file not here has none, and its typed columns are computed.
   */
  typedFields?: ReadonlyMap<string, readonly string[]>;
  /**
   * Parquet files (as in `parquet`) whose stored arrays flag is never true, by their footers
   * (arrays-free-files.ts): their flag is read as the constant false, so DuckDB plans no read of
   * them for the unnested part of a range (the flag is only ever read as `coalesce(flag, false)`).
   */
  arraysFree?: ReadonlySet<string>;
  /** Events held in memory (managed storage's in-memory tables). */
  memory?: MemoryRows;
  /** SELECTs of rows the engine holds in tables of its own (a day's heads: head-tables.ts), with the source's columns in relation order. */
  held?: readonly string[];
  /**
   * Stored rollups by rollup name: the companions of the Parquet files (`dataFiles`, paths as in
   * `parquet`) that have one; the rollup of the rest is computed (statement-sql.ts, rollupRelation).
   * With `keys`, the companions are not read: the rows of the list bound as `$<param>`, each its
   * value as `column` and every other column NULL, stand for them (`SourceRollup.narrowedBy`).
   */
  stored?: Readonly<Record<string, { companions: string[]; dataFiles: string[]; keys?: { param: string; column: string } }>>;
  /** A condition on the relation's columns that the engine itself adds (two-phase-newest.ts), never a caller's text. */
  where?: string;
  /**
   * Parquet files (besides `parquet`, described in `parquetTypes`) of which only the rows passing
   * `where` are read: the engine's own condition (duckdb-engine.ts: the rows outside the hours the
   * hour counts give), never a caller's text.
   */
  outside?: { parquet: readonly string[]; where: string };
  /**
   * The hour counts a caller's chart reads (src/sources/typed-hourly.ts): the stored rollup
   * `name`'s files, their rows passing `where` (the engine's own condition: the window's whole
   * hours), given to the statement as a relation of that name (statement-sql.ts).
   */
  hourly?: { name: string; companions: readonly string[]; where: string };
}

/**
 * The full relation of one source: its NDJSON part and its Parquet part, one after the other.
 * `withFilename` adds the NDJSON file each row came from (compaction counts per input; NDJSON only).
 * `columns`: only these of its columns, in relation order (what a statement names: the engine's
 * SQL, statement-sql.ts); each Parquet scan then projects only them, which DuckDB plans faster.
 */
export function sourceRelation(source: SourceDescriptor, files: SourceFiles, options: { withFilename?: boolean; columns?: ReadonlySet<string> } = {}): string {
  const kept = options.withFilename ? undefined : options.columns;
  const parts: string[] = [];
  if (files.ndjson.length) parts.push(keptOf(source, ndjsonRelation(source, files.ndjson, options.withFilename ?? false), kept));
  if (files.parquet.length) parts.push(parquetRelation(source, files.parquet, files.parquetTypes, files.typedFields, files.arraysFree, kept));
  if (files.outside?.parquet.length)
    parts.push(keptOf(source, `SELECT * FROM (\n${parquetRelation(source, files.outside.parquet, files.parquetTypes, files.typedFields, files.arraysFree)}\n) WHERE ${files.outside.where}`, kept));
  parts.push(...(files.held ?? []).map((held) => keptOf(source, held, kept)));
  if (files.memory) parts.push(typedKeptOf(source, files.memory.rows, storedTypedOf(source, files.memory.typedFields), kept));
  if (!parts.length) return emptyRelation(source, kept);
  const union = parts.map((p) => `(${p})`).join('\nUNION ALL\n');
  return files.where ? `SELECT * FROM (\n${union}\n) WHERE ${files.where}` : union;
}

/**
 * Whether a source's relation over these files has its arrays flag false on every row, known before
 * any row is read: every part is a Parquet file that reads it as the constant false (`arraysFree`).
 * NDJSON and held rows compute it from each event's `metadata` and the memory tables hold it row
 * by row, so a relation with any of them is not known so, nor is a Parquet file without the
 * stored flag or whose footer says it may be true.
 *
 * @example
 * arraysFlagFalse({ ndjson: [], parquet: ['day.parquet'], parquetTypes, arraysFree: new Set(['day.parquet']) }); // true
 */
export function arraysFlagFalse(files: SourceFiles): boolean {
  if (files.ndjson.length || (files.memory !== undefined && files.memory.arraysFree !== true) || files.held?.length) return false;
  return [...files.parquet, ...(files.outside?.parquet ?? [])].every((file) => files.arraysFree?.has(file) ?? false);
}
