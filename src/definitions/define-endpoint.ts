import { InvalidOptionError } from '../errors';
import { uuidFromName } from '../util/uuid-from-name';
import type { EngineParam, VariantCost } from '../engine/engine';
import { dateToMicros } from '../time/iso';
import { columnSpecs, type ColumnDeclaration, type RowOf } from './columns';
import type { BindContext, BindValue, BucketSeries, CachePolicy, EndpointDefinition } from './definition';
import { boundValue, p, type AnyParam, type NormalizedParams, type ParamSpec, type ParamsOf } from './params';
import { clockFunctionIn, sqlParamNames, type SqlDialect } from '../sql/sql-scan';

/** Values every statement may use without declaring them: the clock's instant and the row cap. */
export const IMPLICIT_PARAMS = ['now', 'max_rows'] as const;

/** What `defineEndpoint` takes. */
export interface EndpointConfig<
  N extends string,
  P extends Record<string, AnyParam>,
  C extends Record<string, ColumnDeclaration>,
  J extends keyof P & string = never,
  T extends keyof P & string = never,
> {
  /** Unique name, used in URLs: letters, digits, `.`, `_`, `-`. */
  name: N;
  /** A fixed UUID; default: derived from the name (UUID v5), the same in every installation. */
  id?: string;
  description?: string;
  /** Declared parameters (`p.text()`, ...): the only values callers can give. */
  params?: P;
  /**
   * The statement per engine. DuckDB (required) binds `$name`; ClickHouse (optional) `{name:Type}`.
   * Declared parameters, `bind`'s values, `$now` (the clock) and `$max_rows` are bound, never pasted.
   */
  sql: { duckdb: string; clickhouse?: string };
  /** Most rows returned (default 1000). */
  maxRows?: number;
  /** Cache policy (default: not cached); `'never'`: never cached, whatever the options say. */
  cache?: CachePolicy | null | 'never';
  /** Whether callers may send their own SELECT over the statement's CTEs (`sql`; default false). */
  sandboxable?: boolean;
  /**
   * A table per source of the instance for callers' SQL, instead of the statement's CTEs: a SELECT
   * over `source_rows` per engine, `project_column` naming the source's project column
   * (docs/sandboxing.md, "Source tables"). A caller's SELECT then reads `auth_logs`, `edge_logs`,
   * ... whatever sources the instance has, each limited as the template says.
   */
  sourceTables?: { duckdb: string; clickhouse?: string };
  /** The columns of the rows, in order: `'text'`, `'integer'`, `'float'`, `'timestamp'`, `'json'`, `'boolean'`. */
  columns: C;
  /**
   * Values computed from the parameters and the clock, bound beside them (window starts, bucket
   * units): the statement never reads the clock itself.
   */
  bind?: (params: { readonly [K in keyof P]: P[K] extends { spec: { required: true } } ? string : string | null }, context: BindContext) => Record<string, BindValue>;
  /**
   * Checks of the parameters together, before the cache and the engine: throw an
   * `InvalidParameterError` for a combination that cannot be answered (a start after the end).
   */
  check?: (params: NormalizedParams) => void;
  /**
   * The parameter naming the project. With `singleProject` it is accepted and ignored: bound as
   * NULL, which the SQL must read as "every project" (`($project IS NULL OR project = $project)`).
   */
  projectParam?: J;
  /**
   * The parameter choosing a retention window by tier. With `tierWindow: false` (the Supabase
   * preset) it is accepted and ignored: bound as NULL, which `bind` must read as "no window".
   */
  tierParam?: T;
  /** The name of a bound timestamp no row can be older than: engines skip older files. */
  notBefore?: string;
  /** See `EndpointDefinition.newestFirst`. */
  newestFirst?: { limit: string; until: string };
  /** See `EndpointDefinition.emptyBuckets`. */
  emptyBuckets?: (params: NormalizedParams, now: Date) => BucketSeries;
  /**
   * Other statements of the same endpoint, by name, each for some dialects (the others keep
   * `sql`): a rollup read for long windows (docs/definitions.md, "Variants"). All are checked at
   * start like `sql`; `variant` picks one per call.
   */
  variants?: Record<string, { duckdb?: string; clickhouse?: string; cheaperWhen?: VariantCost }>;
  /** The variant a call runs, from its bound values (parameters, `bind`'s values); null: `sql`. */
  variant?: (bound: Readonly<Record<string, EngineParam>>) => string | null;
}

