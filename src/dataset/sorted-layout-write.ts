import { mkdir, rm } from 'node:fs/promises';
import { dirname, join, normalize } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { SourceDescriptor } from '../sources/source-descriptor';
import { sqlString } from '../duckdb/sql-literal';
import { withTypedColumns } from '../duckdb/typed-columns';
import { threadsOf, trimAllocator } from '../duckdb/open-database';
import { dayFilePath, oneThreadGroupRows, parquetLayoutCopy, rowGroupRowsOf, sortedLayoutTableSql, sortedSliceCopy, type LayoutCopyOptions } from '../duckdb/parquet-layout';
import { HEAD_COPY_OPTIONS, HEAD_ROWS_PER_PROJECT, hasHeads } from './newest-heads';

/** The write's sorted rows, while its files and their heads are written from them (`writeSortedLayout`). */
const SORTED_TABLE = 'le_sorted_rows';

/**
 * Writes a dataset's data files: the one write path of compaction's runs and of the merges of a
 * day's files, for every source. The rows are sorted once into a table (`sortedLayoutTableSql`),
 * the files copied from it in the fast layout (`parquetLayoutCopy`), and, for a source with heads,
 * each file's head taken from it into `headsTarget` (one head file, or with `partitionByDay` one
 * per day at the data file's relative path under that folder). Returns the rows of each head file
 * by path, or null for a source without heads.
 *
 * Why the table: no data file is decoded again for its head (that took 35-128 ms of a compaction
 * run of an 8 MiB gateway segment), and a merge fits more events through it than copied straight
 * from the sort (Postgres's log at 80MB: 78,000 against 60,000; at 160MB 240,000 and more against
 * 144,000), for the same CPU per run (docs/performance.md, "Merges bounded by the memory limit").
 * The rows are in the layout's order (day, project, newest first, then id), so a project's first
 * HEAD_ROWS_PER_PROJECT rows of a day are its newest, ranked as `writeHead` ranks them, and kept in
 * that order: the same rows, order and columns as `writeHead` takes from a file.
 *
 * @example
 * const heads = await writeSortedLayout(connection, { source: edgeLogs, relation, target: 'staging/out', where: 'true', partitionByDay: { filenamePattern: 'part-1f-{i}' } }, 'staging/heads');
 * heads?.get('staging/heads/date=2026-11-21/part-1f-0.parquet'); // 300
 */
export async function writeSortedLayout(
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
    await connection.run(parquetLayoutCopy(await sortedTableCopy(connection, layout)));
    if (!heads) return null;
    onStatement(2, statements);
    return await writeHeadsFromSorted(connection, layout.source, { table: SORTED_TABLE, target: headsTarget, partitionByDay: layout.partitionByDay, typedColumns: layout.typedColumns ?? false });
  } finally {
    // Never in place of the write's own error (an out-of-memory one is retried with more memory);
    // a table left behind is replaced by the next write's.
    await connection.run(`DROP TABLE IF EXISTS ${SORTED_TABLE}`).catch(() => undefined);
  }
}

/**
 * How the sorted table is copied. On one thread (compaction's DuckDB), its rows of one day are
 * written as one file (`partitionByDay.day`, the common run: a write-ahead segment holds minutes)
 * with dictionaries sized to the groups one thread writes from a table (`oneThreadGroupRows`):
 * both lower what the COPY holds (docs/performance.md, "A run of one day written as one file"),
 * and the files are the same. On more threads, DuckDB's parallel writer of one file may combine
 * row groups (a day of 33,000 Postgres events came out as one group of 33,000 rows instead of
 * 32,768 and 232), so the partitioned writer, which kept them there, stays.
 */
async function sortedTableCopy(connection: DuckDBConnection, layout: LayoutCopyOptions): Promise<LayoutCopyOptions> {
  const copy: LayoutCopyOptions = { ...layout, sortedTable: SORTED_TABLE };
  if ((await threadsOf(connection)) !== 1) return copy;
  const groupRows = oneThreadGroupRows(rowGroupRowsOf(layout.source, layout.rowBytes), 'table');
  if (!layout.partitionByDay) return { ...copy, groupRows };
  const days = (await connection.runAndReadAll(`SELECT DISTINCT date FROM ${SORTED_TABLE} LIMIT 2`)).getRows();
  if (days.length !== 1) return copy;
  const partitionByDay = { ...layout.partitionByDay, day: String(days[0]![0]) };
  await mkdir(dirname(dayFilePath(layout.target, partitionByDay)), { recursive: true });
  return { ...copy, partitionByDay, groupRows };
}

/**
 * Writes one data file from rows already cut into `slices` (merge-slices.ts): each slice sorted
 * into a file of its own under `sliceDir` (`sortedSliceCopy`), then the file copied from them in
 * order in the fast layout (`parquetLayoutCopy({ sortedFiles })`); each slice file is deleted once
 * copied. Why: a merge of a day's files through `writeSortedLayout` sorts all its rows at once,
 * and what that needs grows with them (a day of 400,000 gateway events did not fit 80MB), so a
 * busy day stayed in several files; sorted a slice at a time, a merge holds one slice's sort, and
 * the copy streams. The head is not taken here: the caller writes it from the file
 * (`writeCompanions`), as the rows are in no table. One slice (`['true']`) is `writeSortedLayout`'s
 * work: callers use that then.
 *
 * @example
 * await writeSlicedLayout(connection, { source: edgeLogs, files, target: 'staging/merged.parquet', where: 'true' }, ["project <= 'm'", "project > 'm'"], 'staging/slices');
 */
export async function writeSlicedLayout(connection: DuckDBConnection, layout: LayoutCopyOptions, slices: readonly string[], sliceDir: string): Promise<void> {
  await mkdir(sliceDir, { recursive: true });
  const files = slices.map((_, i) => join(sliceDir, `slice-${i}.parquet`));
  const threads = await threadsOf(connection);
  // One thread writes each file from files: its groups are bounded, and so its dictionaries.
  const copy = threads === 1 ? { ...layout, groupRows: oneThreadGroupRows(rowGroupRowsOf(layout.source, layout.rowBytes), 'files') } : layout;
  for (const [i, slice] of slices.entries()) await connection.run(sortedSliceCopy(copy, slice, files[i]!));
  // What the sorts freed goes back before the copy allocates its own: held by DuckDB's allocator,
  // it stayed under the copy's memory (docs/performance.md, "A day's merge in smaller slices").
  await trimAllocator(connection, threads);
  await connection.run(parquetLayoutCopy({ ...copy, sortedFiles: files }));
  await rm(sliceDir, { recursive: true, force: true });
}

/**
 * The heads of the files copied from the sorted table, from it (see `writeSortedLayout`). The
 * COPY itself says which files it wrote and their rows (`RETURN_STATS`): no walk of the day
 * folders, no footer read back.
 */
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
  const written = await connection.runAndReadAll(`
    COPY (
      ${options.typedColumns ? withTypedColumns(source, kept) : kept}
    ) TO ${sqlString(target)} (${HEAD_COPY_OPTIONS}${day ? `, PARTITION_BY (date), FILENAME_PATTERN ${sqlString(day.filenamePattern)}, OVERWRITE_OR_IGNORE true` : ''}, RETURN_STATS true)`);
  // Paths as the callers join them (the COPY names a partition's file `<target>/date=<day>/<name>`).
  return new Map(written.getRowObjects().map((row) => [normalize(String(row.filename)), Number(row.count)]));
}
