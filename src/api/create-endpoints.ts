import { join } from 'node:path';
import { ManagedStorage } from '../managed/managed-storage';
import { shipTargetOf } from './ship-target';
import { CallerSqlCheck } from '../query/check-caller-sql';
import { AcceptCallerSql } from '../query/accept-caller-sql';
import { acceptParams, patternJudge, type PatternJudge } from '../query/accept-params';
import { DefinitionsInForce } from '../query/definitions-in-force';
import { answerOf, computedEntry } from './shape-answer';
import { SkippedFileWarnings } from './skipped-file-warnings';
import { EngineAnswers } from './engine-answers';
import { checkDefinitions, type NewestFirstHeads } from '../query/check-definitions';
import { neutralSqlParser } from '../query/sql-parser';
import { compileCall, compileQuery } from '../query/compile-query';
import type { EndpointMethods, Endpoints, EndpointsCore, EndpointsIgnoring, EndpointsOptions, EndpointsStats, HealthReport, ManagedStorageInfo, QueryOptions, RawParams } from './public-types';
import { CacheLayer } from '../cache/cache-layer';
import { effectivePolicies } from '../cache/cache-policy';
import { memoryCache } from '../cache/memory-cache';
import { realClock, type CacheClock } from '../cache/real-clock';
import type { CacheEntry } from '../cache/result-cache';
import { timerScheduler } from '../util/scheduler';
import { catalogRequests, mergeCatalog, type Catalog, type CatalogOptions } from '../definitions/catalog';
import type { AnyEndpointDefinition, IgnoredParams, NormalizedParams } from '../definitions/definition';
import { describeDefinition, type EndpointDescription } from '../definitions/describe';
import { methodName } from '../definitions/method-name';
import { planQuery } from '../definitions/plan-query';
import { BUILT_IN_ENDPOINTS, endpointSet, type EndpointSet } from '../definitions/registry';
import { createDuckDBEngine } from '../engine/duckdb/duckdb-engine';
import type { Engine } from '../engine/engine';
import { EngineError, LogEndpointsError, NotFoundError } from '../errors';
import { INGEST_BODY, INGEST_FROM_BODY, type BodyIngest, type BodyOrigin, type IngestResult } from '../managed/ingestor';
import { checkEndpointsOptions, checkEngineSources, checkSourceGlobs } from './check-options';
import { RESOLVE_ENDPOINT, type EndpointResolver, type ResolvedEndpoint } from './resolved-endpoint';
import { fillBuckets } from '../rows/fill-buckets';
import { withArrowTable } from '../rows/to-arrow';
import { BUILT_IN_SOURCE_SET } from '../sources/built-ins';
import type { SourceSet } from '../sources/source-set';
import { LiveSourceSet } from '../sources/live-source-set';
import type { SourceDescriptor } from '../sources/source-descriptor';
import type { CheckedSql } from '../sandbox/validate-caller-sql';
import { systemNow } from '../time/clock';
import { memoryBudget, type MemoryBudget } from '../duckdb/memory-budget';
import type { DatabaseSettings } from '../duckdb/open-database';

export type * from './public-types';

/** The folder of a data dir DuckDB spills into past its memory share (its files go when a query ends). */
const SPILL_DIR = '.duckdb-spill';

/**
 * The parameters options ignore, at the type level: the project with `singleProject: true`, the
 * tier with `tierWindow: false` (a `boolean` not known to be either ignores nothing).
 */
type IgnoredBy<S, W> = ([S] extends [true] ? 'project' : never) | ([W] extends [false] ? 'tier' : never);

/** What `createEndpoints` returns: the endpoints with a method per definition, their ignored parameters optional. */
type Made<D extends AnyEndpointDefinition, I extends IgnoredParams> = [I] extends [never] ? Endpoints<D> & EndpointMethods<D> : EndpointsIgnoring<I, D> & EndpointMethods<D> & EndpointMethods<D, I>;

/**
 * Creates the endpoints over your log files, computed by an in-process DuckDB: the three
 * built-ins and your own (`endpoints`), typed from their definitions. With `singleProject: true`
 * (and `tierWindow: false`) the project (the tier) is optional in the typed calls too.
 *
 * @example
 * const ep = await createEndpoints({ sources: { edgeLogs: 'logs/edge/*.ndjson', functionEdgeLogs: 'logs/fn/*.parquet' } });
 * const rows = await ep.usageApiCounts({ project: 'abc', interval: 'daily' });
 * await ep.close();
 */
