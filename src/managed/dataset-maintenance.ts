import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { SourceDescriptor, SourceName } from '../sources/source-descriptor';
import { openDatabase, type DatabaseSettings } from '../duckdb/open-database';
import { arraysAggregate, arraysFreeWritten, parquetLayoutOf, typedFieldsWritten } from '../duckdb/parquet-layout';
import { withTypedPaths } from '../sources/typed-fields';
import { parquetSchema } from '../duckdb/parquet-schema';
import { parquetRowBytes } from '../duckdb/parquet-row-bytes';
import { sqlString, sqlStringList } from '../duckdb/sql-literal';
import { appendCommit, checkpointIfDue, readDatasetStateStable, type DataFile, type DatasetState } from '../dataset/dataset-log';
import { withDatasetLock } from '../dataset/dataset-lock';
import type { Provenance } from '../dataset/dataset-orphans';
import { fsyncDir, fsyncFile, unlinkIfPresent } from '../util/durable-fs';
import { fileCrc32 } from '../util/crc32';
import { failpoint } from '../util/failpoint';
import { HEADS_DIR } from '../dataset/newest-heads';
import { writeSlicedLayout, writeSortedLayout } from '../dataset/sorted-layout-write';
import { mergeCells, mergeSlices } from '../dataset/merge-slices';
import { sourceRelation } from '../duckdb/source-relations';
import { companionPathsOf, ROLLUPS_DIR, writeCompanions } from '../dataset/stored-rollups';
import { headFromInputHeads } from '../dataset/merged-head';
import { filesToMerge, settledFilesToMerge } from './merge-policy';
import { EngineError } from '../errors';

/**
 * Merges a day's small Parquet files (each background compaction of a few segments writes one)
 * by size (merge-policy.ts), each merge into one file in the fast layout, so a query opens a few
 * files per day, not hundreds. One commit adds the merged file and removes the files it replaces;
 * they are deleted after it (a query still on the previous state finds them gone and lists again).
 * A day `settled` says is over has its small files merged into one instead (one such day a call:
 * `settledLeft` tells whether another waits). No merge takes more than `bound.maxRows` events
 * (what fits its DuckDB's memory limit, `mergeRowsFor`; unbounded by default): a day whose files
 * do not fit one merge is merged in parts, smallest first. `bound.merging` is told each merge's
 * events before it starts, so a caller knows which one ran out of memory. Returns the number of
 * files merged away, and the events the merges wrote again (`mergedRows`: each merge's events,
 * so an event merged twice counts twice).
 */
export async function mergeSmallFiles(
  root: string,
  source: SourceDescriptor,
  duckdb: DatabaseSettings = {},
  settled: (day: string) => boolean = () => false,
  typedColumns = true,
  bound: MergeBound = {},
): Promise<{ merged: number; mergedRows: number; settledLeft: boolean }> {
  const maxRows = bound.maxRows ?? Infinity;
  let mergedRows = 0;
  const merge = async (state: DatasetState, day: string, files: DataFile[]) => {
    const rows = files.reduce((n, f) => n + f.rows, 0);
    bound.merging?.(rows);
    const next = await mergeDay(state, source, day, files, duckdb, typedColumns, bound.sliceRows ?? Infinity);
    mergedRows += rows;
    return next;
  };
  return withDatasetLock(root, 'merge', async () => {
    let current = readDatasetStateStable(root);
    const days = new Set([...current.files.values()].map((f) => f.day).filter((d): d is string => d !== null));
    let merged = 0;
    let settledMerges = 0;
    let settledLeft = false;
    const filesOf = (day: string) => [...current.files.values()].filter((f) => f.day === day);
    // Newest first: the days read most.
    for (const day of [...days].sort().reverse()) {
      // A settled day's small files become one (merge-policy.ts); a day still written merges by size.
      // One settled day a run: a store that starts with many (written before this rule) catches
      // up over its runs, and compaction of new segments never waits behind all of them.
      const whole = settled(day) ? settledFilesToMerge(filesOf(day), maxRows) : [];
      if (whole.length && settledMerges >= 1) settledLeft = true;
      else if (whole.length) {
        // In parts when they do not fit one merge: each part is merged, until no two files fit one.
        for (let part = whole; part.length; part = settledFilesToMerge(filesOf(day), maxRows)) {
          current = await merge(current, day, part);
          merged += part.length;
        }
        settledMerges++;
        continue;
      }
      // A merge's file may merge again with the day's others (two of one size make one of twice
      // it). Each merge leaves a file less, so a day of n files takes fewer than n of them.
      for (let round = 0; round < 64; round++) {
        const files = filesToMerge(filesOf(day), maxRows);
        if (!files.length) break;
        current = await merge(current, day, files);
        merged += files.length;
      }
    }
    return { merged, mergedRows, settledLeft };
  });
}

