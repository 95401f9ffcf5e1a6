import { readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { SourceName } from '../sources/source-descriptor';
import type { SourceSet } from '../sources/source-set';
import type { ExtraInputs } from '../files/source-reader';
import { SourceNames } from '../ingest/source-names';
import { DEFAULT_COMPACTION_DUCKDB } from '../duckdb/compaction-duckdb';
import { BATCH_LIMITS } from '../ingest/serialize-events';
import { largestEventBytes } from './largest-event';
import { RunDuckDBBytes, type DuckDBBytes } from '../duckdb/duckdb-bytes';
import { systemNow } from '../time/clock';
import { oneAtATime } from '../util/one-at-a-time';
import { InvalidOptionError } from '../errors';
import { Ingestor } from './ingestor';
import type { StorageOptions } from './storage-options';
import type { ManagedStorageInfo, ManagedStorageOptions, ManagedStorageStats } from './managed-storage-types';
import { openWalSet, walDir, type WalSet } from './wal/wal-set';
import { BackgroundCompactor, COMPACTION_SPILL_DIR } from './background-compactor';
import { ClickHouseShipper, type ShipTarget } from './clickhouse-shipper';
import { dataDirInstanceId } from './instance-id';
import { datasetDir, managedInputs } from './managed-inputs';
import { readDatasetStateStable } from '../dataset/dataset-log';
import { MEMORY_TABLES_DIR, MemoryTables } from './memory-tables';
import type { GroupKnown } from '../ingest/body-lines';
import { segmentSeqOf } from './wal/segment-name';
import { quarantineUnreadableLines } from './unreadable-lines';
import type { KeptLog, SegmentKeeper } from './segment-keeper';
import type { Wal } from './wal/wal';
import { BurstDatabase } from '../duckdb/burst-database';

/** Where `storage.clickhouse` ships, resolved by the caller (a loader made from configuration is closed with the storage). */
export interface ShipTo {
  target: ShipTarget;
  close(): Promise<void>;
}

/**
 * Managed storage of an instance (docs/durability.md): the locked write-ahead logs, the one
 * ingest path into them, the background compactors (or ClickHouse shippers), and what queries of
 * the built-in engine read from it. Opened before the engine, closed after it is done writing.
 */
export class ManagedStorage {
  readonly info: ManagedStorageInfo;
  /** What the compaction run going on holds in its DuckDB (zero between runs). */
  private readonly compactionHeld = new RunDuckDBBytes();

  private constructor(
    /**
     * The instance's sources, as declared: one WAL, quarantine, dataset and compactor (or shipper)
     * each. The typed fields their datasets hold beyond those are the queries' business
     * (`onTypedPaths`, src/sources/live-source-set.ts); compaction reads them from each dataset's log.
     */
    readonly sources: SourceSet,
    readonly walSet: WalSet,
    /** The built-in engine's in-memory copies of uncompacted events (none with another engine). */
    readonly memory: MemoryTables | undefined,
    readonly ingestor: Ingestor,
    private compactors: BackgroundCompactor[] = [],
    private shipping: Shipping | null = null,
  ) {
    this.info = Object.freeze({
      dataDir: walSet.dataDir,
      sources: ingestor.sourceNames.names,
      resolveSource: (ref: string) => ingestor.resolveSource(ref),
      // Grows while a backlog is recovered in the background.
      get recovered() {
        return Object.freeze(sources.names.flatMap((s) => walSet.wals[s]!.recovered));
      },
    });
  }

  /**
   * Takes the data dir (a dir another live process holds is refused before DuckDB starts) and
   * recovers its write-ahead logs. `start` begins compaction or shipping once the engine is up.
   */
  static async open(sources: SourceSet, options: ManagedStorageOptions, memoryTablesBytes?: number): Promise<ManagedStorage> {
    const sourceNames = new SourceNames(sources, options.storage.sourceNames);
    const walSet = await openWalSet(options.storage.dataDir, sources, {
      ...walOptions(options.storage),
      onQuarantined: (source, entry) => {
        try {
          options.onWarning?.({ code: 'quarantined', message: `${entry.message} Kept in ${entry.file}.`, source, reason: entry.reason, file: entry.file, bytes: entry.bytes, lines: entry.lines });
        } catch {
          // A failing hook must not stop recovery or compaction.
        }
      },
    });
    const keeper = options.segmentKeeper;
    if (keeper) {
      // Before compaction starts: what the keeper still needs of the segments left by the previous process is known.
      const logs: Partial<Record<SourceName, KeptLog>> = {};
      for (const source of sources.names) {
        const wal = walSet.wals[source]!;
        logs[source] = { dir: wal.dir, snapshot: () => wal.snapshot(), deferred: () => wal.deferred(), recovery: wal.recovery };
      }
      try {
        await keeper.attach(walSet.dataDir, logs);
      } catch (error) {
        await walSet.close();
        throw error;
      }
    }
    const memory = options.engine ? undefined : new MemoryTables(sources, { folder: join(walSet.dataDir, MEMORY_TABLES_DIR), maxBytes: memoryTablesBytes });
    const told = options.onIngested;
    const onDurable =
      memory || told || keeper
        ? async (source: SourceName, seq: number, lines: Uint8Array, known: GroupKnown) => {
            if (memory) await memory.insert(source, seq, lines, known);
            // The batch is durable: a failing hook must not fail its ingest, nor keep the other from being told.
            for (const tell of [() => keeper?.appended(source), () => told?.(source, lines)]) {
              try {
                tell();
              } catch {
                // Its own failure.
              }
            }
          }
        : undefined;
    // No event longer than compaction can compact (largest-event.ts): one would hold up its source.
    const limits = { ...BATCH_LIMITS, maxEventBytes: largestEventBytes(options.storage?.compactionDuckdb ?? DEFAULT_COMPACTION_DUCKDB) };
    const ingestor = new Ingestor(walSet, sourceNames, options.now ?? systemNow, limits, onDurable);
    // Before the first ingest and before compaction takes the segments the previous process left.
    await ingestor.recall();
    return new ManagedStorage(sources, walSet, memory, ingestor);
  }

  /** What queries of each source read from managed storage: its dataset and its committed WAL bytes. */
  inputs(): Partial<Record<SourceName, ExtraInputs>> {
    const out: Partial<Record<SourceName, ExtraInputs>> = {};
    for (const source of this.sources.names) out[source] = managedInputs(this.walSet.dataDir, source, this.walSet.wals[source]!, this.memory);
    return out;
  }

  /**
   * Starts background compaction, or with `shipTo` (`storage.clickhouse`, resolved by the caller)
   * shipping to ClickHouse.
   */
  async start(options: ManagedStorageOptions, shipTo?: ShipTo): Promise<void> {
    if (shipTo) this.shipping = await startShippers(this.sources, this.walSet, options, shipTo);
    else this.compactors = startCompactors(this.sources, this.walSet, options, this.memory, this.compactionHeld);
    this.loading = this.loadLeftovers();
  }

  private loading: Promise<void> = Promise.resolve();

  /**
   * The segments the previous process left and `open` recovered (a clean stop leaves one) go into
   * the memory tables in the background, so queries stop parsing them well before compaction ends;
   * until then they are read from their files. A segment with damage set aside (blank lines) stays read from its file.
   */
  private async loadLeftovers(): Promise<void> {
    const memory = this.memory;
    if (!memory) return;
    for (const source of this.sources.names) {
      const wal = this.walSet.wals[source]!;
      const deferred = new Set(wal.deferred().map((d) => d.seq));
      const damaged = new Set(wal.recovered.filter((r) => r.damaged.length).map((r) => r.path));
      for (const segment of wal.closedSegments()) {
        if (deferred.has(segment.seq) || damaged.has(segment.path) || this.closing) continue;
        const bytes = await readFile(segment.path).catch(() => null);
        if (!bytes) continue;
        await memory.load(source, segment.seq, bytes.subarray(0, segment.committedBytes));
        // Compacted and released while it went in: its rows go again (the dataset holds them).
        if (!wal.closedSegments().some((s) => s.seq === segment.seq)) memory.retire(source, [segment.seq]);
      }
    }
  }

  private closing = false;

  stats(): ManagedStorageStats {
    const wals = this.sources.names.map((s) => this.walSet.wals[s]!);
    const sum = (pick: (c: BackgroundCompactor['counters']) => number) => this.compactors.reduce((n, c) => n + pick(c.counters), 0);
    const stats: ManagedStorageStats = {
      walBytes: wals.reduce((n, w) => n + w.bytes.disk, 0),
      pendingBytes: wals.reduce((n, w) => n + w.bytes.pending, 0),
      compactedSegments: sum((c) => c.compactedSegments),
      compactionFailures: sum((c) => c.failures),
      compactedEvents: sum((c) => c.compactedRows),
      mergedFiles: sum((c) => c.mergedFiles),
      mergedEvents: sum((c) => c.mergedRows),
      droppedFiles: sum((c) => c.droppedFiles),
      ...this.quarantined(),
      recoveringSegments: wals.reduce((n, w) => n + w.deferred().length, 0),
      recoveringBytes: wals.reduce((n, w) => n + w.deferred().reduce((b, d) => b + d.bytes, 0), 0),
      memoryTablesBytes: this.memory?.heldBytes ?? 0,
      sources: Object.fromEntries(this.sources.list.map((d) => [d.relation, this.sourceBytes(d.name)])),
      settled: false,
    };
    // Everything acknowledged is in the dataset: no write-ahead bytes left (the active segment
    // rolls by age, so a quiet store settles), nothing recovering, and no run between releasing
    // its segments and counting their events (so `compactedEvents` is final once settled).
    stats.settled = Object.values(stats.sources).every((s) => s.walBytes === 0) && stats.recoveringSegments === 0 && this.compactors.every((c) => !c.compacting);
    const shippers = this.shipping?.shippers;
    if (shippers) {
      const shipped = (pick: (c: ClickHouseShipper['counters']) => number) => shippers.reduce((n, c) => n + pick(c.counters), 0);
      stats.shippedSegments = shipped((c) => c.shippedSegments);
      stats.shippedEvents = shipped((c) => c.shippedEvents);
      stats.shippingFailures = shipped((c) => c.failures);
    }
    return stats;
  }

  /** What compaction's DuckDB holds now: the run going on's instance, zero between runs; null while shipping (no compaction). */
  compactionDuckdbBytes(): DuckDBBytes | null {
    return this.shipping ? null : this.compactionHeld.latest;
  }

  /** A source's write-ahead bytes, and those compaction (or shipping) has yet to take. */
  private sourceBytes(source: SourceName): { walBytes: number; lagBytes: number } {
    const wal = this.walSet.wals[source]!;
    // Segments still recovering are closed segments too: counted once.
    return { walBytes: wal.bytes.disk, lagBytes: wal.closedSegments().reduce((n, s) => n + s.committedBytes, 0) };
  }

  /**
   * What does not work now (docs/http.md, "Health"): `storage` when a source's log refuses events
   * after a failed fsync (until restarted), `clickhouse` while shipping to it fails (events wait
   * in the log, durable).
   */
  degraded(): { storage: boolean; clickhouse: boolean } {
    return {
      storage: this.sources.names.some((s) => this.walSet.wals[s]!.failed),
      clickhouse: this.shipping?.shippers.some((s) => s.failing) ?? false,
    };
  }

  /** What each source set aside in its quarantine folder (docs/durability.md, "The quarantine"). */
  quarantine(source: SourceName): { dir: string; files: number; bytes: number; lines: number } | undefined {
    const quarantine = this.walSet.quarantines[source];
    return quarantine && { dir: quarantine.dir, ...quarantine.counts };
  }

  private quarantined(): { quarantinedFiles: number; quarantinedBytes: number; quarantinedLines: number } {
    const counts = this.sources.names.map((s) => this.walSet.quarantines[s]!.counts);
    return {
      quarantinedFiles: counts.reduce((n, c) => n + c.files, 0),
      quarantinedBytes: counts.reduce((n, c) => n + c.bytes, 0),
      quarantinedLines: counts.reduce((n, c) => n + c.lines, 0),
    };
  }

  /** Stops compaction and shipping, then flushes and closes the logs and releases the data dir. */
  async close(): Promise<void> {
    this.closing = true;
    await this.loading;
    // A compaction that is running finishes (or is left for the next start: it is crash safe).
    await Promise.all(this.compactors.map((c) => c.stop()));
    // So does a segment being shipped; what is left ships at the next start.
    await Promise.all(this.shipping?.shippers.map((s) => s.stop()) ?? []);
    // Events accepted before close are written (and their callers answered) first.
    await this.walSet.close();
    await this.shipping?.close();
  }
}

/**
 * Segments left by the previous process are recovered before the start returns while they hold
 * at most this much, the newest always (its torn tail is cut before anything is appended after
 * it); a clean stop leaves one segment of at most 8 MiB by default. A larger backlog (a crash
 * under load) is recovered in the background, so a start serves within a second whatever the
 * backlog (docs/durability.md, "Crashes and recovery").
 */
const RECOVER_AT_OPEN_BYTES = 8 * 1024 * 1024;

/** The WAL settings of the storage options. */
function walOptions(storage: StorageOptions) {
  const { maxSegmentBytes, segmentQuietMs, maxPendingBytes, maxUncompactedBytes } = storage;
  // Shipped segments are what ClickHouse queries see: closed after a second, not a minute.
  const maxSegmentAgeMs = storage.maxSegmentAgeMs ?? (storage.clickhouse ? 1000 : undefined);
  return { maxSegmentBytes, maxSegmentAgeMs, segmentQuietMs, maxPendingBytes, maxUncompactedBytes, recoverAtOpenBytes: RECOVER_AT_OPEN_BYTES };
}

/**
 * The typed fields a source's dataset holds once a run committed (its log's `typedPaths`: those
 * it just discovered among them), told to `onTypedPaths` before its segments are released, so
 * the requests from then on read them as columns. A log that cannot be read tells nothing (the
 * next query's read tells it).
 */
function tellTypedPaths(options: ManagedStorageOptions, source: SourceName, dir: string): void {
  if (!options.onTypedPaths) return;
  let paths: readonly string[];
  try {
    paths = readDatasetStateStable(dir).typedPaths;
  } catch {
    return;
  }
  try {
    options.onTypedPaths(source, paths);
  } catch {
    // A failing hook must not stop compaction.
  }
}

/**
 * One background compactor per source: closed segments into the dataset, small files merged,
 * days past retention dropped. Segments left closed by a previous process are compacted at once.
 */
function startCompactors(sources: SourceSet, walSet: WalSet, options: ManagedStorageOptions, memory: MemoryTables | undefined, held: RunDuckDBBytes): BackgroundCompactor[] {
  // One compaction at a time in the process: one compaction DuckDB inside the memory budget.
  const lane = oneAtATime();
  // The lane's runs share one DuckDB while compaction is behind, closed once a run catches up.
  const database = new BurstDatabase(join(walSet.dataDir, COMPACTION_SPILL_DIR));
  return sources.list.map((descriptor) => {
    const source = descriptor.name;
    const wal = walSet.wals[source]!;
    const compactor = new BackgroundCompactor({
      source: descriptor,
      sources,
      datasetDir: datasetDir(walSet.dataDir, source),
      walDir: walDir(walSet.dataDir, source),
      wal: {
        closedSegments: () => wal.closedSegments(),
        onSegmentClosed: (listener) => wal.onSegmentClosed(listener),
        // Committed to the dataset: the instance told what typed fields it holds now (the run may
        // have discovered some), the in-memory copies go (once older queries are done), then the files.
        release: async (paths) => {
          tellTypedPaths(options, source, datasetDir(walSet.dataDir, source));
          await keepBeforeRelease(options.segmentKeeper, source, wal, paths);
          memory?.retire(
            source,
            paths.map((p) => segmentSeqOf(basename(p))).filter((n): n is number => n !== null),
          );
          await wal.release(paths);
        },
        verify: async (path) => {
          const found = await wal.verify(path);
          const seq = segmentSeqOf(basename(path));
          // Its file no longer holds what memory does (changed bytes blanked, set aside): compacted from the file.
          if (found.length && seq !== null) memory?.diverged(source, seq);
          return found;
        },
      },
      // A run's rows staged from the memory tables when they hold every segment it takes (parsed there at ingest).
      stageParsed: memory
        ? async (paths, rowsFile) => {
            const seqs = paths.map((path) => segmentSeqOf(basename(path)));
            if (!seqs.every((seq): seq is number => seq !== null)) return false;
            return memory.stage(source, new Map(seqs.map((seq, i) => [seq, paths[i]!])), rowsFile);
          }
        : undefined,
      setAside: async (path) => {
        await quarantineUnreadableLines({ source: descriptor, path, quarantine: walSet.quarantines[source]!, duckdb: options.storage?.compactionDuckdb ?? DEFAULT_COMPACTION_DUCKDB });
      },
      lane,
      database,
      retentionDays: options.storage?.retentionDays ?? 90,
      // Retention judges the age of events: the injected clock, like the windows.
      now: options.now ?? systemNow,
      // Its runs (and their merges) show what their DuckDB holds while they run (stats, /metrics).
      duckdb: { ...(options.storage?.compactionDuckdb ?? DEFAULT_COMPACTION_DUCKDB), held },
      typedColumns: options.storage?.typedColumns ?? true,
      onError: (error) => {
        try {
          options.onWarning?.({ code: 'compaction_failed', message: `Compaction of ${source} failed (retried shortly): ${(error as Error)?.message ?? String(error)}`, source, cause: error });
        } catch {
          // A failing hook must not stop compaction.
        }
      },
    });
    compactor.trigger();
    return compactor;
  });
}

/**
 * With `storage.clickhouse`: one shipper per source instead of the compactors: closed segments
 * into ClickHouse, exactly once, then deleted. `shipTo.close` runs with the storage's close.
 */
async function startShippers(sources: SourceSet, walSet: WalSet, options: ManagedStorageOptions, { target, close }: ShipTo): Promise<Shipping> {
  const missing = target.sourceNames ? sources.names.filter((name) => !target.sourceNames!.includes(name)) : [];
  if (missing.length) {
    await close();
    throw new InvalidOptionError(
      'storage.clickhouse',
      `storage.clickhouse does not know the source${missing.length > 1 ? 's' : ''} ${missing.join(', ')} of these endpoints: give the loader the same sourceDefinitions.`,
    );
  }
  let instanceId: string;
  try {
    instanceId = await dataDirInstanceId(walSet.dataDir);
  } catch (error) {
    await close();
    throw error;
  }
  const shippers = sources.list.map((descriptor) => {
    const source = descriptor.name;
    const wal = walSet.wals[source]!;
    const shipper = new ClickHouseShipper({
      source,
      wal: {
        closedSegments: () => wal.closedSegments(),
        release: async (paths) => {
          await keepBeforeRelease(options.segmentKeeper, source, wal, paths);
          await wal.release(paths);
        },
        onSegmentClosed: (listener) => wal.onSegmentClosed(listener),
        verify: (path) => wal.verify(path),
      },
      setAside: async (path, offsets) => {
        await quarantineUnreadableLines({ source: descriptor, path, quarantine: walSet.quarantines[source]!, offsets });
      },
      stateDir: join(walSet.dataDir, source, 'shipping'),
      instanceId,
      target,
      onError: (error) => {
        try {
          options.onWarning?.({ code: 'shipping_failed', message: `Shipping ${source} to ClickHouse failed (retried shortly): ${(error as Error)?.message ?? String(error)}`, source, cause: error });
        } catch {
          // A failing hook must not stop shipping.
        }
      },
    });
    shipper.trigger();
    return shipper;
  });
  return { shippers, close };
}

/**
 * The segment keeper (log drains) told of closed segments before they are deleted: those it still
 * needs it keeps elsewhere first, so the release stays what it was (the file leaves the log, and
 * compaction and recovery never see it again).
 */
async function keepBeforeRelease(keeper: SegmentKeeper | undefined, source: SourceName, wal: Wal, paths: readonly string[]): Promise<void> {
  if (!keeper) return;
  const named = new Set(paths.map((p) => basename(p)));
  const segments = wal.closedSegments().filter((s) => named.has(basename(s.path)));
  if (segments.length) await keeper.releasing(source, segments);
}

/** Shippers of an instance and how to close their target. */
interface Shipping {
  shippers: ClickHouseShipper[];
  close(): Promise<void>;
}
