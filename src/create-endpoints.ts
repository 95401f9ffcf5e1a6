import { join } from 'node:path';
import type { CachePolicy, EndpointDefinition, EndpointName, NormalizedParams } from './definitions/definition';
import { engineRequest } from './definitions/definition';
import type { FunctionsInvocationStatsParams, FunctionsInvocationStatsRow } from './definitions/functions-invocation-stats';
import type { LogsAllParams, LogsAllRow } from './definitions/logs-all';
import { normalizeParams, type RawParams } from './definitions/normalize-params';
import { DEFINITIONS, findDefinition } from './definitions/registry';
import type { UsageApiCountsParams, UsageApiCountsRow } from './definitions/usage-api-counts';
import type { Engine, SourceInspection } from './engine/engine';
import { createDuckDBEngine, type SourceGlobs } from './engine/duckdb/duckdb-engine';
import { EngineError, InvalidParameterError, NotFoundError } from './errors';
import { fillBuckets } from './rows/fill-buckets';
import { shapeRows, type Row } from './rows/shape-rows';
import { withArrowTable } from './rows/to-arrow';
import type { Table } from 'apache-arrow';
import { describeDefinition, type EndpointDescription } from './definitions/describe';
import type { SkippedFile } from './storage/file-checks';
import { catalogRequests, mergeCatalog, type Catalog, type CatalogOptions } from './definitions/catalog';
import { CacheLayer, type CacheCounters } from './cache/cache-layer';
import { effectivePolicies, type CachePolicyOverrides } from './cache/cache-policy';
import { memoryCache } from './cache/memory-cache';
import type { CacheEntry, ResultCache } from './cache/result-cache';
import { timerScheduler, type CacheScheduler } from './cache/scheduler';
import type { SourceName } from './engine/engine';
import { Ingestor, type IngestResult } from './ingest/ingestor';
import { SourceNames, type IngestSourceName } from './ingest/source-names';
import type { StorageOptions } from './ingest/storage-options';
import { openWalSet, STORAGE_SOURCES, walDir, type WalSet } from './storage/wal/wal-set';
import { re2PatternProblem } from './engine/re2-pattern';
import { BackgroundCompactor } from './storage/managed/background-compactor';
import { ClickHouseShipper, type ShipTarget } from './storage/managed/clickhouse-shipper';
import { dataDirInstanceId } from './storage/managed/instance-id';
import { datasetDir, managedInputs } from './storage/managed/managed-inputs';
import { MemoryTables } from './engine/duckdb/memory-tables';
import { segmentSeqOf } from './storage/wal/segment-name';
import { basename } from 'node:path';
import type { WalRecovery } from './storage/wal/wal';
import { realClock, type CacheClock } from './cache/real-clock';
import { checkEndpointsOptions } from './options/check-endpoints-options';

