import { join } from 'node:path';
import { ManagedStorage } from './managed-storage';
import { CheckedSqlMemo } from './checked-sql-memo';
import type { CacheStatus, EndpointMethods, Endpoints, EndpointsCore, EndpointsOptions, EndpointsStats, HealthReport, ManagedStorageInfo, QueryOptions, QueryResult, RawParams } from './public-types';
import { CacheLayer } from '../cache/cache-layer';
import { effectivePolicies } from '../cache/cache-policy';
import { memoryCache } from '../cache/memory-cache';
import { realClock, type CacheClock } from '../cache/real-clock';
import type { CacheEntry } from '../cache/result-cache';
import { timerScheduler } from '../util/scheduler';
import { catalogRequests, mergeCatalog, type Catalog, type CatalogOptions } from '../definitions/catalog';
import type { AnyEndpointDefinition, CachePolicy, NormalizedParams } from '../definitions/definition';
import { describeDefinition, type EndpointDescription } from '../definitions/describe';
import { methodName } from '../definitions/method-name';
import { normalizeParams } from '../definitions/params';
import { planQuery, statementOf } from '../definitions/plan-query';
import { BUILT_IN_ENDPOINTS, endpointSet, type EndpointSet } from '../definitions/registry';
import { createDuckDBEngine } from '../engine/duckdb/duckdb-engine';
import type { Engine } from '../engine/engine';
import { re2PatternProblem } from '../engine/re2-pattern';
import { EngineError, InvalidOptionError, InvalidParameterError, LogEndpointsError, NotFoundError } from '../errors';
import { INGEST_BODY, INGEST_FROM_BODY, type BodyIngest, type BodyOrigin, type IngestResult } from '../ingest/ingestor';
import { checkEndpointsOptions, checkSourceGlobs } from './check-options';
import { fillBuckets } from '../rows/fill-buckets';
import { shapeRows } from '../rows/shape-rows';
import { toLogflareWire } from '../rows/logflare-wire';
import { withArrowTable } from '../rows/to-arrow';
import { BUILT_IN_SOURCE_SET } from '../sources/built-ins';
import type { SourceSet } from '../sources/source-set';
import type { SourceDescriptor } from '../sources/source-descriptor';
import type { CallerDialect, CheckedSql } from '../sandbox/validate-caller-sql';
import type { SkippedFile } from '../files/file-checks';
import { systemNow } from '../time/clock';
import { memoryBudget, type MemoryBudget } from '../duckdb/memory-budget';
import type { DatabaseSettings } from '../duckdb/open-database';

export type * from './public-types';

/** A statement that reads the request's clock. */
const READS_NOW = /\$now\b/;

/** The folder of a data dir DuckDB spills into past its memory share (its files go when a query ends). */
const SPILL_DIR = '.duckdb-spill';

/**
 * Creates the endpoints over your log files, computed by an in-process DuckDB: the three
 * built-ins and your own (`endpoints`), typed from their definitions.
 *
 * @example
 * const ep = await createEndpoints({ sources: { edgeLogs: 'logs/edge/*.ndjson', functionEdgeLogs: 'logs/fn/*.parquet' } });
 * const rows = await ep.usageApiCounts({ project: 'abc', interval: 'daily' });
 * await ep.close();
 */
