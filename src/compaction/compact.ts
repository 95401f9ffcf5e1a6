import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { SourceDescriptor, SourceName } from '../sources/source-descriptor';
import type { SourceSet } from '../sources/source-set';
import { BUILT_IN_SOURCE_SET } from '../sources/built-ins';
import { openDatabase, type DatabaseSettings } from '../duckdb/open-database';
import { parquetLayoutCopy, typedFieldsWritten } from '../duckdb/parquet-layout';
import { stageRowsSql, stagedCountsSql, stagedRowsRelation } from '../duckdb/staged-rows';
import { sourceRelation } from '../duckdb/source-relations';
import { sqlString, sqlStringList } from '../duckdb/sql-literal';
import { InvalidOptionError, EngineError } from '../errors';
import { appendCommit, checkpointIfDue, readDatasetStateStable, type DataFile, type DatasetState, type InputRecord } from '../dataset/dataset-log';
import { fsyncDir, fsyncFile, unlinkIfPresent } from '../util/durable-fs';
import { fileCrc32 } from '../util/crc32';
import { failpoint } from '../util/failpoint';
import { FileChecks, type SkippedFile } from '../files/file-checks';
import { compileGlob } from '../files/glob';
import { InputIndex, RangeHashes } from '../files/input-coverage';
import { scanInput, type InputScan } from './input-scan';
import { DirectoryCache, listGlob, statOrNull, type ListedFile } from '../files/list-glob';
import { withDatasetLock } from '../dataset/dataset-lock';
import { settleOrphans, type OrphanOutcome, type Provenance } from '../dataset/dataset-orphans';
import { dataDirAround, DataDirLockedError, lockDataDir, type DataDirLock } from '../dataset/data-dir-lock';
import { looksLikeSource } from './source-shape';
import { companionPathsOf, writeCompanions } from '../dataset/stored-rollups';
import { backfillRollups } from './backfill-rollups';

/** Options of `compactLogs`. */
export interface CompactOptions {
  /** Which log the files hold: a built-in source, or one of `sourceDefinitions`. */
  source: SourceName;
  /**
   * Sources of your own, beside the built-ins (descriptors made with `defineSource`, as given to
   * `createEndpoints`): what `source` may name. Default: the built-ins only.
   */
  sourceDefinitions?: readonly SourceDescriptor[];
  /** Glob or list of globs of the NDJSON files to compact (Parquet inputs are ignored). */
  inputs: string | readonly string[];
  /** Folder of the Parquet dataset (`date=YYYY-MM-DD/part-*.parquet` and its log `_compact/`). */
  outDir: string;
  /**
   * Delete each input once all of its bytes are in the dataset, its content verified, and none
   * of its lines was skipped (a file holding broken lines is kept: they exist nowhere else).
   */
  deleteSource?: boolean;
  /** Called as the work advances; `fraction` goes from 0 to 1 within each stage. */
  onProgress?: (progress: { stage: CompactStage; fraction: number }) => void;
  /** Stops the run between steps (and interrupts DuckDB); nothing is committed then. */
  signal?: AbortSignal;
  duckdb?: DatabaseSettings;
  /**
   * Whether the Parquet files get the source's typed fields as columns of their own beside
   * `metadata` (default true; docs/durability.md, "Typed columns"). Answers are the same either way.
   */
  typedColumns?: boolean;
}

export type CompactStage = 'listing' | 'writing' | 'verifying' | 'publishing' | 'deleting';