/**
 * Declares an endpoint: a saved query with typed parameters and rows. Pass it to
 * `createEndpoints({ endpoints: [...] })` (or a `serve --config` module) and it is a typed
 * `ep.query(name, params)`, an HTTP route by name and by UUID, cached and warmed by its policy,
 * in OpenAPI, the CLI and the dashboard. A definition that cannot work is an `InvalidOptionError`.
 *
 * @example
 * const errorsByPath = defineEndpoint({
 *   name: 'errors.by-path',
 *   params: { project: p.text(), min_status: p.integer().default(400) },
 *   sql: { duckdb: `SELECT request_path AS path, count(*) AS errors FROM edge_logs
 *                   WHERE project = $project AND status_code >= $min_status GROUP BY 1 ORDER BY 2 DESC LIMIT 20` },
 *   cache: { ttlSeconds: 60, warmingSeconds: 20 },
 *   columns: { path: 'text', errors: 'integer' },
 * });
 */
export function defineEndpoint<
  const N extends string,
  const P extends Record<string, AnyParam> = {},
  const C extends Record<string, ColumnDeclaration> = {},
  const J extends keyof P & string = never,
  const T extends keyof P & string = never,
>(config: EndpointConfig<N, P, C, J, T>): EndpointDefinition<N, ParamsOf<P>, RowOf<C>, J, T> {
  const name = typeof config?.name === 'string' ? config.name : '';
  const fail = (problem: string): never => {
    throw new InvalidOptionError(`endpoints["${name}"]`, `Endpoint "${name}" cannot work: ${problem}.`);
  };
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(name)) {
    throw new InvalidOptionError('endpoints', `An endpoint name must be letters, digits, ".", "_" or "-" (at most 128), not ${JSON.stringify(config?.name)}.`);
  }
  const id = config.id === undefined ? uuidFromName(name) : config.id.toLowerCase();
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id)) fail(`id must be a UUID, not ${JSON.stringify(config.id)}`);
  if (config.description !== undefined && typeof config.description !== 'string') fail('description must be text');
  const maxRows = config.maxRows ?? 1000;
  if (!Number.isInteger(maxRows) || maxRows < 1 || maxRows > 1_000_000) fail('maxRows must be a whole number from 1 to 1000000');
  const columns = columnSpecs(config.columns);
  if (typeof columns === 'string') fail(columns);
  const params = paramSpecs(config.params ?? {}, fail);
  if (typeof config.sql?.duckdb !== 'string' || !config.sql.duckdb.trim()) fail('sql.duckdb must be the DuckDB statement');
  if (config.sql.clickhouse !== undefined && (typeof config.sql.clickhouse !== 'string' || !config.sql.clickhouse.trim())) fail('sql.clickhouse must be a ClickHouse statement when given');
  const cache = config.cache === 'never' || config.cache === undefined ? null : config.cache;
  if (cache !== null && !validPolicy(cache)) fail('cache must be { ttlSeconds > 0, warmingSeconds >= 0 }, null or "never"');
  if (config.bind !== undefined && typeof config.bind !== 'function') fail('bind must be a function');

  const bindValues = (values: NormalizedParams, now: Date): Record<string, EngineParam> => {
    const out: Record<string, EngineParam> = {};
    for (const spec of params) out[spec.name] = boundValue(spec, values[spec.name] ?? null);
    for (const [key, value] of Object.entries(config.bind?.(values as never, { now }) ?? {})) out[key] = engineParam(value);
    out.now = { timestamp: dateToMicros(now) };
    return out;
  };
  const keys = bindKeys(config, params);
  checkStatements(config.sql, params, keys, fail);
  const variants = variantStatements(config, fail);
  const costs = variantCosts(config, fail);
  if (config.sourceTables !== undefined) checkSourceTables(config.sourceTables, keys, fail);
  for (const v of Object.values(variants)) checkStatements(v, params, keys, fail);
  if (config.check !== undefined && typeof config.check !== 'function') fail('check must be a function');
  for (const key of ['projectParam', 'tierParam'] as const) {
    if (config[key] !== undefined && !params.some((s) => s.name === config[key])) fail(`${key} "${config[key]}" is not a declared parameter`);
  }
  for (const key of [config.notBefore, config.newestFirst?.limit, config.newestFirst?.until]) {
    if (key !== undefined && !keys.all.has(key)) fail(`"${key}" is not one of its bound values`);
  }

  const definition: EndpointDefinition<N, ParamsOf<P>, RowOf<C>, J, T> = {
    name: name as N,
    id,
    description: config.description ?? '',
    maxRows,
    cache: cache ? Object.freeze({ ttlSeconds: cache.ttlSeconds, warmingSeconds: cache.warmingSeconds }) : null,
    neverCached: config.cache === 'never',
    sandboxable: config.sandboxable === true,
    params,
    columns: columns as Exclude<typeof columns, string>,
    sql: Object.freeze({ ...config.sql }),
    bindValues,
    ...(config.check ? { check: config.check } : {}),
    ...(config.projectParam ? { projectParam: config.projectParam } : {}),
    ...(config.tierParam ? { tierParam: config.tierParam } : {}),
    ...(config.notBefore ? { notBefore: config.notBefore } : {}),
    ...(config.newestFirst ? { newestFirst: Object.freeze({ ...config.newestFirst }) } : {}),
    ...(config.sourceTables ? { sourceTables: Object.freeze({ ...config.sourceTables }) } : {}),
    ...(config.emptyBuckets ? { emptyBuckets: config.emptyBuckets } : {}),
    ...(config.variant ? { variants: Object.freeze(variants), variantOf: variantChooser(config.variant, variants, name) } : {}),
    ...(Object.keys(costs).length ? { variantCosts: Object.freeze(costs) } : {}),
  };
  return Object.freeze(definition);
}

