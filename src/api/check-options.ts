import type { EndpointsOptions } from './public-types';
import { MIN_BUDGET_BYTES } from '../duckdb/memory-budget';
import { InvalidOptionError } from '../errors';
import { memoryLimitBytes, MIN_MEMORY_LIMIT_BYTES } from '../duckdb/open-database';
import type { SourceSet } from '../sources/source-set';
import type { Engine } from '../engine/engine';
import { DEFINITIONS } from '../definitions/registry';
import { checkBoolean, checkOneOf, checkFunction, checkInteger, checkMethods, checkObject, checkPositiveNumber, describeValue } from '../util/option-checks';

/**
 * Every option `createEndpoints` knows: anything else is a typo that would otherwise be ignored
 * silently (a misspelt `cachePolicy` leaves every endpoint on its default).
 */
const KNOWN_OPTIONS = [
  'sources',
  'storage',
  'now',
  'cacheClock',
  'cache',
  'cachePolicy',
  'warmingConcurrency',
  'scheduler',
  'maxWarmingKeys',
  'storeTimeoutMs',
  'memoryLimit',
  'duckdb',
  'limits',
  'fillEmptyBuckets',
  'engine',
  'onWarning',
  'onIngested',
  'segmentKeeper',
  'endpoints',
  'sourceDefinitions',
  'singleProject',
  'tierWindow',
  'sandboxable',
  'sqlDialect',
  'wireFormat',
] as const satisfies readonly (keyof EndpointsOptions)[];

const EXAMPLE = `createEndpoints({ sources: { edgeLogs: 'logs/edge/*.ndjson', functionEdgeLogs: 'logs/functions/*.ndjson' } })`;

/**
 * Checks the options of `createEndpoints` before anything is opened, so a mistake is one clear
 * `InvalidOptionError` naming the option instead of a hang (`maxConcurrentQueries: 0`), DuckDB's
 * raw message (`memoryLimit: 'lots'`) or a TypeError from deep inside.
 */