/** Options of `createEndpoints`. */
export interface EndpointsOptions {
  /** Log files per source: a glob or a list of globs (NDJSON or Parquet, by extension). Optional with `storage`. */
  sources?: SourceGlobs;
  /**
   * Managed storage: events sent with `ep.ingest` (or the HTTP ingest routes) are kept durably in
   * `storage.dataDir` and queried together with `sources`.
   */
  storage?: StorageOptions;
  /**
   * The clock every window is placed at (default: the system clock). Only the windows: a fixed
   * instant replays a past moment, and the cache still ages and warms on the real clock.
   */
  now?: () => Date;
  /**
   * The real clock of the cache, ms since the epoch: `computedAt`, ages, lifetimes and warming
   * (default: monotonic, see `CacheClock`). Inject it, with `scheduler`, to drive the cache in tests.
   */
  cacheClock?: CacheClock;
  /**
   * Where results are cached: a `ResultCache` (e.g. `redisCache` from `log-endpoints/redis`, shared by
   * several instances), or `false` to turn caching off. Default: `memoryCache()` (1000 entries, 64 MiB).
   */
  cache?: false | ResultCache;
  /**
   * Per-endpoint cache policy instead of the definition's own (900 s lifetime, 300 s warming; logs.all
   * never cached). `null` turns caching off for that endpoint; `warmingSeconds: 0` turns warming off.
   */
  cachePolicy?: CachePolicyOverrides;
  /** Background refreshes running at once (default 2), so warming never takes every engine slot. */
  warmingConcurrency?: number;
  /** Runs warming later (default: `setTimeout`, unref'ed). Pass your own to drive warming in tests. */
  scheduler?: CacheScheduler;
  /** Keys kept warm at most (default: the store's `maxEntries` for `memoryCache`, else 1000); the least recently read stop first. */
  maxWarmingKeys?: number;
  /** Longest wait for one operation of the store (default 250 ms); past it the answer is computed and `cacheErrors` counts it. */
  storeTimeoutMs?: number;
  /** In-process DuckDB settings. */
  duckdb?: { threads?: number; memoryLimit?: string };
  /** Limits every entry point gets: concurrency, wait queue and time per engine query. */
  limits?: { maxConcurrentQueries?: number; maxQueuedQueries?: number; queryTimeoutMs?: number };
  /** Return empty buckets of functions.invocation-stats too (count 0, null statistics). Off by default. */
  fillEmptyBuckets?: boolean;
  /** Use another engine instead of the built-in DuckDB one (the `sources`, `duckdb` and `limits` options are then its business). */
  engine?: Engine;
  /**
   * Told once per file (and reason) when an answer leaves a file out because it cannot be read:
   * damaged Parquet, broken compression, unreadable. Answers carry `skippedFiles` either way.
   */
  onWarning?: (warning: EndpointsWarning) => void;
}

/**
 * Something a user should know that did not fail the call.
 *
 * @example
 * const ep = await createEndpoints({ sources, onWarning: (w) => console.warn(w.message) });
 */
export type EndpointsWarning =
  | { code: 'file_skipped'; message: string; file: SkippedFile }
  /** Managed storage's background compaction failed; it is tried again, and ingest is refused (503) only past its bounds. */
  | { code: 'compaction_failed'; message: string; source: SourceName; cause: unknown }
  /** Shipping a segment to ClickHouse (`storage.clickhouse`) failed; it is tried again with growing pauses, and ingest is refused (503) only past `maxUncompactedBytes`. */
  | { code: 'shipping_failed'; message: string; source: SourceName; cause: unknown };

/** How an answer was obtained. */
export type CacheStatus = 'hit' | 'miss' | 'bypass';

/** The answer of `query`: `result` is exactly the rows of the HTTP API's JSON body. */
export interface QueryResult<R = Row> {
  result: R[];
  endpoint: { name: EndpointName; id: string };
  cache: CacheStatus;
  /** When the rows were computed (ISO 8601, the cache's real clock: a real instant even under a replayed `now`). */
  computedAt: string;
  /** Seconds since the rows were computed, on the real clock. */
  ageSeconds: number;
  /** Seconds the rows may still be served from the cache; null when the endpoint is not cached. */
  ttlRemainingSeconds: number | null;
  /** Milliseconds the engine spent on the rows (of the computation that produced them). */
  engineMs: number;
  /**
   * Files the rows leave out because they could not be read (damaged Parquet, broken compression,
   * unreadable), with the reason; empty when every file was read. Vanished files are not here:
   * a file gone between listing and reading is simply absent (the query lists again).
   */
  skippedFiles: SkippedFile[];
}

/** Options of one `query` call. */
export interface QueryOptions {
  /** `'arrow'` adds the rows as an Arrow `Table` (`table`), typed by the endpoint's columns. */
  format?: 'rows' | 'arrow';
}

/**
 * The answer of `query(..., { format: 'arrow' })`: the usual answer plus an Arrow table of the rows.
 *
 * @example
 * const { table } = await ep.query('usage.api-counts', { project: 'abc', interval: 'daily' }, { format: 'arrow' });
 * console.table(table.toArray());
 */
export type ArrowQueryResult<R = Row> = QueryResult<R> & { table: Table };

