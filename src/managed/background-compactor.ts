import { dirname, join, sep } from 'node:path';
import type { SourceDescriptor } from '../sources/source-descriptor';
import type { SourceSet } from '../sources/source-set';
import { memoryLimitBytes, type DatabaseSettings } from '../duckdb/open-database';
import { compactFiles, type CompactResult } from '../compaction/compact';
import type { StageParsed } from '../compaction/write-run';
import { statOrNull, type ListedFile } from '../files/list-glob';
import { dropDaysBefore, forgetDeletedInputs, mergeSmallFiles } from './dataset-maintenance';
import { SerialRuns } from '../util/serial-runs';
import { BurstDatabase } from '../duckdb/burst-database';
import { isDuckDBOutOfMemory, withMemoryRetry } from '../duckdb/memory-retry';
import { partitionDay } from '../files/file-kinds';
import { monotonicMs } from '../time/clock';
import { unitMs } from '../time/units';
import { daySettled, SETTLE_QUIET_MS } from './merge-policy';

/** The part of the write-ahead log the compactor needs. */
export interface CompactableLog {
  /** Segments that take no more appends, oldest first. */
  closedSegments(): ReadonlyArray<{ path: string }>;
  /** Deletes segments whose events are committed to the dataset. */
  release(paths: readonly string[]): Promise<void>;
  /** Called when a segment closes; returns an unsubscribe function. */
  onSegmentClosed(listener: () => void): () => void;
  /** Checks a closed segment against its checksums (damaged bytes set aside) before it is compacted. */
  verify?(path: string): Promise<unknown>;
}

export interface BackgroundCompactorOptions {
  source: SourceDescriptor;
  /** The instance's sources (compaction's one mechanism takes them). */
  sources: SourceSet;
  /** The dataset folder (`<dataDir>/<source>/parquet`). */
  datasetDir: string;
  /** The write-ahead log's folder, whose segments the dataset's records name. */
  walDir: string;
  wal: CompactableLog;
  /** Days older than this are deleted (retention). */
  retentionDays: number;
  /** The wall clock retention is measured with. */
  now: () => Date;
  duckdb?: DatabaseSettings;
  /** Whether the Parquet files get the source's typed columns (default true; docs/durability.md, "Typed columns"). */
  typedColumns?: boolean;
  /** A run that failed; it is tried again after `retryMs`. */
  onError: (error: unknown) => void;
  onCompacted?: (result: CompactResult) => void;
  /** Keeps a segment's lines that are no events elsewhere (the quarantine), so it can be released. */
  setAside?: (path: string, skippedLines: number) => Promise<void>;
  /** Pause before retrying after a failure, and between retention checks (default 30 s). */
  retryMs?: number;
  /** Elapsed milliseconds (default the monotonic clock): how long ago a compaction last wrote a file of a day. */
  elapsedMs?: () => number;
  /**
   * The lane a run waits in (default: none, it runs at once). Managed storage gives every source's
   * compactor one lane, so the process holds one compaction DuckDB at a time (its memory budget).
   */
  lane?: <T>(work: () => Promise<T>) => Promise<T>;
  /**
   * Segment bytes one run takes at most, oldest first (always one segment at least); the rest go
   * in the runs right after. Default: half the run's DuckDB memory limit (`runBytesFor`).
   */
  maxRunBytes?: number;
  /**
   * Events one merge of a day's files takes at most; the day is merged in parts past it. Default:
   * no bound (a merge sorts its rows in slices of `mergeSliceRows`, so its size does not decide
   * what it needs); after a merge that ran out of memory at the retry's ceiling, half its events.
   */
  maxMergeRows?: number;
  /** Events a merge sorts at once (`MergeBound.sliceRows`). Default: what fits the DuckDB memory limit (`mergeRowsFor`). */
  mergeSliceRows?: number;
  /** Stages a run's rows from the memory tables when they hold every input (`compactFiles`' `stageParsed`). */
  stageParsed?: StageParsed;
  /**
   * The DuckDB its runs share while compaction is behind (managed storage gives the lane's compactors
   * one); closed once a run leaves nothing waiting. Default: one of its own, spilling into the
   * source's folder (`<dataDir>/<source>/.compaction-spill`).
   */
  database?: BurstDatabase;
}