/**
 * Source-table templates read `source_rows` (the source) and bind only values the endpoint has;
 * each reads a subset of them (unlike a statement, nothing has to be used).
 */
function checkSourceTables(templates: unknown, keys: { all: ReadonlySet<string> }, fail: (problem: string) => never): void {
  const given = Object.entries(templates ?? {});
  if (!given.some(([d]) => d === 'duckdb') || given.some(([d, t]) => (d !== 'duckdb' && d !== 'clickhouse') || typeof t !== 'string' || !/\bsource_rows\b/.test(t))) {
    fail('sourceTables must give a duckdb (and optionally a clickhouse) SELECT over source_rows');
  }
  for (const [dialect, text] of given as Array<[SqlDialect, string]>) {
    const unknown = sqlParamNames(text, dialect).filter((n) => !keys.all.has(n));
    if (unknown.length) fail(`sourceTables.${dialect} binds ${unknown.map((n) => `"${n}"`).join(', ')}, which the endpoint does not have`);
    const clock = clockFunctionIn(text);
    if (clock) fail(`sourceTables.${dialect} reads the clock (${clock}): bind a value computed in bind() instead`);
  }
}

/** Each variant's statements: the endpoint's own, with the variant's dialects in their place. */
function variantStatements(config: EndpointConfig<string, any, any, any, any>, fail: (problem: string) => never): Record<string, EndpointDefinition['sql']> {
  const out: Record<string, EndpointDefinition['sql']> = {};
  if (config.variants === undefined && config.variant === undefined) return out;
  if (typeof config.variant !== 'function' || typeof config.variants !== 'object' || config.variants === null)
    fail('variants and variant go together: statements by name, and a function choosing one per call');
  for (const [key, v] of Object.entries(config.variants!)) {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(key)) fail(`variant name ${JSON.stringify(key)} must be letters, digits, "_" or "-"`);
    const given = Object.entries(v ?? {}).filter(([d, text]) => text !== undefined && d !== 'cheaperWhen');
    if (!given.length || given.some(([d, text]) => (d !== 'duckdb' && d !== 'clickhouse') || typeof text !== 'string' || !text.trim()))
      fail(`variant "${key}" must give a duckdb or clickhouse statement`);
    out[key] = Object.freeze({ ...config.sql, ...Object.fromEntries(given) }) as EndpointDefinition['sql'];
  }
  return out;
}

/**
 * Each variant's `cheaperWhen`, checked: a number of events and, per rollup name, a weight and its
 * hour column (see `VariantCost`). Only DuckDB's engine counts them; a variant without it runs
 * wherever its rollups are stored.
 */
function variantCosts(config: EndpointConfig<string, any, any, any, any>, fail: (problem: string) => never): Record<string, VariantCost> {
  const out: Record<string, VariantCost> = {};
  for (const [key, v] of Object.entries(config.variants ?? {})) {
    const cost = v?.cheaperWhen;
    if (cost === undefined) continue;
    // Counted per project: the one bound to projectParam.
    if (config.projectParam === undefined) fail(`variant "${key}".cheaperWhen needs projectParam, the project its counts are of`);
    const rollups = Object.entries(cost?.rollupRows ?? {});
    const number = (n: unknown) => typeof n === 'number' && Number.isFinite(n) && n >= 0;
    if (!number(cost?.events) || !rollups.length || rollups.some(([name, r]) => !/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(name) || !number(r?.weight) || typeof r?.time !== 'string' || !r.time))
      fail(`variant "${key}".cheaperWhen must be { events: a number >= 0, rollupRows: { <rollup>: { weight: a number >= 0, time: its hour column } } }`);
    out[key] = Object.freeze({ events: cost.events, rollupRows: Object.freeze(Object.fromEntries(rollups.map(([name, r]) => [name, Object.freeze({ weight: r.weight, time: r.time })]))) });
  }
  return out;
}