/** Counters of an `Endpoints` instance. */
export interface EndpointsStats extends CacheCounters {
  engineQueries: number;
  engineFailures: number;
  /**
   * Managed storage, when configured: bytes in the write-ahead log (on disk, accepted but not
   * yet fsynced), and what background compaction did (segments compacted, failed runs, small files
   * merged, files dropped by retention).
   */
  storage?: {
    walBytes: number;
    pendingBytes: number;
    compactedSegments: number;
    compactionFailures: number;
    mergedFiles: number;
    droppedFiles: number;
    /** With `storage.clickhouse`: segments shipped (then deleted), events inserted, failed attempts. */
    shippedSegments?: number;
    shippedEvents?: number;
    shippingFailures?: number;
  };
  /** Keys this instance keeps warm now (read within their last lifetime). */
  warmingKeys: number;
}

/** Maps each endpoint name to its parameter and row types. */
export interface EndpointTypes {
  'functions.invocation-stats': { params: FunctionsInvocationStatsParams; row: FunctionsInvocationStatsRow };
  'logs.all': { params: LogsAllParams; row: LogsAllRow };
  'usage.api-counts': { params: UsageApiCountsParams; row: UsageApiCountsRow };
}

/** The endpoints of one set of log sources. */
export interface Endpoints {
  /** Edge-function latency percentiles and errors per time bucket. */
  functionsInvocationStats(params: FunctionsInvocationStatsParams): Promise<FunctionsInvocationStatsRow[]>;
  /** Recent gateway log entries within the tier's retention window (at most 100, newest first). */
  logsAll(params: LogsAllParams): Promise<LogsAllRow[]>;
  /** API requests per product area per time bucket. */
  usageApiCounts(params: UsageApiCountsParams): Promise<UsageApiCountsRow[]>;
  /** Any endpoint by name or UUID, with text parameters as they come from a query string. */
  query<N extends EndpointName>(name: N, params: EndpointTypes[N]['params']): Promise<QueryResult<EndpointTypes[N]['row']>>;
  query(nameOrId: string, params: RawParams): Promise<QueryResult>;
  /** The same, with the rows as an Arrow table too (timestamps in microseconds, integers as Int64). */
  query<N extends EndpointName>(name: N, params: EndpointTypes[N]['params'], options: { format: 'arrow' }): Promise<ArrowQueryResult<EndpointTypes[N]['row']>>;
  query(nameOrId: string, params: RawParams, options: { format: 'arrow' }): Promise<ArrowQueryResult>;
  query(nameOrId: string, params: RawParams, options: QueryOptions): Promise<QueryResult>;
  /** The endpoints' definitions: name, UUID, parameters, columns, max rows, cache policy. */
  readonly definitions: readonly EndpointDescription[];
  /**
   * The projects (and each project's edge functions) the data holds over the last `days` (default 7),
   * busiest first: what a project picker offers. Never cached; runs through the same limits as queries.
   */
  catalog(options?: CatalogOptions): Promise<Catalog>;
  /** Files, lines and skipped (broken) lines of each source, counted now. */
  inspectSources(): Promise<SourceInspection[]>;
  /** Resolves when the engine answers a trivial query. */
  ping(): Promise<void>;
  /** The instant windows are placed at now (the `now` option's clock). */
  now(): Date;
  /** Milliseconds on the cache's real clock (the `cacheClock` option): what ages and lifetimes are measured with. */
  cacheClock(): number;
  stats(): EndpointsStats;
  /**
   * Appends events to managed storage (contract §7) and resolves once they are durable (fsynced).
   * `source` is a Logflare name (`cloudflare.logs.prod`, `deno-relay-logs`, or one of
   * `storage.sourceNames`), its fixed UUID, or `edgeLogs` / `functionEdgeLogs`. All or nothing: a
   * bad event rejects the call with `InvalidBodyError` (its `index` says which) and keeps none.
   * Fails with `not_found` when `createEndpoints` got no `storage`.
   */
  ingest(source: string, events: readonly object[]): Promise<IngestResult>;
  /** Managed storage, when `storage` was given: its folder and the source names ingest accepts. */
  readonly storage: ManagedStorageInfo | null;
  /** Stops all cache warming, flushes and closes managed storage, releases DuckDB; later calls fail with a `closed` error. */
  close(): Promise<void>;
}