/** The folder a burst's DuckDB spills into (`BurstDatabase`), beside the dataset and the write-ahead log. */
export const COMPACTION_SPILL_DIR = '.compaction-spill';

/** Segment bytes a run takes with no memory limit set (DuckDB's own default then bounds it). */
const UNLIMITED_RUN_BYTES = 256 * 2 ** 20;

/**
 * Segment bytes one compaction run takes at most under these DuckDB settings: a fifth of its
 * memory limit. Why: a run parses, sorts and writes all its segments in one DuckDB; once ingest
 * ran ahead of compaction (a burst, a restart after a long stop), taking every closed segment at
 * once made a run that no retry could fit (112 MB of segments failed at 80 and 160 MB, then every
 * 30 s). Half the limit was still too much: gateway segments of the ingest bench with 14 typed
 * fields fit 80 MB at 16 MiB a run and not at 20 or 35 MiB, so each run of 35 MB ran out of
 * memory and was done again at twice the limit (twice the work, past the budget's share).
 *
 * @example
 * runBytesFor({ memoryLimit: '80MB' }); // 16000000
 */
export function runBytesFor(duckdb: DatabaseSettings | undefined): number {
  const limit = duckdb?.memoryLimit === undefined ? null : memoryLimitBytes(duckdb.memoryLimit);
  return limit === null ? UNLIMITED_RUN_BYTES : Math.floor(limit / 5);
}

/** What a merge of a day's files needs whatever its events (DuckDB itself, its files' readers, the writer's buffers). */
const MERGE_RESERVE_BYTES = 20e6;

/**
 * Events a merge of a day's files sorts at once under these DuckDB settings (`MergeBound.sliceRows`:
 * a merge of more is sorted in slices of at most this many, merge-slices.ts): one per 4,000 bytes
 * of its memory limit past MERGE_RESERVE_BYTES, one per 20,000 bytes of it at least; 15,000 of
 * the default 80MB, 35,000 of 160MB; no bound with no limit set. Why: the sort is what a merge
 * needs in proportion to its rows, and more than DuckDB counts of it: sorting 57,212 gateway events into
 * a slice's file took the process 68 MiB more, within DuckDB's 80MB, and the merges' sorts set the
 * footprint's peak at 1,000 events/s (docs/performance.md, "A day's merge in smaller slices", and
 * "A day's merge in slices of 15,000"). At one per 1,000 bytes (60,000 of 80MB, until round ten) a
 * slice fit the limit; at one per 2,000 (30,000, until round twenty), what the merge holds beside
 * its sort (the readers of its files, the copy's writer) fits it too; at one per 4,000, the
 * process's peak at 1,000 events/s is 8 MiB lower (247.9 and 250.7 MiB against 255.8 - 261.7). After
 * a burst a day held 89 files of one size, the size tiers took all of them in one merge, sorted at
 * once, and it ran out of memory at 80 and 160MB on every retry: before the slices this bounded
 * the merge itself, and a day of more events than it stayed in several files (docs/performance.md,
 * "A day's files merged in sorted slices").
 *
 * Measured, one merge sorted at once without the retry, of files as compaction writes them, every source
 * written through the sorted table (`writeSortedLayout`): Postgres's log (`postgres_logs`,
 * 6,000 events a file), the source that fits fewest, fit 40MB at 48,000 events and not 60,000,
 * 60MB at 72,000 and not 78,000, 80MB at 78,000 and not 84,000, 120MB at 162,000 and 160MB at
 * 240,000 (the largest tried); the gateway's as Vector sends them and the ingest bench's (the
 * widest) both fit 80MB at 84,000, the largest tried, but the ingest bench's fit neither 60MB at
 * 24,000 nor 40MB at 3,000: below 80MB they take the retry whatever the bound. What a merge needs
 * is not monotonic in its events (all 1,600,000 of a burst fit 160MB where 162,000 did not, before
 * the sorted table), so nothing past the bound is assumed to fail or to fit: docs/performance.md,
 * "Merges bounded by the memory limit".
 *
 * @example
 * mergeRowsFor({ memoryLimit: '80MB' }); // 15000
 */
