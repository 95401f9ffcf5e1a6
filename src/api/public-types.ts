import type { Table } from 'apache-arrow';
import type { CacheCounters, CacheStatus } from '../cache/cache-layer';
import type { CachePolicyOverrides } from '../cache/cache-policy';
import type { CacheClock } from '../cache/real-clock';
import type { ResultCache } from '../cache/result-cache';
import type { CacheScheduler } from '../util/scheduler';
import type { SegmentKeeper } from '../managed/segment-keeper';
import type { Catalog, CatalogOptions } from '../definitions/catalog';
import type { AnyEndpointDefinition, CallParams, DefinitionParams, DefinitionRow, IgnoredParams } from '../definitions/definition';
import type { EndpointDescription } from '../definitions/describe';
import type { BuiltInEndpoint, EndpointName } from '../definitions/registry';
import type { ColumnSpec } from '../definitions/columns';
import type { MethodName } from '../definitions/method-name';
import type { Engine, SourceInspection, SourceName } from '../engine/engine';
import type { DuckDBBytes } from '../duckdb/duckdb-bytes';
import type { SourceGlobs } from '../engine/duckdb/duckdb-engine';
import type { IngestResult } from '../managed/ingestor';
import type { StorageOptions } from '../managed/storage-options';
import type { ManagedStorageInfo, ManagedStorageStats, ManagedStorageWarning } from '../managed/managed-storage-types';

export type { ManagedStorageInfo, ManagedStorageStats, ManagedStorageWarning };
import type { Row } from '../rows/shape-rows';
import type { SourceDescriptor } from '../sources/source-descriptor';
import type { SkippedFile } from '../files/file-checks';
import type { CallerDialect } from '../sandbox/validate-caller-sql';
import type { WireFormat } from '../rows/logflare-wire';

/** Raw parameters as they arrive: query-string text (numbers and Dates are accepted where typed). */
export type RawParams = Readonly<Record<string, unknown>>;

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
  /**
   * The process's memory budget, a size such as `'512MB'` (docs/operations.md, "Memory"). Default:
   * 512 MiB, or 75 % of the container's limit (cgroup `memory.max`) when that is smaller. DuckDB's
   * queries get 40 % of it and managed storage's compaction 15 % (one compaction at a time); past
   * its share an operator spills to the data dir, and a caller's query that still does not fit,
   * or that grows the process past the budget, fails with `memory_limit` while the rest goes on.
   */
  memoryLimit?: string;
  /** In-process DuckDB settings: `memoryLimit` here replaces the queries' share of the budget. */
  duckdb?: { threads?: number; memoryLimit?: string };
  /** Limits every entry point gets: concurrency, wait queue and time per engine query. */
  limits?: { maxConcurrentQueries?: number; maxQueuedQueries?: number; queryTimeoutMs?: number };
  /** Return empty buckets of functions.invocation-stats too (count 0, null statistics). Off by default. */
  fillEmptyBuckets?: boolean;
  /** Use another engine instead of the built-in DuckDB one (the `sources`, `duckdb` and `limits` options are then its business). */
  engine?: Engine;
  /**
   * Endpoints of your own, beside the three built-ins: definitions made with `defineEndpoint`.
   * A name or UUID that another endpoint has is an `InvalidOptionError`.
   */
  endpoints?: readonly AnyEndpointDefinition[];
  /** Log sources of your own, beside the two built-ins: descriptors made with `defineSource`. */
  sourceDefinitions?: readonly SourceDescriptor[];
  /**
   * Self-hosted installs where every event belongs to one project: the `project` parameter of
   * the built-in endpoints (and of definitions with a `projectParam`) is accepted and ignored.
   * Off by default. On ClickHouse, statements test the project as `<column> = {project:String}`
   * (or a `match` of it), which the engine drops (docs/clickhouse.md, "Single project").
   */
  singleProject?: boolean;
  /**
   * Whether `logs.all` keeps only its tier's retention window (`project_tier`: FREE 1 day, PRO 7
   * days, ...). Default true. `false` (the Supabase preset: Studio sends no tier, and self-hosted
   * Logflare has no window): `project_tier` is accepted and ignored, and only the time bounds (and
   * the storage's retention) limit the rows, so the Logs Explorer's "Last 7 days" is the week.
   * Definitions name their tier parameter with `tierParam`.
   */
  tierWindow?: boolean;
  /**
   * Endpoints whose callers may send their own SELECT over the endpoint's CTEs (`sql`, see
   * docs/sandboxing.md), beside those defined as `sandboxable`. The built-ins are not, unless named
   * here: `logs.all` then exposes `edge_logs` (and empty tables of the other Logflare sources),
   * already limited to the project, tier window (see `tierWindow`) and time bounds.
   */
  sandboxable?: readonly (EndpointName | (string & {}))[];
  /**
   * The dialect of callers' SQL (`sql`): `'duckdb'` (default) or `'bigquery'`, what Supabase
   * Studio writes over Logflare's tables, translated for the engine and then checked by the same
   * rules (docs/sandboxing.md, "BigQuery dialect"). BigQuery SQL reads source tables (logs.all's).
   */
  sqlDialect?: CallerDialect;
  /**
   * How answers to callers' SQL are written: `'iso'` (default: ISO timestamps, plain objects) or
   * `'logflare'`, Logflare's wire format: timestamps as integers of unix microseconds, JSON objects
   * wrapped in one-element arrays, recursively (what Supabase Studio reads: docs/supabase.md).
   */
  wireFormat?: WireFormat;
  /**
   * Told once per file (and reason) when an answer leaves a file out because it cannot be read:
   * damaged Parquet, broken compression, unreadable. Answers carry `skippedFiles` either way.
   */
  onWarning?: (warning: EndpointsWarning) => void;
  /**
   * Told of each batch once it is durable, before its ingest is answered: the source and the
   * batch's lines as stored (UTF-8 JSON, one event per line): it must return at once and never
   * throw; it cannot fail or slow the ingest. (Log drains read the write-ahead log instead: `segmentKeeper`.)
   */
  onIngested?: (source: SourceName, lines: Uint8Array) => void;
  /**
   * With `storage`: reads the write-ahead log after ingest and keeps the closed segments it has
   * yet to read when compaction is done with them: log drains' `DrainLog`, also given to
   * `openDrains` (docs/supabase.md, "Log Drains").
   */
  segmentKeeper?: SegmentKeeper;
}