/** What `compactLogs` did. */
export interface CompactResult {
  /** Input files this run compacted (all of them, or the part that was new). */
  inputFiles: string[];
  /** Events this run wrote (each exactly once). */
  rows: number;
  /** Lines of this run's inputs that were not events (broken JSON, no usable timestamp). */
  skippedLines: number;
  /** Parquet files this run added, relative to `outDir`. */
  files: string[];
  /** True when every byte of the inputs was in the dataset already: nothing was written. */
  alreadyCompacted: boolean;
  /** True when `deleteSource` was asked and every input file is gone now. */
  deletedSource: boolean;
  /** Input files deleted by this run (`deleteSource`). */
  deletedFiles: string[];
  /** With `deleteSource`: inputs kept, and why. */
  keptFiles: Array<{ path: string; reason: string }>;
  /** Inputs that could not be read (damaged, unreadable): left alone, not compacted. */
  skippedFiles: SkippedFile[];
  /**
   * Data files of the dataset that no commit named, and what was done with them: put back into
   * the log (their commit was lost), deleted (a killed run's), or kept (the log is damaged).
   */
  orphans?: OrphanOutcome;
  /**
   * Data files of the dataset that lacked stored rollups (compacted before) and got them in this
   * run's own commit: the upgrade path (docs/definitions.md, "Rollups").
   */
  backfilledFiles?: string[];
}

/**
 * Rewrites NDJSON logs as Parquet in the fast layout (zstd, row groups of the source's size, sorted by project
 * then newest first, one folder per UTC day) inside a dataset with a commit log, so that nothing
 * is ever lost or doubled (docs/semantics.md, "Compacted datasets"): progress is recorded per input (path, byte range and
 * content hash) in the same atomic commit that adds the Parquet files; a rerun compacts only what
 * is new, whatever else joined the glob; a run killed at any instant leaves a state the next run
 * completes; and a query over the NDJSON and the dataset together reads each event once.
 *
 * @example
 * await compactLogs({ source: 'edgeLogs', inputs: 'logs/edge/*.ndjson', outDir: 'logs/edge-parquet', deleteSource: true });
 * const ep = await createEndpoints({ sources: { edgeLogs: ['logs/edge/*.ndjson', 'logs/edge-parquet'] } });
 * await compactLogs({ source: 'authLogs', sourceDefinitions: [authLogs], inputs: 'logs/auth/*.ndjson', outDir: 'logs/auth-parquet' });
 */
export async function compactLogs(options: CompactOptions): Promise<CompactResult> {
  const sources = BUILT_IN_SOURCE_SET.extend(options.sourceDefinitions);
  const source = sources.find(options.source);
  if (!source)
    throw new InvalidOptionError(
      'source',
      `compactLogs: source ${JSON.stringify(options.source)} is not a log source; the sources are ${sources.names.join(', ')} (declare more with defineSource and sourceDefinitions).`,
    );
  const globs = typeof options.inputs === 'string' ? [options.inputs] : [...options.inputs];
  const directories = new DirectoryCache();
  const inputs = new Map<string, ListedFile>();
  for (const glob of globs) {
    for (const file of listGlob(compileGlob(glob), directories).files) if (file.kind === 'ndjson') inputs.set(file.path, file);
  }
  // Inputs or output inside a managed data dir: its lock first, so no running server writes there meanwhile.
  const dataDirs = [...new Set([options.outDir, ...inputs.keys()].map((path) => dataDirAround(path, sources)).filter((d): d is string => d !== null))].sort();
  const locks: DataDirLock[] = [];
  try {
    for (const dir of dataDirs) {
      locks.push(
        await lockDataDir(dir, 'compact').catch((error: unknown) => {
          if (!(error instanceof DataDirLockedError)) throw error;
          throw new EngineError('overloaded', `${error.message} compact would race it: it writes and deletes files there itself (its own compaction).`, { cause: error });
        }),
      );
    }
    const { inputs: _globs, sourceDefinitions: _definitions, ...rest } = options;
    return await compactFiles({ ...rest, source, sources, files: [...inputs.values()] });
  } finally {
    for (const lock of locks.reverse()) await lock.release();
  }
}

