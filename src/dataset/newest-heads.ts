import { readdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { SourceDescriptor } from '../sources/source-descriptor';
import { sqlString, sqlStringList } from '../duckdb/sql-literal';
import { withTypedColumns } from '../duckdb/typed-columns';
import { parquetLayoutCopy, sortedLayoutTableSql, type LayoutCopyOptions } from '../duckdb/parquet-layout';

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
const HEAD_COPY_OPTIONS = 'FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 2048';

/** The write's sorted rows, while its files and their heads are written from them (`writeLayoutWithHeads`). */
const SORTED_TABLE = 'le_sorted_rows';

/**
 * Writes data files in the fast layout (`parquetLayoutCopy`) and, for a source with heads, their
 * heads from the same rows: sorted once into a table (`sortedLayoutTableSql`), the files copied
 * from it, then each file's head taken from it into `headsTarget` (one head file, or with
 * `partitionByDay` one per day at the data file's relative path under that folder). No data file
 * is decoded again for its head: that took 35-128 ms of a compaction run of an 8 MiB gateway
 * segment. The rows are in the layout's order (day, project, newest first, then id), so a
 * project's first HEAD_ROWS_PER_PROJECT rows of a day are the newest, ranked as `writeHead` ranks
 * them, and kept in that order: the same rows, order and columns as `writeHead` takes from the
 * file. Returns the rows of each head file by path, or null for a source without heads.
 *
 * A source without heads is written through the sorted table too: a merge of Postgres's log fits
 * more events this way than copied straight from the sort (at 80MB 78,000 against 60,000, at 160MB
 * 240,000 and more against 144,000), and a compaction run takes the same CPU either way
 * (docs/performance.md, "Merges bounded by the memory limit").
 *
 * @example
 * const heads = await writeLayoutWithHeads(connection, { source: edgeLogs, relation, target: 'staging/out', where: 'true', partitionByDay: { filenamePattern: 'part-1f-{i}' } }, 'staging/heads');
 * heads?.get('staging/heads/date=2026-11-21/part-1f-0.parquet'); // 300
 */
export async function writeLayoutWithHeads(
  connection: DuckDBConnection,
  layout: LayoutCopyOptions,
  headsTarget: string,
  /** Told before each statement: which it is, of how many (a caller's progress). */
  onStatement: (statement: number, statements: number) => void = () => undefined,
): Promise<Map<string, number> | null> {
  const heads = hasHeads(layout.source);
  const statements = heads ? 3 : 2;
  try {
    onStatement(0, statements);
    await connection.run(sortedLayoutTableSql(layout, SORTED_TABLE));
    onStatement(1, statements);
    await connection.run(parquetLayoutCopy({ ...layout, sortedTable: SORTED_TABLE }));
    if (!heads) return null;
    onStatement(2, statements);
    return await writeHeadsFromSorted(connection, layout.source, { table: SORTED_TABLE, target: headsTarget, partitionByDay: layout.partitionByDay, typedColumns: layout.typedColumns ?? false });
  } finally {
    // Never in place of the write's own error (an out-of-memory one is retried with more memory);
    // a table left behind is replaced by the next write's.
    await connection.run(`DROP TABLE IF EXISTS ${SORTED_TABLE}`).catch(() => undefined);
  }
}

/** The heads of the files copied from the sorted table, from it (see `writeLayoutWithHeads`). */
async function writeHeadsFromSorted(
  connection: DuckDBConnection,
  source: SourceDescriptor,
  options: { table: string; target: string; partitionByDay?: { filenamePattern: string }; typedColumns: boolean },
): Promise<Map<string, number>> {
  const { table, target } = options;
  const day = options.partitionByDay;
  const project = source.projectColumn;
  // Ranked on the narrow columns, then the kept rows read whole by their row id (see `writeHead`).
  const kept = `
    SELECT * FROM ${table}
    WHERE rowid IN (
      SELECT rowid FROM (SELECT rowid, row_number() OVER (PARTITION BY ${day ? 'date, ' : ''}${project} ORDER BY rowid) AS le_rank FROM ${table})
      WHERE le_rank <= ${HEAD_ROWS_PER_PROJECT}
    )
    ORDER BY rowid`;
  await connection.run(`
    COPY (
      ${options.typedColumns ? withTypedColumns(source, kept) : kept}
    ) TO ${sqlString(target)} (${HEAD_COPY_OPTIONS}${day ? `, PARTITION_BY (date), FILENAME_PATTERN ${sqlString(day.filenamePattern)}, OVERWRITE_OR_IGNORE true` : ''})`);
  const files = day ? await filesUnder(target) : [target];
  const rows = new Map<string, number>();
  if (files.length === 0) return rows;
  for (const row of (await connection.runAndReadAll(`SELECT file_name, num_rows FROM parquet_file_metadata(${sqlStringList(files)})`)).getRows()) rows.set(String(row[0]), Number(row[1]));
  return rows;
}

/** The Parquet files in the day folders of a partitioned write (none when it wrote no row). */
async function filesUnder(target: string): Promise<string[]> {
  const days = await readdir(target, { withFileTypes: true }).catch(() => []);
  const files: string[] = [];
  for (const d of days) if (d.isDirectory()) for (const name of await readdir(join(target, d.name))) if (name.endsWith('.parquet')) files.push(join(target, d.name, name));
  return files;
}

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