/**
 * Something a user should know that did not fail the call.
 *
 * @example
 * const ep = await createEndpoints({ sources, onWarning: (w) => console.warn(w.message) });
 */
export type EndpointsWarning = { code: 'file_skipped'; message: string; file: SkippedFile } | ManagedStorageWarning;

export type { CacheStatus };

/** The answer of `query`: `result` is exactly the rows of the HTTP API's JSON body. */
export interface QueryResult<R = Row> {
  result: R[];
  endpoint: { name: string; id: string };
  cache: CacheStatus;
  /** When the rows were computed (ISO 8601, the cache's real clock: a real instant even under a replayed `now`). */
  computedAt: string;
  /** Seconds since the rows were computed, on the real clock. */
  ageSeconds: number;
  /** Seconds the rows may still be served from the cache; null when the endpoint is not cached. */
  ttlRemainingSeconds: number | null;
  /** Milliseconds the engine spent on the rows (of the computation that produced them). */
  engineMs: number;
  /** With `sql`: the columns the caller's SELECT returned, typed as the rows are; absent otherwise (the endpoint's columns). */
  columns?: readonly ColumnSpec[];
  /**
   * Files the rows leave out because they could not be read (damaged Parquet, broken compression,
   * unreadable, bytes not matching their commit's checksum), or not yet (managed storage's backlog
   * being recovered after a crash: reason `recovering`), with the reason; empty when every file was
   * read, so every acknowledged event is in the rows. Vanished files are not here:
   * a file gone between listing and reading is simply absent (the query lists again).
   */
  skippedFiles: SkippedFile[];
}