export function checkEndpointsOptions(options: unknown): asserts options is EndpointsOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidOptionError('options', `createEndpoints needs options saying where the logs are, e.g. ${EXAMPLE}.`);
  }
  const o = options as Record<string, unknown>;
  const unknown = Object.keys(o).filter((key) => !(KNOWN_OPTIONS as readonly string[]).includes(key));
  if (unknown.length) {
    const hint = unknown.map((key) => closest(key, KNOWN_OPTIONS)).filter(Boolean);
    throw new InvalidOptionError(
      unknown[0]!,
      `createEndpoints does not know the option${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${k}"`).join(', ')}${hint.length ? ` (did you mean ${hint.map((h) => `"${h}"`).join(', ')}?)` : ''}; the options are ${KNOWN_OPTIONS.join(', ')}.`,
    );
  }
  checkBoolean('singleProject', o.singleProject);
  checkBoolean('tierWindow', o.tierWindow);
  checkOneOf('sqlDialect', o.sqlDialect, ['duckdb', 'bigquery']);
  checkOneOf('wireFormat', o.wireFormat, ['iso', 'logflare']);
  if (o.engine !== undefined) {
    checkMethods('engine', o.engine, ['run', 'checkPattern', 'ping', 'inspectSources', 'close'], 'an Engine');
    // An engine declares the target it runs compiled queries for; one written before (a
    // `dialect` of its own) would otherwise fail on its first query.
    const target = (o.engine as { target?: { dialect?: unknown } }).target;
    if (target?.dialect !== 'duckdb' && target?.dialect !== 'clickhouse') {
      throw new InvalidOptionError('engine', "An engine declares its target: target: { dialect: 'duckdb' }, or a ClickHouse engine's (docs/api.md, the engine option).");
    }
  }
  if (o.storage !== undefined) {
    const storage = checkObject('storage', o.storage, false)!;
    if (typeof storage.dataDir !== 'string' || storage.dataDir === '') {
      throw new InvalidOptionError('storage.dataDir', `storage.dataDir must be the folder managed storage keeps events in, not ${describeValue(storage.dataDir)}.`);
    }
    checkInteger('storage.retentionDays', storage.retentionDays, 1, 36_500);
    // The write-ahead log's bounds, checked here so a mistake names the option (not a RangeError from inside).
    for (const bound of ['maxSegmentBytes', 'maxSegmentAgeMs', 'segmentQuietMs', 'maxPendingBytes', 'maxUncompactedBytes'] as const) {
      checkPositiveNumber(`storage.${bound}`, storage[bound], bound.endsWith('Ms') ? 'milliseconds' : 'bytes');
    }
    checkObject('storage.sourceNames', storage.sourceNames);
    checkBoolean('storage.typedColumns', storage.typedColumns);
    if (storage.clickhouse !== undefined) checkShipping(storage, o.engine);
  }
  checkFunction('onWarning', o.onWarning, 'a function');
  checkFunction('onIngested', o.onIngested, 'a function');
  if (o.segmentKeeper !== undefined) checkMethods('segmentKeeper', o.segmentKeeper, ['attach', 'appended', 'releasing'], 'a SegmentKeeper');
  checkFunction('now', o.now, 'a function returning a Date');
  checkFunction('cacheClock', o.cacheClock, 'a function returning milliseconds since the epoch');
  if (o.cache !== undefined && o.cache !== false) checkMethods('cache', o.cache, ['get', 'set', 'delete'], 'false or a ResultCache');
  checkObject('cachePolicy', o.cachePolicy);
  checkInteger('warmingConcurrency', o.warmingConcurrency, 1);
  checkInteger('maxWarmingKeys', o.maxWarmingKeys, 1);
  checkPositiveNumber('storeTimeoutMs', o.storeTimeoutMs, 'milliseconds');
  if (o.scheduler !== undefined) checkMethods('scheduler', o.scheduler, ['schedule'], 'a CacheScheduler');
  const duckdb = checkObject('duckdb', o.duckdb);
  checkInteger('duckdb.threads', duckdb?.threads, 1, 1024);
  checkMemorySize('duckdb.memoryLimit', duckdb?.memoryLimit, MIN_MEMORY_LIMIT_BYTES);
  checkMemorySize('memoryLimit', o.memoryLimit, MIN_BUDGET_BYTES);
  const limits = checkObject('limits', o.limits);
  checkInteger('limits.maxConcurrentQueries', limits?.maxConcurrentQueries, 1);
  checkInteger('limits.maxQueuedQueries', limits?.maxQueuedQueries, 0);
  checkInteger('limits.queryTimeoutMs', limits?.queryTimeoutMs, 1);
  checkBoolean('fillEmptyBuckets', o.fillEmptyBuckets);
  checkSandboxable(o.sandboxable, o.endpoints);
}

/**
 * `sandboxable`: endpoint names, each at most once: the built-ins' or those of `endpoints`
 * (whose names are checked once the definitions are, at start).
 */
function checkSandboxable(value: unknown, endpoints: unknown): void {
  if (value === undefined) return;
  const known: string[] = [...DEFINITIONS, ...(Array.isArray(endpoints) ? endpoints : [])].map((d) => String((d as { name?: unknown })?.name));
  if (!Array.isArray(value) || value.some((name) => !known.includes(name)) || new Set(value).size !== value.length) {
    throw new InvalidOptionError('sandboxable', `sandboxable must list endpoint names, each once (${known.join(', ')}), not ${describeValue(value)}.`);
  }
}

/** `storage.clickhouse`: a loader or where the tables are; queries must read them too. */
function checkShipping(storage: Record<string, unknown>, engine: unknown): void {
  const target = checkObject('storage.clickhouse', storage.clickhouse, false)!;
  if (typeof target.insertAt !== 'function' && (typeof target.database !== 'string' || typeof target.url !== 'string')) {
    throw new InvalidOptionError('storage.clickhouse', `storage.clickhouse must be a clickhouseLoader(...) or { url, database, cluster? }, not ${describeValue(storage.clickhouse)}.`);
  }
  checkInteger('storage.clickhouse.batchRows', target.batchRows, 1);
  if (engine === undefined) {
    throw new InvalidOptionError('engine', 'storage.clickhouse ships the events to ClickHouse: query them there too, with engine: clickhouseEngine({ url, database, cluster }) over the same tables.');
  }
  if (storage.retentionDays !== undefined) {
    throw new InvalidOptionError('storage.retentionDays', 'storage.retentionDays deletes local days; with storage.clickhouse the events live in ClickHouse: drop its old partitions there instead.');
  }
}

/**
 * Where the logs are (`options.sources`), once the instance's sources are known: required unless
 * another engine or managed storage is given (`{}` is allowed: every source empty); each source
 * of the set a glob or a list of globs, and no other key.
 */
export function checkSourceGlobs(options: EndpointsOptions, set: SourceSet): void {
  const value: unknown = options.sources;
  if (value === undefined && (options.engine !== undefined || options.storage !== undefined)) return;
  if (value === undefined) {
    throw new InvalidOptionError('sources', `sources is required: say where the logs are, e.g. ${EXAMPLE} (or keep them yourself: storage: { dataDir }).`);
  }
  const sources = checkObject('sources', value, false)!;
  for (const name of Object.keys(sources)) set.get(name);
  for (const name of set.names) {
    const globs = sources[name];
    if (globs === undefined) continue;
    const list = typeof globs === 'string' ? [globs] : Array.isArray(globs) ? globs : null;
    if (list === null || !list.every((g) => typeof g === 'string' && g.trim() !== '')) {
      throw new InvalidOptionError(`sources.${name}`, `sources.${name} must be a glob or a list of globs (non-empty strings), not ${describeValue(globs)}.`);
    }
  }
}

/** The known name `key` is most likely a typo of (at most two edits away), or null. */
function closest(key: string, known: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = 3;
  for (const name of known) {
    const d = editDistance(key.toLowerCase(), name.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [name, d];
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length]!;
}

/** A size such as '256MB' or '2GB', at least `min` bytes. */
function checkMemorySize(option: string, value: unknown, min: number): void {
  if (value === undefined) return;
  const bytes = typeof value === 'string' ? memoryLimitBytes(value) : null;
  if (bytes === null) throw new InvalidOptionError(option, `${option} must be a size such as '256MB' or '2GB', not ${describeValue(value)}.`);
  if (bytes < min) {
    throw new InvalidOptionError(
      option,
      `${option} must be at least ${Math.round(min / 1e6)}MB (${option === 'memoryLimit' ? 'the process alone takes about 120 MiB' : 'DuckDB cannot run below it'}), not ${describeValue(value)}.`,
    );
  }
}

/**
 * An engine that knows its sources (the ClickHouse engine) must know every source of the instance:
 * one made without the same `sourceDefinitions` could not map their tables.
 *
 * @example
 * checkEngineSources(clickhouseEngine({ url, database: 'logs' }), BUILT_IN_SOURCE_SET.extend([authLogs])); // throws: ... authLogs ...
 */
export function checkEngineSources(engine: Engine | undefined, sources: SourceSet): void {
  if (engine?.target.dialect !== 'clickhouse') return;
  const known = engine.target.sources.names;
  const missing = sources.names.filter((name) => !known.includes(name));
  if (missing.length) {
    throw new InvalidOptionError(
      'engine',
      `The engine does not know the source${missing.length > 1 ? 's' : ''} ${missing.join(', ')} of these endpoints: give it the same sourceDefinitions (e.g. clickhouseEngine({ ..., sourceDefinitions })).`,
    );
  }
}