export function mergeRowsFor(duckdb: DatabaseSettings | undefined): number {
  const limit = duckdb?.memoryLimit === undefined ? null : memoryLimitBytes(duckdb.memoryLimit);
  return limit === null ? Infinity : Math.floor(Math.max(limit / 20_000, (limit - MERGE_RESERVE_BYTES) / 4000));
}

/**
 * The bytes the next run takes after one that took `taken`: half of them when it ran out of
 * memory (so a run of many segments that cannot fit is split until it does: one segment at
 * least, which fails as it would have), back up toward `max` (twice as many) after one that ended.
 *
 * @example
 * nextRunBytes(40e6, 40e6, 30e6, 'out-of-memory'); // 15000000
 */
export function nextRunBytes(current: number, max: number, taken: number, outcome: 'done' | 'out-of-memory'): number {
  return outcome === 'out-of-memory' ? Math.max(1, Math.floor(Math.min(current, taken) / 2)) : Math.min(max, current * 2);
}

/**
 * Managed storage's background compactor: closed write-ahead segments into the dataset, by the
 * one compaction mechanism (`compactFiles`, exactly once, crash safe), then the day's small files
 * merged, days past retention dropped, and the records of deleted segments forgotten. Runs are
 * serial; a segment closing during a run starts another one after it.
 */
export class BackgroundCompactor {
  private readonly runs = new SerialRuns(() => this.runGuarded());
  private timer: NodeJS.Timeout | null = null;
  private readonly unsubscribe: () => void;
  /** When (`elapsedMs`) a compaction last wrote a file of each day, while that is under SETTLE_QUIET_MS ago. */
  private readonly lastWritten = new Map<string, number>();
  private readonly maxRunBytes: number;
  /** Segment bytes the next run takes at most (`nextRunBytes`). */
  private runBytes: number;
  private readonly maxMergeRows: number;
  /** Events the next merge takes at most: halved after one that ran out of memory, as runs' bytes are (`nextRunBytes`). */
  private mergeRows: number;
  /** Events a merge sorts at once. */
  private readonly mergeSliceRows: number;
  /** The DuckDB of a burst's runs, closed once caught up. */
  readonly database: BurstDatabase;
  /**
   * What it did: runs, failed runs, segments compacted, files merged away, files dropped by
   * retention; events its runs wrote (`compactedRows`, each once) and events its merges wrote
   * again (`mergedRows`, once per merge an event went through), so `mergedRows / compactedRows`
   * is how many times an event was rewritten after its run.
   */
  readonly counters = { runs: 0, failures: 0, compactedSegments: 0, compactedRows: 0, mergedFiles: 0, mergedRows: 0, droppedFiles: 0 };

  /**
   * Whether a run holds segments whose events its counters do not count yet: they leave the
   * write-ahead log inside the run, before `counters.compactedRows` has them (ManagedStorage's
   * `settled` waits for it).
   */
  get compacting(): boolean {
    return this.segmentsInRun;
  }

  private segmentsInRun = false;

