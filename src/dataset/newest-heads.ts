import { basename, dirname, join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { SourceName } from '../sources/source-descriptor';
import { sourceDescriptor } from '../sources/registry';
import { sqlString } from '../duckdb/sql-literal';

/**
 * Rows per project a head file keeps: logs.all's own limit. A query may use heads only when its
 * limit is at most this (the engine checks).
 */
export const HEAD_ROWS_PER_PROJECT = 100;

/** Whether a source's compacted files get heads (its descriptor's `parquet.heads`: logs.all's gateway log). */
export function hasHeads(source: SourceName): boolean {
  return sourceDescriptor(source).parquet.heads === true;
}

/**
 * The head of a data file: `_head-<name>` beside it (hidden by the Hive convention from anyone
 * globbing the folder, so it is never read as data).
 */
export function headPathOf(dataPath: string): string {
  return join(dirname(dataPath), `_head-${basename(dataPath)}`);
}

/**
 * Writes the head of a Parquet data file: the newest HEAD_ROWS_PER_PROJECT rows of each project
 * (in logs.all's order: timestamp descending, then id), all columns, in small row groups. The
 * newest rows of a project in a file are all in its head, so logs.all's newest-first walk reads a
 * few thousand rows per day instead of decoding the `metadata` of a project's whole row groups.
 * Returns the rows written.
 */
export async function writeHead(connection: DuckDBConnection, dataPath: string, headPath: string): Promise<number> {
  const reader = await connection.runAndReadAll(`
    COPY (
      SELECT * EXCLUDE (le_rank) FROM (
        SELECT *, row_number() OVER (PARTITION BY project ORDER BY timestamp DESC, id ASC NULLS LAST) AS le_rank
        FROM read_parquet(${sqlString(dataPath)})
      )
      WHERE le_rank <= ${HEAD_ROWS_PER_PROJECT}
      ORDER BY project, timestamp DESC, id
    ) TO ${sqlString(headPath)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 2048)`);
  return Number(reader.getRows()[0]?.[0] ?? 0);
}
