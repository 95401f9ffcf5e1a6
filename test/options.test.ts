import { describe, expect, it } from 'vitest';
import { createEndpoints, InvalidOptionError, type EndpointsOptions } from '../src/index';
import { memoryLimitBytes, openDatabase } from '../src/duckdb/open-database';
import { ProbeEngine } from './support/cache-harness';
import { createHandler } from '../src/http/create-handler';

const sources = { edgeLogs: 'logs/edge/*.ndjson' };

/** createEndpoints with these options must refuse them with an InvalidOptionError naming `option`. */
async function refused(options: unknown, option: string, message: RegExp) {
  const error = await (createEndpoints as (o: unknown) => Promise<unknown>)(options).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InvalidOptionError);
  expect(error).toMatchObject({ code: 'invalid_option', option });
  expect((error as Error).message).toMatch(message);
  return error as InvalidOptionError;
}

describe('createEndpoints options are checked up front', () => {
  it('says what to configure when there are no options or no sources', async () => {
    await refused(undefined, 'options', /createEndpoints needs options saying where the logs are, e\.g\. createEndpoints\(\{ sources: \{ edgeLogs:/);
    await refused(null, 'options', /needs options/);
    await refused('logs/*.ndjson', 'options', /needs options/);
    await refused({}, 'sources', /sources is required: say where the logs are/);
    await refused({ sources: 'logs/*.ndjson' }, 'sources', /sources must be an object, not "logs\/\*\.ndjson"/);
  });

  it('names a misspelt or malformed source', async () => {
    await refused({ sources: { edgelogs: 'x' } }, 'sources.edgelogs', /not a log source; the sources are edgeLogs, functionEdgeLogs/);
    await refused({ sources: { edgeLogs: 42 } }, 'sources.edgeLogs', /a glob or a list of globs/);
    await refused({ sources: { functionEdgeLogs: ['a/*.ndjson', ''] } }, 'sources.functionEdgeLogs', /non-empty strings/);
  });

  it('refuses limits that would hang or refuse every query', async () => {
    await refused({ sources, limits: { maxConcurrentQueries: 0 } }, 'limits.maxConcurrentQueries', /must be a positive integer, not 0/);
    await refused({ sources, limits: { maxConcurrentQueries: 2.5 } }, 'limits.maxConcurrentQueries', /positive integer/);
    await refused({ sources, limits: { maxQueuedQueries: -1 } }, 'limits.maxQueuedQueries', /an integer of at least 0, not -1/);
    await refused({ sources, limits: { queryTimeoutMs: 0 } }, 'limits.queryTimeoutMs', /positive integer/);
    await refused({ sources, limits: 5 }, 'limits', /limits must be an object, not 5/);
  });

  it('refuses DuckDB settings it cannot use, before DuckDB sees them', async () => {
    await refused({ sources, duckdb: { memoryLimit: 'lots' } }, 'duckdb.memoryLimit', /a size such as '256MB' or '2GB', not "lots"/);
    await refused({ sources, duckdb: { memoryLimit: 256 } }, 'duckdb.memoryLimit', /not 256/);
    await refused({ sources, duckdb: { threads: 0 } }, 'duckdb.threads', /an integer from 1 to 1024, not 0/);
    await refused({ sources, duckdb: { threads: '4' } }, 'duckdb.threads', /not "4"/);
  });

  it('refuses a memory limit too small for DuckDB to run at all', async () => {
    await refused({ sources, duckdb: { memoryLimit: '0MB' } }, 'duckdb.memoryLimit', /at least 1MB \(DuckDB cannot run below it\), not "0MB"/);
    await refused({ sources, duckdb: { memoryLimit: '999KB' } }, 'duckdb.memoryLimit', /at least 1MB/);
  });

  it('turns what DuckDB still refuses into an InvalidOptionError, not its raw error', async () => {
    const error = await openDatabase({ threads: 0 }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect(error).toMatchObject({ option: 'duckdb', message: expect.stringMatching(/^DuckDB refused its settings \(threads 0, memoryLimit default\): /) });
    expect((error as Error).cause).toBeInstanceOf(Error);
  });

  it('reads memory limits as DuckDB does', () => {
    expect(memoryLimitBytes('256MB')).toBe(256e6);
    expect(memoryLimitBytes('1.5 GiB')).toBe(1.5 * 2 ** 30);
    expect(memoryLimitBytes('512mib')).toBe(512 * 2 ** 20);
    expect(memoryLimitBytes('80%')).toBeNull();
    expect(memoryLimitBytes('lots')).toBeNull();
  });

  it('refuses bad cache options', async () => {
    const engine = new ProbeEngine(null);
    await refused({ sources, engine, cache: {} }, 'cache', /false or a ResultCache \(with get, set, delete\); an object lacks get, set, delete/);
    await refused({ sources, engine, cache: true }, 'cache', /ResultCache/);
    await refused({ sources, engine, cachePolicy: { 'usage.api-counts': { ttlSeconds: -5, warmingSeconds: 0 } } }, 'cachePolicy["usage.api-counts"].ttlSeconds', /positive number of seconds/);
    await refused({ sources, engine, cachePolicy: { 'logs.all': { ttlSeconds: 60, warmingSeconds: 0 } } }, 'cachePolicy["logs.all"]', /never cached/);
    await refused({ sources, engine, cachePolicy: { 'usage.api-count': null } }, 'cachePolicy["usage.api-count"]', /no endpoint is named/);
    await refused({ sources, engine, warmingConcurrency: 0 }, 'warmingConcurrency', /positive integer/);
    await refused({ sources, engine, maxWarmingKeys: -1 }, 'maxWarmingKeys', /positive integer/);
    await refused({ sources, engine, storeTimeoutMs: 0 }, 'storeTimeoutMs', /positive number of milliseconds/);
    await refused({ sources, engine, scheduler: () => undefined }, 'scheduler', /CacheScheduler/);
    await refused({ sources, engine, cacheClock: Date.now() }, 'cacheClock', /a function returning milliseconds/);
    await refused({ sources, engine, now: new Date() }, 'now', /a function returning a Date/);
  });

  it('refuses an engine that is not one, and a non-boolean fillEmptyBuckets', async () => {
    await refused({ engine: {} }, 'engine', /an Engine \(with run, checkPattern, ping, inspectSources, close\)/);
    // One written against the engine contract before targets (a `dialect` of its own) is named, not run.
    const { target: _target, ...withoutTarget } = new ProbeEngine(null);
    const methods = { run: async () => ({ rows: [] }), checkPattern: async () => null, ping: async () => undefined, inspectSources: async () => [], close: async () => undefined };
    await refused({ sources, engine: { ...withoutTarget, ...methods, dialect: 'duckdb' } as never }, 'engine', /declares its target/);
    await refused({ sources, engine: { ...methods, target: { dialect: 'postgres' } } as never }, 'engine', /declares its target/);
    await refused({ sources, fillEmptyBuckets: 'yes' }, 'fillEmptyBuckets', /true or false/);
  });

  it('names every option mistake with InvalidOptionError: unknown options, storage bounds and names, sandboxable, singleProject, the handler', async () => {
    await refused({ sources, cachPolicy: {} }, 'cachPolicy', /does not know the option "cachPolicy" \(did you mean "cachePolicy"\?\)/);
    await refused({ sources, storage: { dataDir: 'd', maxSegmentBytes: 0 } }, 'storage.maxSegmentBytes', /positive/);
    await refused({ sources, storage: { dataDir: 'd', maxUncompactedBytes: 'lots' } }, 'storage.maxUncompactedBytes', /positive/);
    await refused({ sources, storage: { dataDir: 'd', segmentQuietMs: -5 } }, 'storage.segmentQuietMs', /positive number of milliseconds/);
    await refused({ sources, storage: { dataDir: 'd', typedColumns: 'yes' } }, 'storage.typedColumns', /storage\.typedColumns must be true or false, not "yes"/);
    await refused({ sources, sandboxable: ['logs.everything'] }, 'sandboxable', /endpoint names/);
    await refused({ sources, singleProject: 'yes' }, 'singleProject', /true or false/);
    const ep = await createEndpoints({ sources: {} });
    try {
      for (const [options, option] of [
        [{}, 'apiKeys'],
        [{ auth: false, basePath: 'a b' }, 'basePath'],
        [{ auth: false, ingest: { maxBodyBytes: 0 } }, 'ingest.maxBodyBytes'],
      ] as const) {
        expect(() => createHandler(ep, options as never)).toThrow(InvalidOptionError);
        try {
          createHandler(ep, options as never);
        } catch (error) {
          expect(error).toMatchObject({ code: 'invalid_option', option });
        }
      }
    } finally {
      await ep.close();
    }
  });

  it('accepts what it documents', async () => {
    const good: EndpointsOptions[] = [
      { sources, duckdb: { threads: 1, memoryLimit: '256MB' }, limits: { maxConcurrentQueries: 1, maxQueuedQueries: 0, queryTimeoutMs: 1 } },
      { sources: { functionEdgeLogs: ['a/*.parquet', 'b/*.ndjson.gz'] }, cache: false, fillEmptyBuckets: true },
      { engine: new ProbeEngine(null) } as unknown as EndpointsOptions, // JavaScript callers may leave sources out with their own engine
      { sources: {}, engine: new ProbeEngine(null), storeTimeoutMs: 0.5, maxWarmingKeys: 1, cacheClock: () => 0 },
      { sources: {} }, // every source empty: queries answer no rows
    ];
    for (const options of good) await (await createEndpoints(options)).close();
  });
});