  constructor(private readonly options: BackgroundCompactorOptions) {
    this.maxRunBytes = options.maxRunBytes ?? runBytesFor(options.duckdb);
    this.runBytes = this.maxRunBytes;
    this.maxMergeRows = options.maxMergeRows ?? Infinity;
    this.mergeRows = this.maxMergeRows;
    this.mergeSliceRows = options.mergeSliceRows ?? mergeRowsFor(options.duckdb);
    this.database = options.database ?? new BurstDatabase(join(dirname(options.datasetDir), COMPACTION_SPILL_DIR));
    this.unsubscribe = options.wal.onSegmentClosed(() => this.trigger());
  }

  /** Starts a run now (segments left closed by a previous process are compacted at start). */
  trigger(): void {
    this.runs.trigger();
  }

  /** Resolves when no run is going on (tests, shutdown). */
  async settled(): Promise<void> {
    await this.runs.settled();
  }

  /** Stops triggering and waits for the run in progress. */
  async stop(): Promise<void> {
    this.unsubscribe();
    if (this.timer) clearTimeout(this.timer);
    await this.runs.stop();
    await this.database.close();
  }

  private async runGuarded(): Promise<void> {
    try {
      await (this.options.lane ? this.options.lane(() => this.runOnce()) : this.runOnce());
    } catch (error) {
      // Nothing else runs until the retry: the burst's DuckDB is given back now.
      await this.database.close().catch(() => undefined);
      this.counters.failures++;
      this.options.onError(error);
    }
    this.schedule();
  }

