import { readdir, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { SourceDescriptor, SourceName } from '../sources/source-descriptor';
import type { SourceSet } from '../sources/source-set';
import { BUILT_IN_SOURCE_SET } from '../sources/built-ins';
import type { DatabaseSettings } from '../duckdb/open-database';
import { InvalidOptionError, EngineError } from '../errors';
import { appendCommit, checkpointIfDue, readDatasetStateStable, type DatasetState } from '../dataset/dataset-log';
import { fsyncDir, unlinkIfPresent } from '../util/durable-fs';
import { failpoint } from '../util/failpoint';
import { FileChecks, type SkippedFile } from '../files/file-checks';
import { compileGlob } from '../files/glob';
import { InputIndex, RangeHashes } from '../files/input-coverage';
import { scanInput, type InputScan } from './input-scan';
import { DirectoryCache, listGlob, statOrNull, type ListedFile } from '../files/list-glob';
import { withDatasetLock } from '../dataset/dataset-lock';
import { settleOrphans, type OrphanOutcome } from '../dataset/dataset-orphans';
import { dataDirAround, DataDirLockedError, lockDataDir, type DataDirLock } from '../dataset/data-dir-lock';
import { looksLikeSource } from './source-shape';
import { companionPathsOf } from '../dataset/stored-rollups';
import { backfillRollups } from './backfill-rollups';
import { writeRun, type RunStage, type StageParsed } from './write-run';
import { checkAborted } from './check-aborted';
import type { BurstDatabase } from '../duckdb/burst-database';

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

export type CompactStage = 'listing' | RunStage | 'deleting';

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
    /** Stages a run's rows from rows held parsed already (managed storage's memory tables); see `StageParsed`. */
    stageParsed?: StageParsed;
    /** The DuckDB a run uses, kept open across the runs of a burst (managed storage's compactor); default one opened for the run. */
    database?: BurstDatabase;
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
      const run = await writeRun(outDir, { ...options, typedPaths: state.typedPaths }, work, progress);
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