export async function createEndpoints<const D extends readonly AnyEndpointDefinition[] = []>(
  options: EndpointsOptions & { endpoints?: D },
): Promise<Endpoints<D[number]> & EndpointMethods<D[number]>> {
  checkEndpointsOptions(options);
  // The instance's own sources, passed to everything below: two instances never share them.
  const sources = BUILT_IN_SOURCE_SET.extend(options.sourceDefinitions);
  checkSourceGlobs(options, sources);
  checkEngineSources(options.engine, sources);
  const endpoints = endpointSet(options.endpoints);
  // One memory budget for the process (docs/operations.md, "Memory"): each DuckDB gets a share, and
  // operators past their share spill into the data dir before a query fails.
  const budget = memoryBudget(options.memoryLimit);
  const tempDirectory = options.storage ? join(options.storage.dataDir, SPILL_DIR) : undefined;
  const compactionDuckdb: DatabaseSettings = options.storage?.compactionDuckdb ?? { ...budget.compaction, tempDirectory };
  // Storage first: a data dir locked by another process fails before DuckDB starts.
  const managed = options.storage ? await ManagedStorage.open(sources, { ...options, storage: { ...options.storage, compactionDuckdb } }, budget.memoryTablesBytes) : null;
  let engine: Engine | null = null;
  try {
    engine =
      options.engine ??
      (await createDuckDBEngine({
        sourceSet: sources,
        sources: options.sources ?? {},
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
    await checkDefinitions(endpoints, engine, options.sandboxable ?? [], options.sqlDialect);
    await managed?.start(options);
    return new EndpointsImpl(engine, options, endpoints, managed, sources, budget) as unknown as Endpoints<D[number]> & EndpointMethods<D[number]>;
  } catch (error) {
    // Nothing stays open behind a failed start: not DuckDB, not the data dir.
    if (engine && !options.engine) await engine.close().catch(() => undefined);
    await managed?.close().catch(() => undefined);
    throw error;
  }
}

/**
 * An engine that knows its sources (the ClickHouse engine) must know every source of the instance:
 * one made without the same `sourceDefinitions` could not map their tables.
 */
function checkEngineSources(engine: Engine | undefined, sources: SourceSet): void {
  const known = engine?.sourceNames;
  if (!known) return;
  const missing = sources.names.filter((name) => !known.includes(name));
  if (missing.length) {
    throw new InvalidOptionError(
      'engine',
      `The engine does not know the source${missing.length > 1 ? 's' : ''} ${missing.join(', ')} of these endpoints: give it the same sourceDefinitions (e.g. clickhouseEngine({ ..., sourceDefinitions })).`,
    );
  }
}

/**
 * Every definition runs on this engine: it has the engine's SQL, and that SQL prepares (over
 * empty sources). A definition that cannot work fails the start, naming the endpoint.
 */
async function checkDefinitions(endpoints: EndpointSet, engine: Engine, sandboxable: readonly string[], sqlDialect?: CallerDialect): Promise<void> {
  const dialect = engine.dialect ?? 'duckdb';
  for (const d of endpoints.list) {
    if (d.sql[dialect] === undefined) {
      throw new InvalidOptionError(`endpoints["${d.name}"].sql.${dialect}`, `Endpoint "${d.name}" has no ${dialect} SQL, and the engine is ${dialect}: add sql.${dialect}.`);
    }
    for (const variant of [null, ...Object.keys(d.variants ?? {})]) {
      const problem = await engine.checkStatement?.(statementOf(d, variant));
      const which = variant === null ? `sql.${dialect}` : `variants.${variant}.${dialect}`;
      if (problem)
        throw new InvalidOptionError(
          `endpoints["${d.name}"].${which}`,
          `Endpoint "${d.name}" cannot work: its ${dialect} SQL${variant === null ? '' : ` (variant ${variant})`} does not prepare: ${problem}`,
        );
    }
    // A sandboxable endpoint whose SQL cannot take a caller's SELECT (no CTEs) fails now, not at its first call.
    if (d.sandboxable || sandboxable.includes(d.name)) {
      try {
        await engine.checkSql?.(statementOf(d), 'SELECT 1', 1, sqlDialect);
      } catch (error) {
        const option = d.sandboxable ? `endpoints["${d.name}"].sandboxable` : 'sandboxable';
        throw new InvalidOptionError(option, `Endpoint "${d.name}" cannot be sandboxed: ${(error as Error)?.message ?? error}`, { cause: error });
      }
    }
  }
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

class EndpointsImpl implements EndpointsCore<AnyEndpointDefinition>, BodyIngest {
  readonly definitions: readonly EndpointDescription[];
  readonly storage: ManagedStorageInfo | null;
  readonly sources: readonly SourceDescriptor[];
  readonly #clock: () => Date;
  readonly #realClock: CacheClock;
  readonly #counters: Omit<EndpointsStats, 'warmingKeys' | 'memory' | 'storage' | 'ingestedEvents' | 'refusals'> = {
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
  readonly #warned = new Set<string>();
  /** Endpoints that take a caller's SELECT: defined so, or named in the `sandboxable` option. */
  readonly #sandboxable: ReadonlySet<string>;
  /** Callers' SQL this instance accepted, by text: a repeated request is not translated and checked again. */
  readonly #checkedSql = new CheckedSqlMemo();

  readonly #engine: Engine;
  readonly #options: EndpointsOptions;
  readonly #endpoints: EndpointSet;
  readonly #budget: MemoryBudget;
  #ingestedEvents = 0;
  readonly #refusals: Record<string, number> = {};
  readonly #managed: ManagedStorage | null;

  constructor(engine: Engine, options: EndpointsOptions, endpoints: EndpointSet, managed: ManagedStorage | null, sources: SourceSet, budget: MemoryBudget) {
    this.sources = sources.list;
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
    this.#sandboxable = new Set(endpoints.list.filter((d) => d.sandboxable || (options.sandboxable ?? []).includes(d.name)).map((d) => d.name));
    // The listed policy is the one in force, overrides and `cache: false` included.
    this.definitions = endpoints.list.map((d) =>
      describeDefinition(this.#inForce(d), {
        cache: policies.get(d.name) ?? null,
        sandboxed: this.#sandboxable.has(d.name),
        builtIn: builtIn.has(d),
      }),
    );
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

  // Returns `any`: the interface's overloads give each call its precise type.
  async query(nameOrId: string, raw: object, options?: QueryOptions): Promise<any> {
    return this.#counted(() => this.#query(nameOrId, raw, options));
  }

  async #query(nameOrId: string, raw: object, options?: QueryOptions): Promise<any> {
    this.#assertOpen();
    const definition = this.#inForce(this.#endpoints.find(nameOrId));
    // Validation comes first: a bad parameter (or caller's SQL) never reaches the cache or the engine.
    const params = await this.#validate(definition, raw as RawParams);
    const caller = options?.sql === undefined ? undefined : await this.#checkSql(definition, options.sql);
    // A caller's SELECT that reads the clock (`$now`, what CURRENT_TIMESTAMP() becomes) answers for
    // one instant: its key holds that instant, so a cached endpoint never serves another's answer.
    const key = caller && READS_NOW.test(caller.sql) ? `${caller.key}@${this.#clock().toISOString()}` : caller?.key;
    const { entry, status, policy } = await this.#cache.read(definition, params, () => this.#compute(definition, params, caller), key);
    const answer = this.#answer(definition, entry, status, policy);
    return options?.format === 'arrow' ? withArrowTable(answer, answer.columns ?? definition.columns) : answer;
  }

  async catalog(options?: CatalogOptions): Promise<Catalog> {
    this.#assertOpen();
    const { since, requests } = catalogRequests(this.#clock(), options);
    const [projects, functions] = await Promise.all(requests.map((r) => this.#engine.run(r)));
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
      if (ingest) this.#ingestedEvents += (result as IngestResult).ingested;
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
    if (!(await this.#engineAnswers(options?.timeoutMs ?? 500))) degraded.add(this.#engine.dialect === 'clickhouse' ? 'clickhouse' : 'engine');
    const managed = this.#managed?.degraded();
    if (managed?.clickhouse) degraded.add('clickhouse');
    if (managed?.storage) degraded.add('storage');
    // Ingest refusing every event until a restart is what an orchestrator restarts a service for.
    return { status: managed?.storage ? 'unavailable' : 'ok', degraded: [...degraded] };
  }

  /** One ping at a time: health checks of a stuck engine do not pile pings up behind it. */
  #pinging: Promise<boolean> | null = null;

  #engineAnswers(timeoutMs: number): Promise<boolean> {
    this.#pinging ??= Promise.resolve()
      .then(() => this.#engine.ping())
      .then(
        () => true,
        () => false,
      )
      .finally(() => (this.#pinging = null));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    return Promise.race([this.#pinging, late]).finally(() => clearTimeout(timer));
  }

  now(): Date {
    return this.#clock();
  }

  cacheClock(): number {
    return this.#realClock();
  }

  stats(): EndpointsStats {
    const { rss, heapTotal, external } = process.memoryUsage();
    const memory = { budgetBytes: this.#budget.bytes, residentBytes: rss, heapBytes: heapTotal, externalBytes: external };
    const stats: EndpointsStats = {
      ...this.#counters,
      ingestedEvents: this.#ingestedEvents,
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

  /**
   * The definition as this instance runs it: with `singleProject`, its project parameter is
   * optional and ignored (every event belongs to the one project).
   */
  #inForce(definition: AnyEndpointDefinition): AnyEndpointDefinition {
    let inForce = this.#inForceMemo.get(definition);
    if (inForce === undefined) {
      const ignored = this.#ignoredParams(definition);
      inForce =
        ignored.size === 0
          ? definition
          : {
              ...definition,
              params: definition.params.map((p) => (ignored.has(p.name) ? { ...p, required: false, description: `${p.description} Ignored: ${ignored.get(p.name)}.`.trim() } : p)),
            };
      // Once per definition, not per call: the options do not change.
      this.#inForceMemo.set(definition, inForce);
    }
    return inForce;
  }

  /** Each definition as this instance runs it (`#inForce`), made once. */
  readonly #inForceMemo = new WeakMap<AnyEndpointDefinition, AnyEndpointDefinition>();

  /**
   * The parameters this instance accepts and ignores (bound as NULL), with why: the project with
   * `singleProject`, the tier with `tierWindow: false`.
   */
  #ignoredParams(definition: AnyEndpointDefinition): ReadonlyMap<string, string> {
    let ignored = this.#ignoredMemo.get(definition);
    if (ignored === undefined) {
      ignored = new Map<string, string>();
      if (this.#options.singleProject && definition.projectParam !== undefined) ignored.set(definition.projectParam, 'this server holds a single project');
      if (this.#options.tierWindow === false && definition.tierParam !== undefined) ignored.set(definition.tierParam, 'this server keeps no tier window');
      this.#ignoredMemo.set(definition, ignored);
    }
    return ignored;
  }

  readonly #ignoredMemo = new WeakMap<AnyEndpointDefinition, Map<string, string>>();

  /** Parameters as the cache keys them; a bad one never reaches the engine or the cache. */
  async #validate(definition: AnyEndpointDefinition, raw: RawParams): Promise<NormalizedParams> {
    const params: Record<string, string | null> = normalizeParams(definition, raw ?? {});
    // Accepted and ignored (the project with singleProject, the tier without tier windows): bound
    // as NULL, one cache key for every value.
    for (const name of this.#ignoredParams(definition).keys()) params[name] = null;
    for (const spec of definition.params) {
      const value = params[spec.name];
      if (spec.format !== 'regex' || value === null || value === undefined) continue;
      // RE2 as DuckDB compiles it first, whatever the engine: the same pattern gets the same
      // answer everywhere (src/engine/re2-pattern.ts); the engine may refuse more. The DuckDB
      // engine's own check is that very check: no second DuckDB (and no second look) for it.
      const sameAsEngine = this.#options.engine === undefined;
      const problem = (sameAsEngine ? null : await re2PatternProblem(value)) ?? (await this.#engine.checkPattern(value));
      if (problem !== null) {
        throw new InvalidParameterError(spec.name, `Parameter "${spec.name}" is not a valid regular expression: ${problem}`);
      }
    }
    definition.check?.(params);
    return params;
  }

  /**
   * A caller's SQL checked against the sandbox's rules (docs/sandboxing.md), on an endpoint that
   * takes it and an engine that can run it.
   */
  async #checkSql(definition: AnyEndpointDefinition, sql: unknown): Promise<CheckedSql> {
    if (!this.#sandboxable.has(definition.name)) {
      throw new InvalidParameterError('sql', `The endpoint ${definition.name} is not sandboxable: it does not take sql.`);
    }
    if (typeof sql !== 'string') throw new InvalidParameterError('sql', 'Parameter "sql" must be a string.');
    if (!this.#engine.checkSql) throw new InvalidParameterError('sql', "This server's engine does not run a caller's sql.");
    const checkSql = this.#engine.checkSql.bind(this.#engine);
    return this.#checkedSql.get(definition.name, sql, () => checkSql(statementOf(definition), sql, definition.maxRows, this.#options.sqlDialect));
  }

  /** One engine computation: bound values from the clock, the query (or a caller's SELECT over its CTEs), then row shaping. */
  async #compute(definition: AnyEndpointDefinition, params: NormalizedParams, caller?: CheckedSql): Promise<Computed> {
    const now = this.#clock();
    // A real instant, whatever `now` replays: the result's age and lifetime start here.
    const computedAt = new Date(this.#realClock()).toISOString();
    const request = planQuery(definition, params, now);
    this.#counters.engineQueries++;
    let engineResult;
    try {
      // The caller's SELECT was checked inside a wrapper capped at the endpoint's max rows: the same one runs.
      // A caller's SELECT was checked against the endpoint's own statement's CTEs: it runs over that one, never a variant.
      engineResult = await this.#engine.run(caller ? { ...request, statement: statementOf(definition), sql: caller.sql, maxRows: definition.maxRows } : request);
    } catch (error) {
      this.#counters.engineFailures++;
      throw error;
    }
    let rows = engineResult.rows;
    if (!caller && this.#options.fillEmptyBuckets && definition.emptyBuckets) rows = fillBuckets(rows, definition.emptyBuckets(params, now));
    const skippedFiles = engineResult.skippedFiles ?? [];
    this.#warnSkipped(skippedFiles);
    // A caller's columns: as its check typed them (a translated SELECT), else as the engine did.
    const columns = caller ? (caller.columns?.map(({ name, kind }) => ({ name, type: kind })) ?? engineResult.columns ?? []).map(({ name, type }) => ({ name, type, description: '' })) : null;
    const shaped = shapeRows(columns ?? definition.columns, rows.slice(0, definition.maxRows));
    return {
      // Answers to a caller's SQL in Logflare's wire format when asked (Supabase Studio reads it).
      rows: columns && this.#options.wireFormat === 'logflare' ? toLogflareWire(columns, shaped) : shaped,
      computedAt,
      engineMs: engineResult.engineMs,
      ...(skippedFiles.length ? { skippedFiles } : {}),
      ...(columns ? { columns } : {}),
    };
  }

  #answer(definition: AnyEndpointDefinition, computed: Computed, cache: CacheStatus, policy: CachePolicy | null): QueryResult {
    const computedAt = new Date(computed.computedAt);
    const ageSeconds = Math.max(0, (this.#realClock() - computedAt.getTime()) / 1000);
    return {
      result: computed.rows,
      endpoint: { name: definition.name, id: definition.id },
      cache,
      computedAt: computedAt.toISOString(),
      ageSeconds,
      ttlRemainingSeconds: policy ? Math.max(0, policy.ttlSeconds - ageSeconds) : null,
      engineMs: computed.engineMs,
      skippedFiles: computed.skippedFiles ?? [],
      ...(computed.columns ? { columns: computed.columns } : {}),
    };
  }

  /** Tells `onWarning` about each skipped file once (per path, reason and message). */
  #warnSkipped(files: readonly SkippedFile[]): void {
    const hook = this.#options.onWarning;
    if (!hook) return;
    for (const file of files) {
      // A backlog being recovered is told by the answers while it lasts (and by `stats()`), not as a warning.
      if (file.reason === 'recovering') continue;
      const key = `${file.path}\0${file.reason}\0${file.message}`;
      if (this.#warned.has(key)) continue;
      if (this.#warned.size > 10_000) this.#warned.clear();
      this.#warned.add(key);
      try {
        hook({ code: 'file_skipped', message: `${file.path} is left out of answers: ${file.message}`, file });
      } catch {
        // A failing hook must not fail the query.
      }
    }
  }

  #assertOpen() {
    if (this.#closed) throw new EngineError('closed', 'The endpoints were closed.');
  }
}