export async function createEndpoints<const D extends readonly AnyEndpointDefinition[] = [], const S extends boolean = false, const W extends boolean = true>(
  options: EndpointsOptions & { endpoints?: D; singleProject?: S; tierWindow?: W },
): Promise<Made<D[number], IgnoredBy<S, W>>> {
  checkEndpointsOptions(options);
  // The instance's own sources, passed to everything below: two instances never share them.
  const declared = BUILT_IN_SOURCE_SET.extend(options.sourceDefinitions);
  checkSourceGlobs(options, declared);
  checkEngineSources(options.engine, declared);
  const endpoints = endpointSet(options.endpoints);
  // One memory budget for the process (docs/operations.md, "Memory"): each DuckDB gets a share, and
  // operators past their share spill into the data dir before a query fails.
  const budget = memoryBudget(options.memoryLimit);
  const tempDirectory = options.storage ? join(options.storage.dataDir, SPILL_DIR) : undefined;
  const compactionDuckdb: DatabaseSettings = options.storage?.compactionDuckdb ?? { ...budget.compaction, tempDirectory };
  // Storage first: a data dir locked by another process fails before DuckDB starts.
  // Compaction runs on its share of the budget: the same settings open and start it.
  // With the built-in engine, each source also has the typed fields its datasets hold, growing
  // while the instance runs (docs/durability.md, "Discovered fields"): each request reads the set
  // in force when it begins.
  const sources = new LiveSourceSet(declared);
  const onTypedPaths = options.engine ? undefined : (source: string, paths: readonly string[]) => void sources.widen(source, paths);
  const managedOptions = options.storage ? { ...options, storage: { ...options.storage, compactionDuckdb }, onTypedPaths } : null;
  const managed = managedOptions ? await ManagedStorage.open(declared, managedOptions, budget.memoryTablesBytes) : null;
  let engine: Engine | null = null;
  try {
    engine =
      options.engine ??
      (await createDuckDBEngine({
        sourceSet: declared,
        sources: options.sources ?? {},
        onTypedPaths,
        extraInputs: managed?.inputs(),
        memory: managed?.memory,
        // duckdb.memoryLimit / threads, when given, replace the queries' share of the budget.
        threads: options.duckdb?.threads ?? (options.duckdb?.memoryLimit === undefined ? budget.queries.threads : undefined),
        memoryLimit: options.duckdb?.memoryLimit ?? budget.queries.memoryLimit,
        tempDirectory,
        memoryCeilingBytes: budget.bytes,
        maxConcurrentQueries: options.limits?.maxConcurrentQueries,
        maxQueuedQueries: options.limits?.maxQueuedQueries,
        queryTimeoutMs: options.limits?.queryTimeoutMs,
      }));
    // Callers' SQL is checked on the parser's tree for the engine's target, never by the engine.
    const check = new CallerSqlCheck(engine.target, neutralSqlParser, options.sqlDialect);
    const callers = new AcceptCallerSql(check, sandboxableNames(endpoints, options));
    const heads = await checkDefinitions(endpoints, engine.target, { sources: declared, parser: neutralSqlParser, callers: check, sandboxable: callers.sandboxable });
    if (managed && managedOptions) await managed.start(managedOptions, await shipTargetOf(managedOptions.storage, declared));
    return new EndpointsImpl({ engine, options, endpoints, managed, sources, budget, callers, heads }) as unknown as Made<D[number], IgnoredBy<S, W>>;
  } catch (error) {
    // Nothing stays open behind a failed start: not DuckDB, not the data dir.
    if (engine && !options.engine) await engine.close().catch(() => undefined);
    await managed?.close().catch(() => undefined);
    throw error;
  }
}

/** Endpoints that take a caller's SELECT: defined so, or named in the `sandboxable` option. */
function sandboxableNames(endpoints: EndpointSet, options: EndpointsOptions): ReadonlySet<string> {
  return new Set(endpoints.list.filter((d) => d.sandboxable || (options.sandboxable ?? []).includes(d.name)).map((d) => d.name));
}

/** What an instance is made of: `createEndpoints` opens them, the instance owns them from then on. */
interface Parts {
  engine: Engine;
  options: EndpointsOptions;
  endpoints: EndpointSet;
  managed: ManagedStorage | null;
  sources: LiveSourceSet;
  budget: MemoryBudget;
  callers: AcceptCallerSql;
  /** What each newest-first endpoint lets the engine read from compacted files' heads (checked at start). */
  heads: ReadonlyMap<string, NewestFirstHeads>;
}