/** The chooser a definition keeps: a name it does not have is the endpoint's bug, said plainly. */
function variantChooser(choose: NonNullable<EndpointConfig<string, any, any, any, any>['variant']>, variants: Record<string, unknown>, name: string) {
  return (bound: Readonly<Record<string, EngineParam>>): string | null => {
    const chosen = choose(bound) ?? null;
    if (chosen !== null && !(chosen in variants))
      throw new InvalidOptionError(`endpoints["${name}"].variant`, `Endpoint "${name}" chose variant ${JSON.stringify(chosen)}, which it does not declare.`);
    return chosen;
  };
}

/** The declared parameters as data, in declaration order. */
function paramSpecs(declared: Record<string, AnyParam>, fail: (problem: string) => never): ParamSpec[] {
  const out: ParamSpec[] = [];
  for (const [key, builder] of Object.entries(declared)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(key)) fail(`parameter name ${JSON.stringify(key)} must be a SQL identifier`);
    if ((IMPLICIT_PARAMS as readonly string[]).includes(key)) fail(`$${key} is bound by the library; choose another parameter name`);
    if (!builder || typeof builder !== 'object' || !('spec' in builder)) fail(`parameter "${key}" must be declared with p.text(), p.oneOf(), p.isoTimestamp(), p.re2() or p.integer()`);
    out.push(Object.freeze({ name: key, ...builder.spec }));
  }
  return out;
}

/**
 * The names `bind` returns and the parameters it reads, found by calling it once with a
 * sample value of each parameter (it is a pure function of the parameters and the clock).
 */
function bindKeys(config: EndpointConfig<string, any, any, any, any>, params: readonly ParamSpec[]): { produced: Set<string>; read: Set<string>; all: Set<string> } {
  const read = new Set<string>();
  const produced = new Set<string>();
  if (config.bind) {
    const sample = Object.fromEntries(params.map((s) => [s.name, sampleValue(s)]));
    const tracked = new Proxy(sample, { get: (target, key) => (typeof key === 'string' && read.add(key), target[key as string]) });
    let values: Record<string, unknown>;
    try {
      values = config.bind(tracked, { now: new Date(Date.UTC(2026, 0, 1)) });
    } catch (error) {
      throw new InvalidOptionError(`endpoints["${config.name}"].bind`, `Endpoint "${config.name}" cannot work: its bind hook failed on sample parameters: ${(error as Error)?.message ?? error}.`, {
        cause: error,
      });
    }
    for (const key of Object.keys(values ?? {})) produced.add(key);
  }
  return { produced, read, all: new Set([...params.map((s) => s.name), ...produced, ...IMPLICIT_PARAMS]) };
}

function sampleValue(spec: ParamSpec): string {
  if (spec.default !== undefined) return spec.default;
  if (spec.values?.length) return spec.values[0]!;
  if (spec.format === 'iso-timestamp') return '2026-01-01T00:00:00.000000Z';
  if (spec.format === 'integer') return String(spec.min ?? 0);
  return 'x';
}

/** Every statement binds only known values, uses every declared one, and never reads the clock. */
function checkStatements(
  sql: { duckdb: string; clickhouse?: string },
  params: readonly ParamSpec[],
  keys: { produced: Set<string>; read: Set<string>; all: Set<string> },
  fail: (problem: string) => never,
): void {
  for (const dialect of ['duckdb', 'clickhouse'] as const satisfies readonly SqlDialect[]) {
    const text = sql[dialect];
    if (text === undefined) continue;
    const used = sqlParamNames(text, dialect);
    const unknown = used.filter((n) => !keys.all.has(n));
    if (unknown.length) fail(`its ${dialect} SQL uses ${unknown.map((n) => `$${n}`).join(', ')}, which ${unknown.length > 1 ? 'are' : 'is'} not declared in params (nor bound by bind)`);
    const unused = params.filter((s) => !used.includes(s.name) && !keys.read.has(s.name)).map((s) => s.name);
    if (unused.length)
      fail(`parameter${unused.length > 1 ? 's' : ''} ${unused.join(', ')} ${unused.length > 1 ? 'are' : 'is'} declared but its ${dialect} SQL never uses ${unused.length > 1 ? 'them' : 'it'}`);
    const clock = clockFunctionIn(text);
    if (clock) fail(`its ${dialect} SQL calls ${clock}(): use $now, bound from the library's clock, so replays and tests hold`);
  }
}

function validPolicy(policy: CachePolicy): boolean {
  return (
    typeof policy === 'object' &&
    policy !== null &&
    typeof policy.ttlSeconds === 'number' &&
    Number.isFinite(policy.ttlSeconds) &&
    policy.ttlSeconds > 0 &&
    typeof policy.warmingSeconds === 'number' &&
    Number.isFinite(policy.warmingSeconds) &&
    policy.warmingSeconds >= 0
  );
}

function engineParam(value: BindValue): EngineParam {
  if (value instanceof Date) return { timestamp: dateToMicros(value) };
  return value;
}

export { p, uuidFromName };