/** The one compaction mechanism, over listed files (the CLI's globs, or managed storage's segments). */
export async function compactFiles(
  options: Omit<CompactOptions, 'inputs' | 'source' | 'sourceDefinitions'> & {
    /** The source the files hold. */
    source: SourceDescriptor;
    /** The instance's sources: the shape check says which one a refused input looks like. */
    sources: SourceSet;
    files: ListedFile[];
    /** How an input is removed once compacted (default: deleted from disk). */
    remove?: (paths: string[]) => Promise<void>;
    /** Refuse inputs none of whose events look like the source (default true; off for managed storage). */
    checkShape?: boolean;
    /**
     * With `deleteSource`: keeps the lines of an input that were not events somewhere else
     * (managed storage's quarantine) before the input is removed. Without it such an input is
     * kept, since those lines exist only there.
     */
    setAside?: (path: string, skippedLines: number) => Promise<void>;
    /**
     * The inputs are never written again (managed storage's closed segments): each is read where
     * it is once its scan saw it unchanged, however recently it was written. Default false: a
     * file written lately may be a live log still being appended, so it is read from a copy.
     */
    sealed?: boolean;
  },
): Promise<CompactResult> {
  const outDir = resolve(options.outDir);
  const progress = options.onProgress ?? (() => undefined);
  const result: CompactResult = {
    inputFiles: [],
    rows: 0,
    skippedLines: 0,
    files: [],
    alreadyCompacted: false,
    deletedSource: false,
    deletedFiles: [],
    keptFiles: [],
    skippedFiles: [],
  };
  checkAborted(options.signal);
  return withDatasetLock(outDir, 'compact', async () => {
    let state = readDatasetStateStable(outDir);
    if (state.source !== null && state.source !== options.source.name) {
      throw new InvalidOptionError('source', `${outDir} holds ${state.source} events; it cannot take ${options.source.name} events. Use another --out folder.`);
    }
    state = await cleanUp(outDir, state, options.source, result);

    progress({ stage: 'listing', fraction: 0 });
    const checks = new FileChecks();
    const index = new InputIndex(state.inputs);
    const listed = new Map(options.files.map((f) => [f.path, f]));
    const hashes = new RangeHashes();
    const scans: InputScan[] = [];
    for (const [i, file] of options.files.entries()) {
      checkAborted(options.signal);
      const problem = await checks.check(file);
      if (problem) {
        result.skippedFiles.push(problem);
        continue;
      }
      try {
        scans.push(await scanInput(file, index, listed, hashes));
      } catch (error) {
        // Gone since the listing (rotated, deleted): nothing to compact from it.
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
      progress({ stage: 'listing', fraction: (i + 1) / options.files.length });
    }
    const work = scans.filter((s) => s.end > s.covered);
    const newSkipped = new Map<string, number>();
    if (work.length === 0) {
      result.alreadyCompacted = scans.length > 0;
    } else {
      if (options.checkShape !== false) await checkShape(options.source, options.sources, work);
      const run = await writeRun(outDir, options, work, progress);
      for (const r of run.records) newSkipped.set(r.path, r.skippedLines);
      Object.assign(result, { inputFiles: work.map((w) => w.file.path), rows: run.rows, skippedLines: run.skippedLines, files: run.add.map((f) => f.path) });
      try {
        checkAborted(options.signal);
        failpoint('compact:before-commit', options.source.name);
        const committed = await appendCommit(state, { source: options.source.name, add: run.add, remove: [], inputs: run.records });
        if (!committed) throw new EngineError('storage_failed', `${outDir}: another writer committed to the dataset at the same time; nothing of this run was committed.`);
      } catch (error) {
        // Stopped before its commit (aborted, refused): its published files go, as if never written.
        for (const file of run.add) {
          await unlinkIfPresent(join(outDir, file.path));
          for (const companion of companionPathsOf(file)) await unlinkIfPresent(join(outDir, companion));
        }
        throw error;
      }
      failpoint('compact:after-commit', options.source.name);
      state = readDatasetStateStable(outDir);
      await checkpointIfDue(state);
    }
    checkAborted(options.signal);
    const backfilled = await backfillRollups(readDatasetStateStable(outDir), options.source, options.duckdb);
    if (backfilled.length) result.backfilledFiles = backfilled;
    if (options.deleteSource) await removeCompacted(options, scans, newSkipped, result, progress);
    return result;
  });
}

interface WrittenRun {
  add: DataFile[];
  records: InputRecord[];
  rows: number;
  skippedLines: number;
}

/** What one run reads and where: a whole input read in place, or a copy of the byte range its record claims. */
type ReadPaths = Map<string, InputScan>;

/** What a run needs of compaction's options. */
interface RunOptions {
  source: SourceDescriptor;
  sealed?: boolean;
  signal?: AbortSignal;
  duckdb?: DatabaseSettings;
  typedColumns?: boolean;
}

type Progress = NonNullable<CompactOptions['onProgress']>;

/**
 * Stages the new bytes, writes and counts the Parquet, and publishes it (not yet committed). Its
 * phases, in order: `readPathsOf` (what is read where), `stageRows` (the lines parsed once and
 * counted), `runRecords` (the commit it will append), `writeParquet`, `verifyRun`, `publishRun`.
 */
async function writeRun(outDir: string, options: RunOptions, work: InputScan[], progress: Progress): Promise<WrittenRun> {
  const runId = randomBytes(8).toString('hex');
  const staging = join(outDir, `.compact-${runId}.tmp`);
  await mkdir(join(staging, 'inputs'), { recursive: true });
  const { instance, connection } = await openDatabase(options.duckdb);
  const abort = () => connection.interrupt();
  options.signal?.addEventListener('abort', abort);
  try {
    const readPaths = await readPathsOf(work, staging, options.sealed ?? false);
    const { rowsFile, counts } = await stageRows(connection, options.source, readPaths, staging);
    checkAborted(options.signal);
    const { records, rows } = runRecords(readPaths, counts);
    const out = await writeParquet(connection, options, { runId, rowsFile, staging, provenance: { run: runId, rows, inputs: records } }, progress);
    checkAborted(options.signal);
    progress({ stage: 'verifying', fraction: 0 });
    const { staged, perFile } = await verifyRun(connection, readPaths, out, rows);
    progress({ stage: 'verifying', fraction: 1 });
    checkAborted(options.signal);
    const add = await publishRun(connection, options.source, { outDir, out, staging, staged, perFile, typedColumns: options.typedColumns ?? true }, progress);
    return { add, records, rows, skippedLines: [...counts.values()].reduce((n, c) => n + c.skipped, 0) };
  } finally {
    options.signal?.removeEventListener('abort', abort);
    connection.closeSync();
    instance.closeSync();
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * Exactly the bytes each record will claim are read: a whole input is read in place when it
 * cannot be growing under the run (`readsInPlace`); a file still being appended, or one part of
 * which is already in the dataset, is read from a copy of that byte range in the staging folder.
 */
async function readPathsOf(work: InputScan[], staging: string, sealed: boolean): Promise<ReadPaths> {
  // "Now" on the filesystem's own clock (the staging folder was just made), never this host's:
  // the inputs' mtimes are stamped by that same clock, whoever wrote them.
  const quietBeforeMs = (await stat(staging)).mtimeMs - QUIET_MS;
  const readPaths: ReadPaths = new Map();
  for (const [i, scan] of work.entries()) {
    if (readsInPlace(scan, sealed ? Infinity : quietBeforeMs)) {
      readPaths.set(scan.file.path, scan);
    } else {
      const copy = join(staging, 'inputs', `${i}.ndjson`);
      await copyRange(scan.file.path, scan.covered, scan.end, copy);
      readPaths.set(copy, scan);
    }
  }
  return readPaths;
}

/** How long an input's mtime must lie behind the run's start before it counts as no longer written. */
const QUIET_MS = 2000;

/**
 * Whether compaction reads an input where it is (docs/cli.md, "Compacting logs exactly once"):
 * whole, and compressed, or steady (unchanged from its listing to the end of its scan) and last
 * written before `quietBeforeMs` on the filesystem's clock (a live log appended every second is
 * steady for the instant of a scan, then grows while DuckDB reads it, and the run would commit
 * nothing). Sealed inputs pass `Infinity`: nobody writes them again.
 *
 * @example
 * readsInPlace(await scanInput(file, index, listed, hashes), stagingMtimeMs - 2000); // false for a file appended since its listing
 */
export function readsInPlace(scan: Pick<InputScan, 'covered' | 'end' | 'file' | 'compressed' | 'steady'>, quietBeforeMs: number): boolean {
  const whole = scan.covered === 0 && scan.end === scan.file.size;
  return whole && (scan.compressed || (scan.steady && scan.file.mtimeMs <= quietBeforeMs));
}

/** The lines parsed once, into an unsorted file the counts and the sort read (staged-rows.ts); the events and skipped lines per file read. */
async function stageRows(
  connection: DuckDBConnection,
  source: SourceDescriptor,
  readPaths: ReadPaths,
  staging: string,
): Promise<{ rowsFile: string; counts: Map<string, { rows: number; skipped: number }> }> {
  // A sort of millions of events may not fit in memory: spill inside the staging folder.
  await connection.run(`SET temp_directory = ${sqlString(join(staging, 'spill'))}`);
  const rowsFile = join(staging, 'rows.parquet');
  await connection.run(stageRowsSql(source, sourceRelation(source, { ndjson: [...readPaths.keys()], parquet: [], parquetTypes: new Map() }, { withFilename: true }), rowsFile));
  const counts = new Map<string, { rows: number; skipped: number }>();
  for (const row of (await connection.runAndReadAll(stagedCountsSql(rowsFile))).getRowObjects()) {
    counts.set(String(row.filename), { rows: Number(row.rows), skipped: Number(row.skipped) });
  }
  return { rowsFile, counts };
}

/**
 * The commit this run will append, carried by every file it writes: should the commit be lost,
 * the files still say which inputs they hold (dataset-orphans.ts).
 */
function runRecords(readPaths: ReadPaths, counts: ReadonlyMap<string, { rows: number; skipped: number }>): { records: InputRecord[]; rows: number } {
  const records: InputRecord[] = [];
  for (const [path, scan] of readPaths) {
    const c = counts.get(path) ?? { rows: 0, skipped: 0 };
    records.push({ ...scan.record, rows: c.rows, skippedLines: c.skipped });
  }
  return { records, rows: [...counts.values()].reduce((n, c) => n + c.rows, 0) };
}

/** Writes the staged rows as the dataset's Parquet layout into the staging folder's `out`; returns that folder. */
async function writeParquet(connection: DuckDBConnection, options: RunOptions, run: { runId: string; rowsFile: string; staging: string; provenance: Provenance }, progress: Progress): Promise<string> {
  progress({ stage: 'writing', fraction: 0 });
  const out = join(run.staging, 'out');
  await withQueryProgress(
    connection,
    (fraction) => progress({ stage: 'writing', fraction }),
    () =>
      connection.run(
        parquetLayoutCopy({
          source: options.source,
          relation: stagedRowsRelation(options.source, run.rowsFile),
          target: out,
          // An event without a usable timestamp has no day; it is counted as skipped instead.
          where: 'timestamp IS NOT NULL',
          partitionByDay: { filenamePattern: `part-${run.runId}-{i}` },
          provenance: JSON.stringify(run.provenance),
          typedColumns: options.typedColumns ?? true,
          rows: run.provenance.rows,
        }),
      ),
  );
  progress({ stage: 'writing', fraction: 1 });
  failpoint('compact:written', options.source.name);
  return out;
}

/** Checks the run before it is published: inputs read in place unchanged, and as many rows written as events read. */
async function verifyRun(connection: DuckDBConnection, readPaths: ReadPaths, out: string, rows: number): Promise<{ staged: string[]; perFile: Map<string, number> }> {
  // Files read in place must not have changed while they were read (else the records would lie).
  for (const [path, scan] of readPaths) {
    if (path !== scan.file.path) continue;
    const now = statOrNull(path);
    if (!now || now.size !== scan.file.size || now.mtimeMs !== scan.file.mtimeMs || now.ino !== scan.file.ino) {
      throw new EngineError('storage_failed', `${path} changed while it was compacted; nothing was committed. Run compact again.`);
    }
  }
  const staged = await parquetFilesUnder(out);
  const perFile = new Map<string, number>();
  if (staged.length) {
    for (const row of (await connection.runAndReadAll(`SELECT filename, count(*) AS n FROM read_parquet(${sqlStringList(staged)}, filename = true) GROUP BY filename`)).getRowObjects())
      perFile.set(String(row.filename), Number(row.n));
  }
  const written = [...perFile.values()].reduce((n, c) => n + c, 0);
  if (written !== rows) throw new EngineError('storage_failed', `compact: wrote ${written} rows but read ${rows} events; nothing was committed`);
  return { staged, perFile };
}

/** Publishing: the files move into their day folders, still invisible (no commit names them); returns what the commit adds. */
async function publishRun(
  connection: DuckDBConnection,
  source: SourceDescriptor,
  run: { outDir: string; out: string; staging: string; staged: string[]; perFile: ReadonlyMap<string, number>; typedColumns: boolean },
  progress: Progress,
): Promise<DataFile[]> {
  const { outDir, out, staged } = run;
  const add: DataFile[] = [];
  const touched = new Set<string>([outDir]);
  for (const [i, file] of staged.entries()) {
    const rel = relative(out, file).split(sep).join('/');
    const target = join(outDir, rel);
    const entry: DataFile = { path: rel, rows: run.perFile.get(file) ?? 0, bytes: 0, day: /date=(\d{4}-\d{2}-\d{2})/.exec(rel)?.[1] ?? null };
    Object.assign(entry, typedFieldsWritten(source, run.typedColumns));
    await mkdir(dirname(target), { recursive: true });
    // Its head and stored rollups, in place before the file (none is named until the commit).
    Object.assign(entry, await writeCompanions(connection, source, file, outDir, rel, run.staging));
    await fsyncFile(file);
    entry.crc32 = await fileCrc32(file);
    await rename(file, target);
    touched.add(dirname(target));
    entry.bytes = (await stat(target)).size;
    add.push(entry);
    progress({ stage: 'publishing', fraction: (i + 1) / staged.length });
    failpoint(`compact:publish:${i + 1}`, source.name);
  }
  for (const dir of touched) await fsyncDir(dir);
  return add;
}

/** Deletes (or hands back) every input whose bytes are all in the dataset, verified, and clean. */
async function removeCompacted(
  options: { source: SourceDescriptor; signal?: AbortSignal; remove?: (paths: string[]) => Promise<void>; setAside?: (path: string, skippedLines: number) => Promise<void> },
  scans: InputScan[],
  newSkipped: ReadonlyMap<string, number>,
  result: CompactResult,
  progress: NonNullable<CompactOptions['onProgress']>,
): Promise<void> {
  const eligible: InputScan[] = [];
  for (const scan of scans) {
    const coveredNow = Math.max(scan.covered, scan.end);
    const skipped = scan.coveredSkippedLines + (newSkipped.get(scan.file.path) ?? 0);
    if (coveredNow < scan.file.size) result.keptFiles.push({ path: scan.file.path, reason: 'its last line is not complete yet (still being written)' });
    else if (skipped > 0 && !options.setAside)
      result.keptFiles.push({ path: scan.file.path, reason: `${skipped} of its lines are not events (broken JSON or no usable timestamp); they exist only there` });
    else {
      if (skipped > 0) await options.setAside!(scan.file.path, skipped);
      eligible.push(scan);
    }
  }
  checkAborted(options.signal);
  const done: string[] = [];
  for (const [i, scan] of eligible.entries()) {
    const now = statOrNull(scan.file.path);
    if (!now) continue;
    if (now.size !== scan.file.size || now.ino !== scan.file.ino || now.mtimeMs !== scan.file.mtimeMs) {
      result.keptFiles.push({ path: scan.file.path, reason: 'it changed after it was compacted' });
      continue;
    }
    if (options.remove) await options.remove([scan.file.path]);
    else await unlinkIfPresent(scan.file.path);
    done.push(scan.file.path);
    progress({ stage: 'deleting', fraction: (i + 1) / eligible.length });
    failpoint(`compact:delete:${i + 1}`, options.source.name);
  }
  for (const dir of new Set(done.map((p) => dirname(p)))) await fsyncDir(dir).catch(() => undefined);
  failpoint('compact:deleted', options.source.name);
  result.deletedFiles = done;
  result.deletedSource = result.keptFiles.length === 0 && result.skippedFiles.length === 0;
}

/**
 * What killed runs left (their staging folders), and the data files no commit names: restored,
 * deleted or kept by their provenance (see `settleOrphans`: never deleted while they may hold
 * the only copy of events). Returns the state after it.
 */
async function cleanUp(outDir: string, state: DatasetState, source: SourceDescriptor, result: CompactResult): Promise<DatasetState> {
  for (const entry of await readdir(outDir, { withFileTypes: true })) {
    if (entry.isDirectory() && /^\.compact-[0-9a-f]+\.tmp$/.test(entry.name)) {
      await rm(join(outDir, entry.name), { recursive: true, force: true });
    }
  }
  const settled = await settleOrphans(state, source.name);
  result.orphans = settled.outcome;
  return settled.state;
}

/**
 * Refuses inputs none of whose events look like the source (edge logs compacted as functions),
 * naming the source most of them look like instead. A source without `looksLike` takes anything.
 */
async function checkShape(source: SourceDescriptor, sources: SourceSet, work: InputScan[]): Promise<void> {
  if (!source.looksLike) return;
  const verdict = await looksLikeSource(
    source,
    sources.list,
    work.map((w) => ({ path: w.file.path, start: w.covered, end: w.end, compressed: w.compressed })),
  );
  if (verdict.events > 0 && verdict.matching === 0) {
    const cliName = (d: SourceDescriptor) => d.cli.alias ?? d.name;
    const likely = verdict.others[0];
    throw new InvalidOptionError(
      'source',
      `None of the ${verdict.events} events sampled looks like an event of ${source.name} (${source.relation})` +
        (likely ? `; ${likely.events} look like events of ${likely.source.name} (${likely.source.relation}). Did you mean --source ${cliName(likely.source)}?` : '.') +
        ` Nothing was compacted (--source ${cliName(source)}).`,
    );
  }
}

/** Copies bytes [start, end) of a file (what a record of it claims) to `target`. */
export async function copyRange(path: string, start: number, end: number, target: string): Promise<void> {
  const { createReadStream, createWriteStream } = await import('node:fs');
  const { pipeline } = await import('node:stream/promises');
  await pipeline(createReadStream(path, { start, end: end - 1 }), createWriteStream(target));
}

async function parquetFilesUnder(dir: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { recursive: true, withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.parquet'))
    .map((e) => join(e.parentPath ?? (e as unknown as { path: string }).path, e.name))
    .sort();
}

/** Reports DuckDB's own progress of a long statement while it runs. */
async function withQueryProgress<T>(connection: DuckDBConnection, report: (fraction: number) => void, work: () => Promise<T>): Promise<T> {
  await connection.run('SET enable_progress_bar = true');
  await connection.run('SET enable_progress_bar_print = false');
  const timer = setInterval(() => {
    const { percentage } = connection.progress;
    if (percentage >= 0) report(Math.min(1, percentage / 100));
  }, 200);
  timer.unref();
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

function checkAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new EngineError('closed', 'compact: aborted; nothing was committed and the inputs are untouched', { cause: signal.reason });
}