/** Rows of one engine computation: what the cache stores. */
type Computed = CacheEntry;

/**
 * The members of `Endpoints` besides the endpoints' methods: an endpoint whose method name is one
 * of them gets no method (`EndpointMethods` leaves it out the same way).
 */
const CORE_MEMBER_NAMES = [
  'query',
  'definitions',
  'catalog',
  'inspectSources',
  'ping',
  'now',
  'cacheClock',
  'stats',
  'ingest',
  'storage',
  'sources',
  'health',
  'close',
] as const satisfies ReadonlyArray<keyof EndpointsCore>;
const CORE_MEMBERS: ReadonlySet<string> = new Set(CORE_MEMBER_NAMES);
// Compile-time: a member added to EndpointsCore and not to the list is an error here.
const EVERY_MEMBER_LISTED: [Exclude<keyof EndpointsCore, (typeof CORE_MEMBER_NAMES)[number]>] extends [never] ? true : never = true;
void EVERY_MEMBER_LISTED;

class EndpointsImpl implements EndpointsCore<AnyEndpointDefinition>, BodyIngest, EndpointResolver {
  readonly definitions: readonly EndpointDescription[];
  /** Each definition's entry of `definitions`, for the one look-up of a request (`RESOLVE_ENDPOINT`). */
  readonly #descriptions = new Map<AnyEndpointDefinition, EndpointDescription>();
  readonly storage: ManagedStorageInfo | null;
  readonly #clock: () => Date;
  readonly #realClock: CacheClock;
  readonly #counters: Omit<EndpointsStats, 'warmingKeys' | 'memory' | 'storage' | 'ingestedEvents' | 'repeatedEvents' | 'refusals'> = {
    engineQueries: 0,
    engineFailures: 0,
    cacheHits: 0,
    cacheMisses: 0,
    warmingRefreshes: 0,
    warmingFailures: 0,
    cacheErrors: 0,
  };
  readonly #cache: CacheLayer;
  #closed = false;
  readonly #warnings: SkippedFileWarnings;
  readonly #engineAnswers: EngineAnswers;
  readonly #inForce: DefinitionsInForce;
  readonly #judgePattern: PatternJudge;

  readonly #engine: Engine;
  readonly #options: EndpointsOptions;
  readonly #endpoints: EndpointSet;
  readonly #budget: MemoryBudget;
  #ingestedEvents = 0;
  #repeatedEvents = 0;
  readonly #refusals: Record<string, number> = {};
  readonly #managed: ManagedStorage | null;

  readonly #callers: AcceptCallerSql;
  readonly #heads: ReadonlyMap<string, NewestFirstHeads>;
  /** The sources as requests read them: each takes `current` once, when it begins. */
  readonly #sources: LiveSourceSet;

  constructor({ engine, options, endpoints, managed, sources, budget, callers, heads }: Parts) {
    this.#callers = callers;
    this.#heads = heads;
    this.#sources = sources;
    this.#warnings = new SkippedFileWarnings(options.onWarning);
    this.#engineAnswers = new EngineAnswers(engine);
    this.#inForce = new DefinitionsInForce(options);
    this.#judgePattern = patternJudge(engine, options.engine === undefined);
    this.#budget = budget;
    this.#engine = engine;
    this.#options = options;
    this.#endpoints = endpoints;
    this.#managed = managed;
    this.#clock = options.now ?? systemNow;
    this.storage = managed?.info ?? null;
    this.#realClock = options.cacheClock ?? realClock;
    const policies = effectivePolicies(endpoints.list, options.cachePolicy, options.cache !== false);
    const builtIn = new Set<AnyEndpointDefinition>(BUILT_IN_ENDPOINTS);
    // The listed policy is the one in force, overrides and `cache: false` included.
    this.definitions = endpoints.list.map((d) => {
      const description = describeDefinition(this.#inForce.of(d), {
        cache: policies.get(d.name) ?? null,
        sandboxed: callers.sandboxable.has(d.name),
        builtIn: builtIn.has(d),
      });
      this.#descriptions.set(d, description);
      return description;
    });
    const store = options.cache === false ? null : (options.cache ?? memoryCache({ clock: this.#realClock }));
    // Warming is bounded like the store: a memoryCache's entry bound, else 1000 keys.
    const storeBound = store && 'maxEntries' in store && typeof store.maxEntries === 'number' ? store.maxEntries : 1000;
    this.#cache = new CacheLayer({
      store,
      policies,
      clock: this.#realClock,
      scheduler: options.scheduler ?? timerScheduler,
      warmingConcurrency: options.warmingConcurrency ?? 2,
      maxWarmingKeys: options.maxWarmingKeys ?? storeBound,
      storeTimeoutMs: options.storeTimeoutMs ?? 250,
      counters: this.#counters,
    });
    // Each endpoint's own method (`ep.usageApiCounts(params)`: the rows of `query`), derived
    // from the definitions once per instance: a call costs what `query` does.
    for (const d of endpoints.list) {
      const method = methodName(d.name);
      if (CORE_MEMBERS.has(method)) continue;
      Object.defineProperty(this, method, { value: async (params: object) => (await this.query(d.name, params)).result, enumerable: false });
    }
  }

  /** The sources with the typed fields requests read now (they grow as compaction discovers fields). */
  get sources(): readonly SourceDescriptor[] {
    return this.#sources.current.list;
  }

  // Returns `any`: the interface's overloads give each call its precise type.
  async query(nameOrId: string, raw: object, options?: QueryOptions): Promise<any> {
    return this.#counted(() => this.#query(nameOrId, raw, options));
  }

  [RESOLVE_ENDPOINT](nameOrId: string): ResolvedEndpoint {
    const found = this.#endpoints.lookup(nameOrId);
    return {
      description: found && this.#descriptions.get(found)!,
      // Unknown, it is refused (and counted) by the same path as `query`'s, when it is queried.
      query: (raw, options) => this.#counted(() => this.#query(found ?? nameOrId, raw, options)),
    };
  }

  /** `target`: a name or UUID, or the definition a request looked up already. */
  async #query(target: string | AnyEndpointDefinition, raw: object, options?: QueryOptions): Promise<any> {
    this.#assertOpen();
    const definition = this.#inForce.of(typeof target === 'string' ? this.#endpoints.find(target) : target);
    // Validation comes first: a bad parameter (or caller's SQL) never reaches the cache or the engine.
    const params = await acceptParams(definition, raw as RawParams, this.#inForce, this.#judgePattern);
    // One source set from the caller's translation to the run (and each refresh of its cache entry).
    const sources = this.#sources.current;
    const caller = options?.sql === undefined ? undefined : await this.#callers.accept(definition, options.sql, sources);
    const key = caller && this.#callers.cacheKey(caller, this.#clock());
    const { entry, status, policy } = await this.#cache.read(definition, params, () => this.#compute(definition, params, sources, caller), key);
    const answer = answerOf(definition, entry, status, policy, this.#realClock());
    return options?.format === 'arrow' ? withArrowTable(answer, answer.columns ?? definition.columns) : answer;
  }

  async catalog(options?: CatalogOptions): Promise<Catalog> {
    this.#assertOpen();
    const { since, requests } = catalogRequests(this.#clock(), options);
    const sources = this.#sources.current;
    const [projects, functions] = await Promise.all(requests.map((r) => this.#engine.run(compileQuery(r, this.#engine.target, sources))));
    return mergeCatalog(since, projects!, functions!);
  }

  async ingest(source: string, events: readonly object[]): Promise<IngestResult> {
    return this.#counted(() => this.#ingestor().ingest(source, events), true);
  }

  async [INGEST_BODY](source: string, body: Uint8Array, contentType: string | null): Promise<IngestResult> {
    return this.#counted(() => this.#ingestor().ingestBody(source, body, contentType), true);
  }

  async [INGEST_FROM_BODY](source: string, events: readonly object[], origin: BodyOrigin): Promise<IngestResult> {
    return this.#counted(() => this.#ingestor().ingestFromBody(source, events, origin), true);
  }

  #ingestor() {
    this.#assertOpen();
    if (!this.#managed) {
      throw new NotFoundError('This instance has no managed storage: pass storage: { dataDir } to createEndpoints to ingest events.');
    }
    return this.#managed.ingestor;
  }

  /** A call's outcome counted for `stats()` (and `/metrics`): events acknowledged, refusals by code. */
  async #counted<T>(call: () => Promise<T>, ingest = false): Promise<T> {
    try {
      const result = await call();
      if (ingest) {
        const { ingested, repeated } = result as IngestResult;
        this.#ingestedEvents += ingested;
        if (repeated) this.#repeatedEvents += ingested;
      }
      return result;
    } catch (error) {
      const code = error instanceof LogEndpointsError ? error.code : 'internal';
      this.#refusals[code] = (this.#refusals[code] ?? 0) + 1;
      throw error;
    }
  }

  async inspectSources() {
    this.#assertOpen();
    const inspections = await this.#engine.inspectSources();
    const managed = this.#managed;
    if (!managed) return inspections;
    // Managed storage's sources also say what they set aside.
    return inspections.map((inspection) => {
      const quarantine = managed.quarantine(inspection.source);
      return quarantine ? { ...inspection, quarantine } : inspection;
    });
  }

  async ping() {
    this.#assertOpen();
    return this.#engine.ping();
  }

  async health(options?: { timeoutMs?: number }): Promise<HealthReport> {
    if (this.#closed) return { status: 'unavailable', degraded: [] };
    const degraded = new Set<HealthReport['degraded'][number]>();
    // A busy engine (a long query holding DuckDB's threads) makes the report say so, never wait.
    if (!(await this.#engineAnswers.within(options?.timeoutMs ?? 500))) degraded.add(this.#engine.target.dialect === 'clickhouse' ? 'clickhouse' : 'engine');
    const managed = this.#managed?.degraded();
    if (managed?.clickhouse) degraded.add('clickhouse');
    if (managed?.storage) degraded.add('storage');
    // Ingest refusing every event until a restart is what an orchestrator restarts a service for.
    return { status: managed?.storage ? 'unavailable' : 'ok', degraded: [...degraded] };
  }

  now(): Date {
    return this.#clock();
  }

  cacheClock(): number {
    return this.#realClock();
  }

  stats(): EndpointsStats {
    const { rss, heapTotal, external } = process.memoryUsage();
    const held = this.#engine.heldBytes?.();
    const compaction = this.#managed?.compactionDuckdbBytes() ?? null;
    const duckdb: EndpointsStats['memory']['duckdb'] = [...(held ? [{ instance: 'queries' as const, ...held }] : []), ...(compaction ? [{ instance: 'compaction' as const, ...compaction }] : [])];
    const memory = { budgetBytes: this.#budget.bytes, residentBytes: rss, heapBytes: heapTotal, externalBytes: external, duckdb };
    const stats: EndpointsStats = {
      ...this.#counters,
      ingestedEvents: this.#ingestedEvents,
      repeatedEvents: this.#repeatedEvents,
      refusals: { ...this.#refusals },
      warmingKeys: this.#cache.warmingKeys,
      memory,
    };
    if (this.#managed) stats.storage = this.#managed.stats();
    return stats;
  }

  async close() {
    if (this.#closed) return;
    this.#closed = true;
    this.#cache.stop();
    try {
      await this.#managed?.close();
    } finally {
      await this.#engine.close();
    }
    // A refresh that was running ends (the engine refuses it now) before close resolves.
    await this.#cache.settled();
  }

  /** One engine computation: bound values from the clock, the query (or a caller's SELECT over its CTEs), then row shaping. */
  async #compute(definition: AnyEndpointDefinition, params: NormalizedParams, sources: SourceSet, caller?: CheckedSql): Promise<Computed> {
    const now = this.#clock();
    // A real instant, whatever `now` replays: the result's age and lifetime start here.
    const computedAt = new Date(this.#realClock()).toISOString();
    const plan = planQuery(definition, params, now);
    this.#counters.engineQueries++;
    let engineResult;
    try {
      engineResult = await this.#engine.run(compileCall(definition, plan, this.#engine.target, sources, caller, this.#heads.get(definition.name)));
    } catch (error) {
      this.#counters.engineFailures++;
      throw error;
    }
    this.#warnings.tell(engineResult.skippedFiles ?? []);
    // Empty buckets filled when asked: an endpoint's own rows only, never a caller's.
    const filled = !caller && this.#options.fillEmptyBuckets && definition.emptyBuckets ? fillBuckets(engineResult.rows, definition.emptyBuckets(params, now)) : undefined;
    return computedEntry(definition, engineResult, { computedAt, caller, wireFormat: this.#options.wireFormat, rows: filled });
  }

  #assertOpen() {
    if (this.#closed) throw new EngineError('closed', 'The endpoints were closed.');
  }
}
