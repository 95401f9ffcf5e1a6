import { basename, dirname, join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { SourceDescriptor } from '../sources/source-descriptor';
import { sqlString } from '../duckdb/sql-literal';

/**
 * Rows per project a head file keeps: logs.all's own limit. A query may use heads only when its
 * limit is at most this (the engine checks).
 */
export const HEAD_ROWS_PER_PROJECT = 100;

/** Whether a source's compacted files get heads (its descriptor's `parquet.heads`: logs.all's gateway log). */
export function hasHeads(source: SourceDescriptor): boolean {
  return source.parquet.heads === true;
}

/** The folder of a dataset that holds the heads, beside its `date=` folders. */
export const HEADS_DIR = '_heads';

/**
 * The head of a data file `<root>/date=<day>/<name>`: `<root>/_heads/date=<day>/<name>`, out of
 * the data folders, so a plain glob of the data files (`date=*\/*.parquet`) never counts the newest
 * rows twice (DuckDB, Polars and ClickHouse's `file()` do not skip `_` names inside a folder).
 * Datasets written before keep `date=<day>/_head-<name>`: a head's path is in the commit log, so
 * both layouts are read. Works on absolute paths and on paths relative to the dataset.
 *
 * @example
 * headPathOf('date=2026-11-21/part-00-0.parquet') // '_heads/date=2026-11-21/part-00-0.parquet'
 */
export function headPathOf(dataPath: string): string {
  const day = dirname(dataPath);
  return join(dirname(day), HEADS_DIR, basename(day), basename(dataPath));
}

/** Where earlier versions put a data file's head: `date=<day>/_head-<name>`, beside it. */
export function legacyHeadPathOf(dataPath: string): string {
  return join(dirname(dataPath), `_head-${basename(dataPath)}`);
}

/**
 * The data file (relative, '/'-separated) a head belongs to, from the head's relative path in
 * either layout, or null when the path is not a head's.
 *
 * @example
 * dataPathOfHead('_heads/date=2026-11-21/part-00-0.parquet') // 'date=2026-11-21/part-00-0.parquet'
 */
export function dataPathOfHead(headPath: string): string | null {
  const parts = headPath.split(/[\\/]/);
  if (parts.length === 3 && parts[0] === HEADS_DIR) return `${parts[1]}/${parts[2]}`;
  const legacy = parts.length === 2 ? /^_head-(.+)$/.exec(parts[1]!) : null;
  return legacy ? `${parts[0]}/${legacy[1]}` : null;
}

/** How a head file is written: zstd, row groups small enough that a project's rows sit in one or two. */
export const HEAD_COPY_OPTIONS = 'FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 2048';

/**
 * Writes the head of a Parquet data file: the newest HEAD_ROWS_PER_PROJECT rows of each project
 * (in logs.all's order: timestamp descending, then id), all columns, in small row groups. The
 * newest rows of a project in a file are all in its head, so logs.all's newest-first walk reads a
 * few thousand rows per day instead of decoding the `metadata` of a project's whole row groups.
 * Returns the rows written.
 */
export async function writeHead(connection: DuckDBConnection, source: SourceDescriptor, dataPath: string, headPath: string): Promise<number> {
  // A descriptor's column names are checked lower-case identifiers: written bare.
  const project = source.projectColumn;
  // Ranked on the narrow columns, then the kept rows read whole by their row number: ranking the
  // whole rows held every column of the file in the window (200 MB for a run of 216,000 gateway
  // events, past a 128MB compaction limit) and took 2.4x as long.
  const data = `read_parquet(${sqlString(dataPath)}, file_row_number = true)`;
  const reader = await connection.runAndReadAll(`
    COPY (
      SELECT * EXCLUDE (file_row_number) FROM ${data}
      WHERE file_row_number IN (
        SELECT file_row_number FROM (
          SELECT file_row_number, row_number() OVER (PARTITION BY ${project} ORDER BY timestamp DESC, id ASC NULLS LAST) AS le_rank
          FROM ${data}
        )
        WHERE le_rank <= ${HEAD_ROWS_PER_PROJECT}
      )
      ORDER BY ${project}, timestamp DESC, id
    ) TO ${sqlString(headPath)} (${HEAD_COPY_OPTIONS})`);
  return Number(reader.getRows()[0]?.[0] ?? 0);
}