/** What `ep.storage` tells about managed storage. */
export interface ManagedStorageInfo {
  /** The data dir, absolute. */
  readonly dataDir: string;
  /** Names (and fixed UUIDs) ingest accepts, and the source each one feeds. */
  readonly sources: readonly IngestSourceName[];
  /** The source a name or UUID means; `NotFoundError` listing the known names otherwise. */
  resolveSource(nameOrId: string): SourceName;
  /** What recovery cut at open: unfinished writes at the end of WAL segments (empty after a clean stop). */
  readonly recovered: readonly WalRecovery[];
}

/**
 * Creates the endpoints over your log files, computed by an in-process DuckDB.
 *
 * @example
 * const ep = await createEndpoints({ sources: { edgeLogs: 'logs/edge/*.ndjson', functionEdgeLogs: 'logs/fn/*.parquet' } });
 * const rows = await ep.usageApiCounts({ project: 'abc', interval: 'daily' });
 * await ep.close();
 */
export async function createEndpoints(options: EndpointsOptions): Promise<Endpoints> {
  checkEndpointsOptions(options);
  const sourceNames = options.storage ? new SourceNames(options.storage.sourceNames) : null;
  // Storage first: a data dir locked by another process fails before DuckDB starts.
  const walSet = options.storage ? await openWalSet(options.storage.dataDir, walOptions(options.storage)) : null;
  // The built-in engine holds managed storage's uncompacted events in memory (another engine reads its own data).
  const memory = walSet && !options.engine ? new MemoryTables() : undefined;
  let engine: Engine;
  try {
    engine =
      options.engine ??
      (await createDuckDBEngine({
        sources: options.sources ?? {},
        extraInputs: walSet ? managedSources(walSet, memory) : undefined,
        memory,
        threads: options.duckdb?.threads,
        memoryLimit: options.duckdb?.memoryLimit,
        maxConcurrentQueries: options.limits?.maxConcurrentQueries,
        maxQueuedQueries: options.limits?.maxQueuedQueries,
        queryTimeoutMs: options.limits?.queryTimeoutMs,
      }));
  } catch (error) {
    await walSet?.close();
    throw error;
  }
  let shipping: Shipping | null = null;
  try {
    if (walSet && options.storage?.clickhouse) shipping = await startShippers(walSet, options);
  } catch (error) {
    if (!options.engine) await engine.close();
    await walSet?.close();
    throw error;
  }
  const storage = walSet && sourceNames
    ? {
        walSet,
        ingestor: new Ingestor(walSet, sourceNames, options.now ?? (() => new Date()), undefined, memory && ((source, seq, lines) => memory.insert(source, seq, lines))),
        compactors: shipping ? [] : startCompactors(walSet, options, memory),
        shipping,
      }
    : null;
  try {
    return new EndpointsImpl(engine, options, storage);
  } catch (error) {
    // A bad cache option found after DuckDB opened: do not leave it (or the data dir) open.
    if (!options.engine) await engine.close();
    await walSet?.close();
    throw error;
  }
}

/** The WAL settings of the storage options. */
function walOptions(storage: StorageOptions) {
  const { maxSegmentBytes, maxPendingBytes, maxUncompactedBytes } = storage;
  // Shipped segments are what ClickHouse queries see: closed after a second, not a minute.
  const maxSegmentAgeMs = storage.maxSegmentAgeMs ?? (storage.clickhouse ? 1000 : undefined);
  return { maxSegmentBytes, maxSegmentAgeMs, maxPendingBytes, maxUncompactedBytes };
}

/** What queries of each source read from managed storage: its dataset and its committed WAL bytes. */
function managedSources(walSet: WalSet, memory: MemoryTables | undefined) {
  const out: Partial<Record<SourceName, ReturnType<typeof managedInputs>>> = {};
  for (const source of STORAGE_SOURCES) out[source] = managedInputs(walSet.dataDir, source, walSet.wals[source], memory);
  return out;
}

/**
 * One background compactor per source: closed segments into the dataset, small files merged,
 * days past retention dropped. Segments left closed by a previous process are compacted at once.
 */