  /**
   * Retention and retries also run on a timer, so an idle store still drops old days; sooner when
   * a day written lately turns quiet then (its files merge into one once it is settled).
   */
  private schedule(): void {
    if (this.runs.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    const elapsed = this.elapsed();
    const now = this.options.now().getTime();
    let delay = this.options.retryMs ?? 30_000;
    for (const [day, written] of this.lastWritten) {
      // A day that is over but was written lately: the run right after it turns quiet merges it.
      if (daySettled(day, now, Infinity)) delay = Math.min(delay, Math.max(0, written + SETTLE_QUIET_MS - elapsed) + 100);
    }
    this.timer = setTimeout(() => this.trigger(), delay);
    this.timer.unref();
  }

  private elapsed(): number {
    return (this.options.elapsedMs ?? monotonicMs)();
  }

  /** Whether a day's files are merged into one now (merge-policy.ts). */
  private settledDay(day: string): boolean {
    const written = this.lastWritten.get(day);
    return daySettled(day, this.options.now().getTime(), written === undefined ? Infinity : this.elapsed() - written);
  }

  private async runOnce(): Promise<void> {
    const { source, datasetDir, wal } = this.options;
    this.counters.runs++;
    // The oldest segments, up to the run's bytes (one at least); the others wait for the next run.
    const files: ListedFile[] = [];
    let taken = 0;
    let more = false;
    for (const segment of wal.closedSegments()) {
      const size = statOrNull(segment.path)?.size ?? 0;
      if (files.length > 0 && taken + size > this.runBytes) {
        more = true;
        break;
      }
      await wal.verify?.(segment.path);
      const stats = statOrNull(segment.path);
      if (stats) files.push({ path: segment.path, kind: 'ndjson', size: stats.size, mtimeMs: stats.mtimeMs, ino: stats.ino });
      taken += size;
    }
    // Also with no segment: the run settles data files no commit names (a lost commit's are put back).
    // Out of memory (a few very wide events), the run is tried again at once with more (memory-retry.ts).
    let result: CompactResult;
    // From before the run until its counters say so: its segments leave the write-ahead log
    // (`remove`) before `compactFiles` returns, and "settled" must not be read in between.
    this.segmentsInRun = files.length > 0;
    try {
      result = await withMemoryRetry(this.options.duckdb, (duckdb) =>
        compactFiles({
          source,
          sources: this.options.sources,
          outDir: datasetDir,
          files,
          deleteSource: true,
          remove: (paths) => wal.release(paths),
          // What the store holds is what clients sent: it is compacted whatever it looks like.
          checkShape: false,
          // A closed segment is never appended again: read in place, not copied.
          sealed: true,
          // A line no query reads never pins its segment: it goes to the quarantine.
          setAside: this.options.setAside,
          duckdb,
          typedColumns: this.options.typedColumns ?? true,
          stageParsed: this.options.stageParsed,
          database: this.database,
        }),
      );
    } catch (error) {
      this.segmentsInRun = false;
      // Still out of memory with more: the next run takes fewer segments, and comes at once.
      if (isDuckDBOutOfMemory(error) && files.length > 1) {
        this.runBytes = nextRunBytes(this.runBytes, this.maxRunBytes, taken, 'out-of-memory');
        this.trigger();
      }
      throw error;
    }
    this.runBytes = nextRunBytes(this.runBytes, this.maxRunBytes, taken, 'done');
    this.counters.compactedSegments += result.deletedFiles.length;
    this.counters.compactedRows += result.rows;
    this.segmentsInRun = false;
    this.options.onCompacted?.(result);
    const elapsed = this.elapsed();
    for (const [day, written] of this.lastWritten) if (elapsed - written >= SETTLE_QUIET_MS) this.lastWritten.delete(day);
    for (const file of result.files) {
      const day = partitionDay(file);
      if (day !== null) this.lastWritten.set(day, elapsed);
    }
    // Segments left for the next run, or closed during this one: it comes at once, and the day's
    // files are merged once it has caught up. While compaction is behind, its time goes to the
    // segments (what the write-ahead log's bound and the memory tables wait on), not to rewriting
    // each run's file a few times over on its way to 64 MiB; merged later, the files are merged
    // fewer times, more at once.
    if (more || wal.closedSegments().length > 0) this.trigger();
    else {
      // Caught up: the burst's DuckDB closes, so its memory comes back while compaction is idle.
      await this.database.close();
      const merges = await this.mergeBounded();
      this.counters.mergedFiles += merges.merged;
      this.counters.mergedRows += merges.mergedRows;
      // Another settled day waits: the next run comes at once (each first compacts what closed meanwhile).
      if (merges.settledLeft) this.trigger();
    }
    // Retention and the records of deleted segments every run, behind or not: cheap, and the
    // records would otherwise grow with every segment of a long burst.
    const cutoff = new Date(this.options.now().getTime() - this.options.retentionDays * unitMs('day')).toISOString().slice(0, 10);
    this.counters.droppedFiles += await dropDaysBefore(datasetDir, source, cutoff);
    await forgetDeletedInputs(datasetDir, source.name, this.options.walDir + sep);
  }

  /**
   * The day's files merged, each merge within `mergeRows` (no bound until a merge runs out of
   * memory: each sorts its rows in slices of `mergeSliceRows`). A merge still out of memory at the
   * retry's ceiling is not tried with the same files again: the next pass, at once, takes half
   * its events (fewer files), and a pass that merged files brings the bound back up toward its
   * maximum (twice as much). A pass that merged nothing leaves it as it is: doubled then, a pair of
   * files that failed would be tried again at every other pass.
   */
  private async mergeBounded(): Promise<{ merged: number; mergedRows: number; settledLeft: boolean }> {
    const { source, datasetDir } = this.options;
    let taken = 0;
    const bound = { maxRows: this.mergeRows, sliceRows: this.mergeSliceRows, merging: (rows: number) => (taken = rows) };
    try {
      const merges = await withMemoryRetry(this.options.duckdb, (duckdb) => mergeSmallFiles(datasetDir, source, duckdb, (day) => this.settledDay(day), this.options.typedColumns ?? true, bound));
      if (merges.merged > 0) this.mergeRows = nextRunBytes(this.mergeRows, this.maxMergeRows, taken, 'done');
      return merges;
    } catch (error) {
      if (isDuckDBOutOfMemory(error)) {
        this.mergeRows = nextRunBytes(this.mergeRows, this.maxMergeRows, taken, 'out-of-memory');
        this.trigger();
      }
      throw error;
    }
  }
}
