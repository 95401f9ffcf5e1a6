import type { DuckDBConnection } from '@duckdb/node-api';
import { ARRAYS_COLUMN } from '../sources/typed-fields';
import { sqlString, sqlStringList } from './sql-literal';

// A typed file's arrays flag (`arrays:metadata`, whether an event's `metadata` text holds a `[`)
// is what splits an unnested range in two (src/bigquery/print-duckdb.ts): the rows without one,
// read from the typed columns, and the others, unnested from `metadata`. Most files have no such
// row, yet DuckDB scanned each of them a second time for the second part (its row groups are not
// skipped by a boolean's statistics). Their footers say so once: such a file's flag is read as the
// constant false, and DuckDB drops the second part of those files when it plans the query. Files
// written since the commit log records the fact (`DataFile.arraysFree`) are not asked: only the
// entries written before it.

/**
 * The Parquet files among `files` whose stored arrays flag is never true, by their footers'
 * statistics: every row group's flag has `false` for its maximum, or is NULL on every row. A file
 * without the column, or without statistics for it, is not among them.
 *
 * @example
 * await arraysFreeFiles(connection, ['day.parquet']); // Set { 'day.parquet' }
 */
export async function arraysFreeFiles(connection: DuckDBConnection, files: readonly string[]): Promise<Set<string>> {
  if (!files.length) return new Set();
  // Every row group must say so (a group without the column, or without its statistics, says nothing).
  const reader = await connection.runAndReadAll(
    `SELECT file_name, count(DISTINCT row_group_id) AS groups,
       count(DISTINCT row_group_id) FILTER (WHERE path_in_schema = ${sqlString(ARRAYS_COLUMN)}
         AND (coalesce(stats_max_value, stats_max) = 'false' OR stats_null_count = row_group_num_rows)) AS free_groups
     FROM parquet_metadata(${sqlStringList(files)})
     GROUP BY file_name`,
  );
  return new Set(reader.getRowObjects().flatMap((row) => (Number(row.groups) > 0 && Number(row.free_groups) === Number(row.groups) ? [String(row.file_name)] : [])));
}