function startCompactors(walSet: WalSet, options: EndpointsOptions, memory: MemoryTables | undefined): BackgroundCompactor[] {
  return STORAGE_SOURCES.map((source) => {
    const wal = walSet.wals[source];
    const compactor = new BackgroundCompactor({
      source,
      datasetDir: datasetDir(walSet.dataDir, source),
      walDir: walDir(walSet.dataDir, source),
      wal: {
        closedSegments: () => wal.closedSegments(),
        onSegmentClosed: (listener) => wal.onSegmentClosed(listener),
        // Committed to the dataset: the in-memory copies go (once older queries are done), then the files.
        release: async (paths) => {
          memory?.retire(source, paths.map((p) => segmentSeqOf(basename(p))).filter((n): n is number => n !== null));
          await wal.release(paths);
        },
      },
      retentionDays: options.storage?.retentionDays ?? 90,
      now: () => new Date(),
      duckdb: options.storage?.compactionDuckdb ?? { threads: 1, memoryLimit: '512MB' },
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
 * into ClickHouse, exactly once, then deleted. The loader is closed with the endpoints when it was
 * made here from options.
 */
async function startShippers(walSet: WalSet, options: EndpointsOptions): Promise<Shipping> {
  const config = options.storage!.clickhouse!;
  let target: ShipTarget;
  let close = async () => undefined as void;
  if (typeof (config as ShipTarget).insertAt === 'function') {
    target = config as ShipTarget;
  } else {
    // Loaded only here: instances without ClickHouse never load its code.
    const { clickhouseLoader } = await import('./engine/clickhouse/clickhouse-loader');
    const { batchRows, duckdb, ...server } = config as Exclude<typeof config, ShipTarget>;
    const loader = clickhouseLoader({ ...server, batchRows, duckdb: duckdb ?? options.storage?.compactionDuckdb ?? { threads: 1, memoryLimit: '512MB' } });
    target = loader;
    close = () => loader.close();
  }
  let instanceId: string;
  try {
    instanceId = await dataDirInstanceId(walSet.dataDir);
  } catch (error) {
    await close();
    throw error;
  }
  const shippers = STORAGE_SOURCES.map((source) => {
    const shipper = new ClickHouseShipper({
      source,
      wal: walSet.wals[source],
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

/** Shippers of an instance and how to close their target. */
interface Shipping {
  shippers: ClickHouseShipper[];
  close(): Promise<void>;
}

/** Managed storage of an instance: the locked WALs and the one ingest path into them. */
interface Storage {
  walSet: WalSet;
  ingestor: Ingestor;
  compactors: BackgroundCompactor[];
  shipping: Shipping | null;
}

/** Rows of one engine computation: what the cache stores. */
type Computed = CacheEntry;

class EndpointsImpl implements Endpoints {
  readonly definitions: readonly EndpointDescription[];
  private readonly clock: () => Date;
  private readonly realClock: CacheClock;
  private readonly counters: Omit<EndpointsStats, 'warmingKeys'> = {
    engineQueries: 0, engineFailures: 0,
    cacheHits: 0, cacheMisses: 0, warmingRefreshes: 0, warmingFailures: 0, cacheErrors: 0,
  };
  private readonly cache: CacheLayer;
  private closed = false;
  private readonly warned = new Set<string>();
  readonly storage: ManagedStorageInfo | null;

  constructor(
    private readonly engine: Engine,
    private readonly options: EndpointsOptions,
    private readonly managed: Storage | null = null,
  ) {
    this.clock = options.now ?? (() => new Date());
    this.storage = managed
      ? Object.freeze({
          dataDir: managed.walSet.dataDir,
          sources: managed.ingestor.sourceNames.names,
          resolveSource: (ref: string) => managed.ingestor.resolveSource(ref),
          recovered: Object.freeze(STORAGE_SOURCES.flatMap((s) => managed.walSet.wals[s].recovered)),
        })
      : null;
    this.realClock = options.cacheClock ?? realClock;
    const policies = effectivePolicies(DEFINITIONS, options.cachePolicy, options.cache !== false);
    // The listed policy is the one in force, overrides and `cache: false` included.
    this.definitions = DEFINITIONS.map((d) => Object.freeze({ ...describeDefinition(d), cache: policies.get(d.name) ?? null }));
    const store = options.cache === false ? null : (options.cache ?? memoryCache({ clock: this.realClock }));
    // Warming is bounded like the store: a memoryCache's entry bound, else 1000 keys.
    const storeBound = store && 'maxEntries' in store && typeof store.maxEntries === 'number' ? store.maxEntries : 1000;
    this.cache = new CacheLayer({
      store,
      policies,
      clock: this.realClock,
      scheduler: options.scheduler ?? timerScheduler,
      warmingConcurrency: options.warmingConcurrency ?? 2,
      maxWarmingKeys: options.maxWarmingKeys ?? storeBound,
      storeTimeoutMs: options.storeTimeoutMs ?? 250,
      counters: this.counters,
    });
  }

  async functionsInvocationStats(params: FunctionsInvocationStatsParams) {
    return (await this.query('functions.invocation-stats', params)).result;
  }

  async logsAll(params: LogsAllParams) {
    return (await this.query('logs.all', params)).result;
  }

  async usageApiCounts(params: UsageApiCountsParams) {
    return (await this.query('usage.api-counts', params)).result;
  }

  // Returns `any`: the interface's overloads give each call its precise type.
  async query(nameOrId: string, raw: object, options?: QueryOptions): Promise<any> {
    if (options?.format === 'arrow') return withArrowTable(await this.query(nameOrId, raw), findDefinition(nameOrId).columns);
    this.assertOpen();
    const definition = findDefinition(nameOrId);
    // Validation comes first: a bad parameter never reaches the cache or the engine.
    const params = await this.validate(definition, raw as RawParams);
    const { entry, status, policy } = await this.cache.read(definition, params, () => this.compute(definition, params));
    return this.answer(definition, entry, status, policy);
  }

  async catalog(options?: CatalogOptions): Promise<Catalog> {
    this.assertOpen();
    const { since, requests } = catalogRequests(this.clock(), options);
    const [projects, functions] = await Promise.all(requests.map((r) => this.engine.run(r)));
    return mergeCatalog(since, projects!, functions!);
  }

  async ingest(source: string, events: readonly object[]): Promise<IngestResult> {
    this.assertOpen();
    if (!this.managed) {
      throw new NotFoundError('This instance has no managed storage: pass storage: { dataDir } to createEndpoints to ingest events.');
    }
    return this.managed.ingestor.ingest(source, events);
  }

  async inspectSources() {
    this.assertOpen();
    return this.engine.inspectSources();
  }

  async ping() {
    this.assertOpen();
    return this.engine.ping();
  }

  now(): Date {
    return this.clock();
  }

  cacheClock(): number {
    return this.realClock();
  }

  stats(): EndpointsStats {
    const stats: EndpointsStats = { ...this.counters, warmingKeys: this.cache.warmingKeys };
    if (this.managed) {
      const sum = (pick: (c: BackgroundCompactor['counters']) => number) => this.managed!.compactors.reduce((n, c) => n + pick(c.counters), 0);
      stats.storage = {
        walBytes: STORAGE_SOURCES.reduce((n, s) => n + this.managed!.walSet.wals[s].bytes.disk, 0),
        pendingBytes: STORAGE_SOURCES.reduce((n, s) => n + this.managed!.walSet.wals[s].bytes.pending, 0),
        compactedSegments: sum((c) => c.compactedSegments),
        compactionFailures: sum((c) => c.failures),
        mergedFiles: sum((c) => c.mergedFiles),
        droppedFiles: sum((c) => c.droppedFiles),
      };
      const shippers = this.managed.shipping?.shippers;
      if (shippers) {
        const shipped = (pick: (c: ClickHouseShipper['counters']) => number) => shippers.reduce((n, c) => n + pick(c.counters), 0);
        stats.storage.shippedSegments = shipped((c) => c.shippedSegments);
        stats.storage.shippedEvents = shipped((c) => c.shippedEvents);
        stats.storage.shippingFailures = shipped((c) => c.failures);
      }
    }
    return stats;
  }

  async close() {
    if (this.closed) return;
    this.closed = true;
    this.cache.stop();
    try {
      // A compaction that is running finishes (or is left for the next start: it is crash safe).
      await Promise.all(this.managed?.compactors.map((c) => c.stop()) ?? []);
      // So does a segment being shipped; what is left ships at the next start.
      await Promise.all(this.managed?.shipping?.shippers.map((s) => s.stop()) ?? []);
      // Events accepted before close are written (and their callers answered) first.
      await this.managed?.walSet.close();
      await this.managed?.shipping?.close();
    } finally {
      await this.engine.close();
    }
    // A refresh that was running ends (the engine refuses it now) before close resolves.
    await this.cache.settled();
  }

  /** Parameters as the cache keys them; a bad one never reaches the engine or the cache. */
  private async validate(definition: EndpointDefinition, raw: RawParams): Promise<NormalizedParams> {
    const params = normalizeParams(definition, raw ?? {});
    for (const spec of definition.params) {
      const value = params[spec.name];
      if (spec.format !== 'regex' || value === null || value === undefined) continue;
      // RE2 as DuckDB compiles it first, whatever the engine: the same pattern gets the same
      // answer everywhere (src/engine/re2-pattern.ts); the engine may refuse more.
      const problem = (await re2PatternProblem(value)) ?? (await this.engine.checkPattern(value));
      if (problem !== null) {
        throw new InvalidParameterError(spec.name, `Parameter "${spec.name}" is not a valid regular expression: ${problem}`);
      }
    }
    return params;
  }

  /** One engine computation: windows from the clock, the query, then row shaping. */
  private async compute(definition: EndpointDefinition, params: NormalizedParams): Promise<Computed> {
    const now = this.clock();
    // A real instant, whatever `now` replays: the result's age and lifetime start here.
    const computedAt = new Date(this.realClock()).toISOString();
    const plan = definition.plan(params, now);
    this.counters.engineQueries++;
    let engineResult;
    try {
      engineResult = await this.engine.run(engineRequest(definition, plan));
    } catch (error) {
      this.counters.engineFailures++;
      throw error;
    }
    let rows = engineResult.rows;
    if (this.options.fillEmptyBuckets && definition.buckets) rows = fillBuckets(rows, definition.buckets(params, now));
    const skippedFiles = engineResult.skippedFiles ?? [];
    this.warnSkipped(skippedFiles);
    return {
      rows: shapeRows(definition.columns, rows.slice(0, definition.maxRows)),
      computedAt,
      engineMs: engineResult.engineMs,
      ...(skippedFiles.length ? { skippedFiles } : {}),
    };
  }

  private answer(definition: EndpointDefinition, computed: Computed, cache: CacheStatus, policy: CachePolicy | null): QueryResult {
    const computedAt = new Date(computed.computedAt);
    const ageSeconds = Math.max(0, (this.realClock() - computedAt.getTime()) / 1000);
    return {
      result: computed.rows,
      endpoint: { name: definition.name, id: definition.id },
      cache,
      computedAt: computedAt.toISOString(),
      ageSeconds,
      ttlRemainingSeconds: policy ? Math.max(0, policy.ttlSeconds - ageSeconds) : null,
      engineMs: computed.engineMs,
      skippedFiles: computed.skippedFiles ?? [],
    };
  }

  /** Tells `onWarning` about each skipped file once (per path, reason and message). */
  private warnSkipped(files: readonly SkippedFile[]): void {
    const hook = this.options.onWarning;
    if (!hook) return;
    for (const file of files) {
      const key = `${file.path}\0${file.reason}\0${file.message}`;
      if (this.warned.has(key)) continue;
      if (this.warned.size > 10_000) this.warned.clear();
      this.warned.add(key);
      try {
        hook({ code: 'file_skipped', message: `${file.path} is left out of answers: ${file.message}`, file });
      } catch {
        // A failing hook must not fail the query.
      }
    }
  }

  private assertOpen() {
    if (this.closed) throw new EngineError('closed', 'The endpoints were closed.');
  }
}
