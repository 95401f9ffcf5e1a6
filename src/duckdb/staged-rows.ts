import type { SourceDescriptor } from '../sources/source-descriptor';
import { declaredColumns } from './source-relations';
import { sqlString } from './sql-literal';
import { withTypedColumns } from './typed-columns';

/**
 * Types a Parquet file gives back to DuckDB as they went in, value for value. Any other scalar
 * column type (a source's own `duckdb` type: HUGEINT, which Parquet turns into a DOUBLE, INTERVAL,
 * which it keeps to the millisecond) is staged as its text and cast back, exact for every scalar
 * type; a nested one (a list, STRUCT, MAP) stays as it is, as the compacted file holds it anyway.
 */
const PARQUET_EXACT = new Set(['VARCHAR', 'JSON', 'DOUBLE', 'BIGINT', 'INTEGER', 'BOOLEAN', 'TIMESTAMP']);

/** Whether a column is staged as its own type (else as its text, cast back when read). */
function stagedAsItself(type: string): boolean {
  const upper = type.toUpperCase();
  return PARQUET_EXACT.has(upper) || /\[|\b(STRUCT|MAP|UNION)\b/.test(upper);
}

/**
 * Compaction parses newline-delimited JSON once into an unsorted Parquet file of the source's
 * relation (and `filename`), then counts and sorts from that file. Why: DuckDB spills a sort of
 * Parquet rows to disk past its memory limit, but a sort fed straight by the JSON reader ran out
 * of memory instead (130 MB of gateway NDJSON: out of memory at a 128MB limit, 731 MB peak RSS at
 * 512MB), and the counting pass no longer parses the JSON a second time.
 *
 * `stageRowsSql` writes the file; `stagedRowsRelation` reads it back with the relation's column
 * names, order and types, ready for `parquetLayoutCopy({ relation })`. The typed columns are not
 * staged: the read back computes them (typed-columns.ts), so a layout without them never parses
 * `metadata` for them, and one with them does so apart from the staging's own parse (an event of
 * hundreds of thousands of keys is parsed by one expression at a time).
 *
 * @example
 * await connection.run(stageRowsSql(edgeLogs, sourceRelation(edgeLogs, files, { withFilename: true }), '/tmp/run/rows.parquet'));
 * const relation = stagedRowsRelation(edgeLogs, '/tmp/run/rows.parquet');
 */
export function stageRowsSql(source: SourceDescriptor, relationWithFilename: string, path: string): string {
  const columns = declaredColumns(source).map(([name, type]) => (stagedAsItself(type) ? name : `CAST(${name} AS VARCHAR) AS ${name}`));
  // lz4: the file lives for one run; a cheap codec keeps it off the disk's way, not small.
  return `COPY (SELECT ${[...columns, 'filename'].join(', ')} FROM (${relationWithFilename})) TO ${sqlString(path)} (FORMAT parquet, COMPRESSION lz4_raw, ROW_GROUP_SIZE 8192)`;
}

/** The staged file's rows as the source's relation (no `filename`); see `stageRowsSql`. */
export function stagedRowsRelation(source: SourceDescriptor, path: string): string {
  const columns = declaredColumns(source).map(([name, type]) => (stagedAsItself(type) ? name : `CAST(${name} AS ${type}) AS ${name}`));
  return withTypedColumns(source, `SELECT ${columns.join(', ')} FROM read_parquet(${sqlString(path)})`);
}

/** The staged file's events (`id` and `metadata`; not the lines without a usable timestamp): what discovery reads (discover-paths.ts). */
export function stagedEventsSql(path: string): string {
  return `SELECT id, metadata FROM read_parquet(${sqlString(path)}) WHERE timestamp IS NOT NULL`;
}

/** The staged file's rows and lines that are not events per NDJSON file it was read from. */
export function stagedCountsSql(path: string): string {
  return `SELECT filename, count(*) FILTER (WHERE timestamp IS NOT NULL) AS rows, count(*) FILTER (WHERE timestamp IS NULL) AS skipped FROM read_parquet(${sqlString(path)}) GROUP BY filename`;
}