/** How far one merge goes (`mergeSmallFiles`). */
export interface MergeBound {
  /** Events one merge takes at most (default: no bound). */
  maxRows?: number;
  /**
   * Events one merge sorts at once (default: all of them): a merge of more is sorted in slices of
   * at most this many (merge-slices.ts), so it fits the memory of one slice whatever its size.
   */
  sliceRows?: number;
  /** Told the events of each merge's files before it starts. */
  merging?: (rows: number) => void;
}

async function mergeDay(state: DatasetState, declared: SourceDescriptor, day: string, files: DataFile[], duckdb: DatabaseSettings, typedColumns: boolean, sliceRows: number): Promise<DatasetState> {
  // The merged file gets every typed field the dataset holds, as compaction writes them.
  const source = typedColumns ? withTypedPaths(declared, state.typedPaths) : declared;
  const root = state.root;
  const runId = randomBytes(8).toString('hex');
  const staging = join(root, `.compact-${runId}.tmp`);
  const name = `date=${day}/part-${runId}-0.parquet`;
  await mkdir(staging, { recursive: true });
  const { connection, close } = await openDatabase(duckdb);
  try {
    const paths = files.map((f) => join(root, f.path));
    const staged = join(staging, 'merged.parquet');
    await connection.run(`SET temp_directory = ${sqlString(join(staging, 'spill'))}`);
    const rows = files.reduce((n, f) => n + f.rows, 0);
    // Should the merge's commit be lost after the small files are deleted, the merged file says what it replaces.
    const provenance: Provenance = { run: runId, rows, replaces: files.map((f) => f.path) };
    // Its head written from the rows it sorts, as compaction writes a run's (sorted-layout-write.ts).
    const stagedHead = join(staging, 'merged-head.parquet');
    const layout = {
      source,
      files: {
        ndjson: [],
        parquet: paths,
        parquetTypes: await parquetSchema(connection, paths),
        // Files that have the typed columns give them as they are; the others' are computed.
        typedFields: new Map(files.flatMap((f, i) => (f.typedFields ? [[paths[i]!, f.typedFields] as const] : []))),
      },
      target: staged,
      where: 'true',
      provenance: JSON.stringify(provenance),
      typedColumns,
      rows,
      rowBytes: await parquetRowBytes(connection, paths),
    };
    // More events than one sort fits: sorted a slice at a time (merge-slices.ts), the head then
    // written from the file; otherwise sorted at once, the head taken from the sorted rows.
    const { projectColumn } = parquetLayoutOf(source);
    const slices = rows > sliceRows ? mergeSlices(await mergeCells(connection, sourceRelation(source, layout.files), 'true', projectColumn), projectColumn, sliceRows) : ['true'];
    const heads = slices.length > 1 ? (await writeSlicedLayout(connection, layout, slices, join(staging, 'slices')), null) : await writeSortedLayout(connection, layout, stagedHead);
    // The same count tells its arrays flag (what the commit records: `arraysFreeWritten`).
    const [count] = (await connection.runAndReadAll(`SELECT count(*) AS n${arraysAggregate(source, typedColumns)} FROM read_parquet(${sqlStringList([staged])})`)).getRowObjects();
    if (Number(count?.n) !== rows) throw new EngineError('storage_failed', `merge: wrote ${Number(count?.n)} rows of ${rows}; nothing was committed`);
    // Its head and stored rollups, written as compaction writes them (one path: stored-rollups.ts).
    // Sorted in slices, the head comes from the inputs' heads (merged-head.ts), else from the file.
    const headRows = heads?.get(stagedHead);
    const inputs = files.map((f, i) => ({ data: paths[i]!, head: f.head && join(root, f.head.path), typedFields: f.typedFields }));
    const head =
      headRows === undefined ? (slices.length > 1 && (await headFromInputHeads(connection, source, inputs, staged, stagedHead, typedColumns))) || true : { path: stagedHead, rows: headRows };
    const companions = await writeCompanions(connection, source, staged, root, name, staging, { head });
    await fsyncFile(staged);
    const crc32 = await fileCrc32(staged);
    await rename(staged, join(root, name));
    await fsyncDir(join(root, `date=${day}`));
    const add: DataFile = {
      path: name,
      rows,
      bytes: (await stat(join(root, name))).size,
      crc32,
      day,
      ...companions,
      ...typedFieldsWritten(source, typedColumns),
      ...arraysFreeWritten(source, typedColumns, count?.arrays),
    };
    failpoint('merge:written', source.name);
    if (!(await appendCommit(state, { source: source.name, add: [add], remove: files.map((f) => f.path), inputs: [] }))) {
      throw new EngineError('storage_failed', `${root}: another writer committed at the same time; the merge was not committed`);
    }
    failpoint('merge:after-commit', source.name);
    for (const [i, file] of files.entries()) {
      await removeDataFile(root, file);
      failpoint(`merge:deleted:${i + 1}`, source.name);
    }
    failpoint('merge:deleted', source.name);
    const next = readDatasetStateStable(root);
    await checkpointIfDue(next);
    return next;
  } finally {
    await close();
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * Deletes the days before `firstKeptDay` (retention): one commit removes their files, then they
 * are deleted. Returns the number of files removed.
 */
export async function dropDaysBefore(root: string, source: SourceDescriptor, firstKeptDay: string): Promise<number> {
  return withDatasetLock(root, 'retention', async () => {
    const state = readDatasetStateStable(root);
    const old = [...state.files.values()].filter((f) => f.day !== null && f.day < firstKeptDay);
    if (old.length === 0) return 0;
    if (!(await appendCommit(state, { source: source.name, add: [], remove: old.map((f) => f.path), inputs: [] }))) return 0;
    failpoint('retention:after-commit', source.name);
    for (const [i, file] of old.entries()) {
      await removeDataFile(root, file);
      failpoint(`retention:deleted:${i + 1}`, source.name);
    }
    // The day folders go too when nothing else is in them (and their heads' folders).
    for (const day of new Set(old.map((f) => f.day))) {
      await rmdir(join(root, `date=${day}`)).catch(() => undefined);
      await rmdir(join(root, HEADS_DIR, `date=${day}`)).catch(() => undefined);
      for (const rollup of Object.keys(source.rollups)) await rmdir(join(root, ROLLUPS_DIR, rollup, `date=${day}`)).catch(() => undefined);
    }
    await checkpointIfDue(readDatasetStateStable(root));
    return old.length;
  });
}

/**
 * Forgets the input records of files that no longer exist (write-ahead segments deleted after
 * their compaction), so the log stays small. Safe: a name is never reused, and a record is only
 * forgotten once its file is gone, so no reader can list the file and then miss the record.
 */
export async function forgetDeletedInputs(root: string, source: SourceName, belowPrefix: string, atLeast = 64): Promise<number> {
  return withDatasetLock(root, 'forget', async () => {
    const state = readDatasetStateStable(root);
    const gone = [...new Set(state.inputs.map((r) => r.path))].filter((p) => p.startsWith(belowPrefix) && !existsSync(p));
    if (gone.length < atLeast) return 0;
    if (!(await appendCommit(state, { source, add: [], remove: [], inputs: [], forget: gone }))) return 0;
    failpoint('forget:after-commit', source);
    await checkpointIfDue(readDatasetStateStable(root));
    return gone.length;
  });
}

/** Deletes a data file that a commit removed, and its companions (head, stored rollups). */
async function removeDataFile(root: string, file: DataFile): Promise<void> {
  await unlinkIfPresent(join(root, file.path));
  for (const companion of companionPathsOf(file)) await unlinkIfPresent(join(root, companion));
}