/** Options of one `query` call. */
export interface QueryOptions {
  /** `'arrow'` adds the rows as an Arrow `Table` (`table`), typed by the endpoint's columns. */
  format?: 'rows' | 'arrow';
  /**
   * A SELECT over the endpoint's CTEs that replaces its outer SELECT, on sandboxable endpoints
   * (docs/sandboxing.md). Refused with `InvalidSqlError` (400 `invalid_sql`) when it breaks a
   * sandbox rule; on other endpoints, `InvalidParameterError` (`sql`).
   */
  sql?: string;
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
/**
 * What `ep.health()` and `GET /health` tell (docs/http.md, "Health").
 *
 * @example
 * const { status, degraded } = await ep.health(); // { status: 'ok', degraded: ['clickhouse'] }
 */
export interface HealthReport {
  status: 'ok' | 'unavailable';
  /**
   * Parts that do not work now while the rest does: `engine` (the query engine did not answer a
   * trivial query in time: busy or stuck), `clickhouse` (a ClickHouse engine that does not answer,
   * or shipping to ClickHouse failing; events wait, durable, in the log), `storage` (ingest refuses
   * events after a failed fsync until restarted; the status is then `unavailable`).
   */
  degraded: Array<'engine' | 'clickhouse' | 'storage'>;
}

export interface EndpointsStats extends CacheCounters {
  engineQueries: number;
  engineFailures: number;
  /** Events acknowledged by `ingest` and the HTTP ingest routes. */
  ingestedEvents: number;
  /** Of those, events of bodies acknowledged again without being stored (a retry of a body acknowledged lately). */
  repeatedEvents: number;
  /** Queries and ingests answered with an error, by its code (`memory_limit`, `overloaded`, `invalid_sql`, ...). */
  refusals: Record<string, number>;
  /**
   * Managed storage, when configured: bytes in the write-ahead log (on disk, accepted but not
   * yet fsynced), and what background compaction did (segments compacted, failed runs, small files
   * merged, files dropped by retention).
   */
  storage?: ManagedStorageStats;
  /** Keys this instance keeps warm now (read within their last lifetime). */
  warmingKeys: number;
  /**
   * The process's memory against its budget (`memoryLimit`, docs/operations.md): the budget, the
   * resident bytes now, V8's heap and the bytes of JavaScript's buffers outside it; and what each
   * DuckDB instance holds by its role (`queries`: the DuckDB engine's, with the memory tables; none
   * with the ClickHouse engine; `compaction`: managed storage's compaction run going on, zero
   * between runs; none without managed storage or while it ships to ClickHouse), as DuckDB counts
   * it and read every few seconds.
   */
  memory: { budgetBytes: number; residentBytes: number; heapBytes: number; externalBytes: number; duckdb: Array<DuckDBBytes & { instance: 'queries' | 'compaction' }> };
}

/** Maps each built-in endpoint's name to its parameter and row types. */
export type EndpointTypes = { [D in BuiltInEndpoint as D['name']]: { params: DefinitionParams<D>; row: DefinitionRow<D> } };

/** The definition named `N` among `D`. */
type Named<D, N> = D extends { name: N } ? D : never;

/** A name that is not one of `Known`: the untyped call takes only these (and UUIDs). */
type UnknownName<S extends string, Known extends string> = S extends Known ? never : S;

/**
 * The endpoints of one set of log sources: the built-ins and `D`, the user's definitions. Calls
 * by name are typed from the definitions: a missing or misspelt parameter is a compile error.
 * Each endpoint is also a method of its own, named after it (`EndpointMethods`).
 *
 * @example
 * const ep: Endpoints<typeof errorsByPath> = await createEndpoints({ sources, endpoints: [errorsByPath] });
 * const rows = await ep.errorsByPath({ project: 'abc' });
 */
export interface Endpoints<D extends AnyEndpointDefinition = never> extends EndpointsCore<D>, EndpointMethods<BuiltInEndpoint> {}

/**
 * The endpoints of an instance whose options make parameters accepted and ignored (`I`:
 * `'project'` with `singleProject: true`, `'tier'` with `tierWindow: false`): an `Endpoints` whose
 * typed calls, by name and by method, also take those parameters missing (`CallParams`). What
 * `createEndpoints` returns for such options; it goes wherever an `Endpoints` is taken.
 *
 * @example
 * const ep: EndpointsIgnoring<'project'> = await createEndpoints({ sources, singleProject: true });
 * const rows = await ep.usageApiCounts({ interval: 'daily' });
 */
export type EndpointsIgnoring<I extends IgnoredParams, D extends AnyEndpointDefinition = never> = Endpoints<D> & EndpointsCore<D, I> & EndpointMethods<BuiltInEndpoint, I>;

/**
 * A method per endpoint, derived from its definition: the name camelCased (`usage.api-counts` is
 * `usageApiCounts`, `errors.by-path` is `errorsByPath`), the typed parameters in, the rows out
 * (`query(name, params).result`). A name that would shadow a member of `Endpoints` (`query`,
 * `close`, ...) gets no method; call it with `query`.
 *
 * @example
 * const rows: UsageApiCountsRow[] = await ep.usageApiCounts({ project: 'abc', interval: 'daily' });
 */
export type EndpointMethods<D extends AnyEndpointDefinition, I extends IgnoredParams = never> = {
  [K in D as string extends K['name'] ? never : Exclude<MethodName<K['name']>, keyof EndpointsCore<never>>]: (params: CallParams<K, I>) => Promise<DefinitionRow<K>[]>;
};

/** The members of `Endpoints` other than the endpoints' own methods. */
export interface EndpointsCore<D extends AnyEndpointDefinition = never, I extends IgnoredParams = never> {
  /** An endpoint by name, typed from its definition. */
  query<N extends (BuiltInEndpoint | D)['name']>(name: N, params: CallParams<Named<BuiltInEndpoint | D, N>, I>): Promise<QueryResult<DefinitionRow<Named<BuiltInEndpoint | D, N>>>>;
  /** The same, with the rows as an Arrow table too (timestamps in microseconds, integers as Int64). */
  query<N extends (BuiltInEndpoint | D)['name']>(
    name: N,
    params: CallParams<Named<BuiltInEndpoint | D, N>, I>,
    options: { format: 'arrow'; sql?: string },
  ): Promise<ArrowQueryResult<DefinitionRow<Named<BuiltInEndpoint | D, N>>>>;
  /** A caller's SELECT over the endpoint's CTEs (sandboxable endpoints): rows of its own columns. */
  query<N extends (BuiltInEndpoint | D)['name']>(name: N, params: CallParams<Named<BuiltInEndpoint | D, N>, I>, options: QueryOptions & { sql: string }): Promise<QueryResult>;
  query<N extends (BuiltInEndpoint | D)['name']>(
    name: N,
    params: CallParams<Named<BuiltInEndpoint | D, N>, I>,
    options: QueryOptions,
  ): Promise<QueryResult<DefinitionRow<Named<BuiltInEndpoint | D, N>>>>;
  /**
   * Any endpoint by UUID, or by a name only known at run time, with text parameters as they come
   * from a query string. A known name never takes this untyped form.
   */
  query<S extends string>(nameOrId: UnknownName<S, (BuiltInEndpoint | D)['name']>, params: RawParams): Promise<QueryResult>;
  query<S extends string>(nameOrId: UnknownName<S, (BuiltInEndpoint | D)['name']>, params: RawParams, options: { format: 'arrow'; sql?: string }): Promise<ArrowQueryResult>;
  query<S extends string>(nameOrId: UnknownName<S, (BuiltInEndpoint | D)['name']>, params: RawParams, options: QueryOptions): Promise<QueryResult>;
  /** The endpoints' definitions (built-ins first): name, UUID, parameters, columns, max rows, cache policy in force. */
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
  /**
   * Whether the instance works, within `timeoutMs` (default 500) whatever the engine is doing
   * (docs/http.md, "Health"): `unavailable` once closed or when ingest refuses every event (a
   * failed fsync), else `ok` with the parts that do not answer now in `degraded`.
   */
  health(options?: { timeoutMs?: number }): Promise<HealthReport>;
  /** The instant windows are placed at now (the `now` option's clock). */
  now(): Date;
  /** Milliseconds on the cache's real clock (the `cacheClock` option): what ages and lifetimes are measured with. */
  cacheClock(): number;
  stats(): EndpointsStats;
  /**
   * Appends events to managed storage (docs/durability.md) and resolves once they are durable (fsynced).
   * `source` is a Logflare name of one of the instance's sources (`cloudflare.logs.prod`,
   * `deno-relay-logs`, yours, or one of `storage.sourceNames`; in any letter case), its fixed UUID,
   * or the source's own name (`edgeLogs`). All or nothing: a
   * bad event rejects the call with `InvalidBodyError` (its `index` says which) and keeps none.
   * Fails with `not_found` when `createEndpoints` got no `storage`.
   */
  ingest(source: string, events: readonly object[]): Promise<IngestResult>;
  /** Managed storage, when `storage` was given: its folder and the source names ingest accepts. */
  readonly storage: ManagedStorageInfo | null;
  /** The instance's log sources (the built-ins, then `sourceDefinitions`'), as their descriptors. */
  readonly sources: readonly SourceDescriptor[];
  /** Stops all cache warming, flushes and closes managed storage, releases DuckDB; later calls fail with a `closed` error. */
  close(): Promise<void>;
}
