import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDuckDBEngine } from '../src/engine/duckdb/duckdb-engine';
import { createEndpoints, defineEndpoint, EngineError, InvalidParameterError, type CacheEntry, type Engine, type EndpointsOptions, type ResultCache } from '../src/index';
import { cachedEndpoints, flakyStore, manualTime, ProbeEngine, settle } from './support/cache-harness';
import { edgeEvent, functionEvent, tempDir, writeLines } from './support/log-files';
import { BUILT_IN_SOURCE_SET } from '../src/sources/built-ins';

const NOW = '2026-11-21T12:00:00.000Z';
const USAGE_ID = '538d9361-e1e6-421a-953a-37a46d1b9e19';

describe('result cache (in memory)', () => {
  const tmp = tempDir('le-cache-');
  let duckdb: Engine;

  beforeAll(async () => {
    writeLines(tmp.path('edge', 'a.ndjson'), [
      edgeEvent({ project: 'abc', timestamp: '2026-11-21T11:00:00Z', path: '/rest/v1/todos' }),
      edgeEvent({ project: 'abc', timestamp: '2026-11-21T11:30:00Z', path: '/auth/v1/token' }),
    ]);
    writeLines(tmp.path('fn', 'a.ndjson'), [
      functionEvent({ project: 'abc', timestamp: '2026-11-21T11:00:00Z', ms: 10 }),
      functionEvent({ project: 'abc', timestamp: '2026-11-21T11:10:00Z', ms: 30, status: 500 }),
    ]);
    duckdb = await createDuckDBEngine({ sourceSet: BUILT_IN_SOURCE_SET, sources: { edgeLogs: tmp.path('edge', '*.ndjson'), functionEdgeLogs: tmp.path('fn', '*.ndjson') } });
  });
  afterAll(async () => {
    await duckdb.close();
    tmp.cleanup();
  });

  /** Endpoints over the shared DuckDB, with their own memory cache, a manual clock and a counting engine. */
  const setup = (extra: Partial<EndpointsOptions> = {}, inner: Engine | null = duckdb) => cachedEndpoints(NOW, inner, extra);

  it('serves the second call from the cache without an engine query', async () => {
    const { ep, probe } = await setup();
    const first = await ep.query('usage.api-counts', { project: 'abc', interval: 'daily' });
    const second = await ep.query('usage.api-counts', { project: 'abc', interval: 'daily' });
    expect(first.cache).toBe('miss');
    expect(second.cache).toBe('hit');
    expect(second.result).toEqual(first.result);
    expect(first.result).toEqual([{ timestamp: '2026-11-21T00:00:00.000000Z', total_rest_requests: 1, total_storage_requests: 0, total_auth_requests: 1, total_realtime_requests: 0 }]);
    expect(probe.runs).toBe(1);
    expect(ep.stats()).toMatchObject({ engineQueries: 1, cacheHits: 1, cacheMisses: 1 });
    await ep.close();
  });

  it('runs one engine query for 50 concurrent calls on a cold key', async () => {
    const { ep, probe } = await setup();
    const answers = await Promise.all(Array.from({ length: 50 }, () => ep.query('functions.invocation-stats', { project: 'abc', interval: '1day' })));
    expect(probe.runs).toBe(1);
    expect(ep.stats().engineQueries).toBe(1);
    expect(new Set(answers.map((a) => a.computedAt)).size).toBe(1);
    expect(answers.every((a) => a.cache === 'miss')).toBe(true);
    expect(answers[0]!.result.map((r) => r.count)).toEqual([2]);
    await ep.close();
  });

  it('reports the age and remaining lifetime of a cached answer', async () => {
    const { ep, time } = await setup();
    const miss = await ep.query('usage.api-counts', { project: 'abc', interval: 'daily' });
    expect(miss).toMatchObject({ cache: 'miss', computedAt: NOW, ageSeconds: 0, ttlRemainingSeconds: 900 });
    await time.advance(120_000);
    const hit = await ep.query('usage.api-counts', { project: 'abc', interval: 'daily' });
    expect(hit).toMatchObject({ cache: 'hit', computedAt: NOW, ageSeconds: 120, ttlRemainingSeconds: 780 });
    expect(hit.engineMs).toBe(miss.engineMs);
    await ep.close();
  });

  it('serves a result for at most its lifetime, even from a store that keeps it longer', async () => {
    const map = new Map<string, CacheEntry>();
    const forgetful: ResultCache = {
      get: async (key) => map.get(key),
      set: async (key, value) => void map.set(key, value), // ignores the time to live
      delete: async (key) => void map.delete(key),
    };
    const { ep, time, probe } = await setup({ cache: forgetful, cachePolicy: { 'usage.api-counts': { ttlSeconds: 900, warmingSeconds: 0 } } });
    await ep.query('usage.api-counts', { project: 'abc', interval: 'daily' });
    await time.advance(899_999);
    expect((await ep.query('usage.api-counts', { project: 'abc', interval: 'daily' })).cache).toBe('hit');
    await time.advance(1);
    const expired = await ep.query('usage.api-counts', { project: 'abc', interval: 'daily' });
    expect(expired).toMatchObject({ cache: 'miss', ageSeconds: 0, computedAt: '2026-11-21T12:15:00.000Z' });
    expect(probe.runs).toBe(2);
    await ep.close();
  });

  it('shares one entry between calls by name and by UUID', async () => {
    const { ep, probe, store } = await setup();
    expect((await ep.query('usage.api-counts', { project: 'abc', interval: 'daily' })).cache).toBe('miss');
    expect((await ep.query(USAGE_ID as string, { project: 'abc', interval: 'daily' })).cache).toBe('hit');
    expect((await ep.query(USAGE_ID.toUpperCase(), { project: 'abc', interval: 'daily' })).cache).toBe('hit');
    expect((await ep.usageApiCounts({ project: 'abc', interval: 'daily' })).length).toBe(1);
    expect(probe.runs).toBe(1);
    expect(store.entries).toBe(1);
    await ep.close();
  });

  it('does not create entries for extra, empty or fallback parameters', async () => {
    const { ep, probe, store } = await setup();
    await ep.query('functions.invocation-stats', { project: 'abc', interval: '1day' });
    const variants = [
      { project: 'abc', interval: '1day', utm_source: 'mail' },
      { project: 'abc', interval: '1day', function_id: '' },
      { project: 'abc', interval: 'fortnight' },
      { interval: '1day', project: 'abc', sql: 'select 1' },
    ];
    for (const params of variants) expect((await ep.query('functions.invocation-stats', params)).cache).toBe('hit');
    expect(store.entries).toBe(1);
    expect(probe.runs).toBe(1);
    // A different declared value is a different entry.
    expect((await ep.query('functions.invocation-stats', { project: 'abc', interval: '1day', function_id: 'f1' })).cache).toBe('miss');
    expect(store.entries).toBe(2);
    await ep.close();
  });

  it('validates before the cache: a bad parameter creates no entry and runs no query', async () => {
    const { ep, probe, store } = await setup();
    await expect(ep.query('usage.api-counts' as string, { project: 'abc', interval: 'weekly' })).rejects.toBeInstanceOf(InvalidParameterError);
    await expect(ep.query('usage.api-counts', { project: '(', interval: 'daily' })).rejects.toBeInstanceOf(InvalidParameterError);
    await expect(ep.query('functions.invocation-stats' as string, { interval: '1day' })).rejects.toBeInstanceOf(InvalidParameterError);
    expect(store.entries).toBe(0);
    expect(probe.runs).toBe(0);
    expect(ep.stats()).toMatchObject({ cacheMisses: 0, cacheHits: 0 });
    await ep.close();
  });

  it('never caches an engine error, also when concurrent callers share it', async () => {
    const { ep, probe, store } = await setup();
    probe.failing = true;
    const calls = Array.from({ length: 5 }, () => ep.query('usage.api-counts', { project: 'abc', interval: 'daily' }));
    for (const call of calls) await expect(call).rejects.toMatchObject({ code: 'query_failed' });
    expect(probe.runs).toBe(1);
    expect(store.entries).toBe(0);
    await expect(ep.query('usage.api-counts', { project: 'abc', interval: 'daily' })).rejects.toBeInstanceOf(EngineError);
    expect(probe.runs).toBe(2);
    probe.failing = false;
    const ok = await ep.query('usage.api-counts', { project: 'abc', interval: 'daily' });
    expect(ok.cache).toBe('miss');
    expect(probe.runs).toBe(3);
    expect(ep.stats()).toMatchObject({ engineQueries: 3, engineFailures: 2 });
    await ep.close();
  });

  it('never caches logs.all', async () => {
    const { ep, probe, store } = await setup();
    const params = { project: 'abc', project_tier: 'PRO' };
    const a = await ep.query('logs.all', params);
    const b = await ep.query('logs.all', params);
    expect([a.cache, b.cache]).toEqual(['bypass', 'bypass']);
    expect(a.ttlRemainingSeconds).toBeNull();
    expect(a.result).toHaveLength(2);
    expect(probe.runs).toBe(2);
    expect(store.entries).toBe(0);
    expect(ep.stats()).toMatchObject({ cacheHits: 0, cacheMisses: 0, warmingKeys: 0 });
    await ep.close();
  });

  it('bypasses the cache with cache: false, and lists no policy then', async () => {
    const { ep, probe } = await setup({ cache: false });
    const a = await ep.query('usage.api-counts', { project: 'abc', interval: 'daily' });
    const b = await ep.query('usage.api-counts', { project: 'abc', interval: 'daily' });
    expect([a.cache, b.cache]).toEqual(['bypass', 'bypass']);
    expect(probe.runs).toBe(2);
    expect(ep.definitions.map((d) => d.cache)).toEqual([null, null, null]);
    await ep.close();
  });

  it('caches in memory by default', async () => {
    const time = manualTime(NOW);
    const probe = new ProbeEngine(duckdb);
    const ep = await createEndpoints({ sources: {}, engine: probe, cacheClock: time.clock, scheduler: time.scheduler });
    await ep.query('usage.api-counts', { project: 'abc', interval: 'daily' });
    expect((await ep.query('usage.api-counts', { project: 'abc', interval: 'daily' })).cache).toBe('hit');
    expect(probe.runs).toBe(1);
    await ep.close();
  });

  it("lists the policies in force: the definitions' own, or the overrides", async () => {
    const defaults = await setup();
    expect(Object.fromEntries(defaults.ep.definitions.map((d) => [d.name, d.cache]))).toEqual({
      'functions.invocation-stats': { ttlSeconds: 900, warmingSeconds: 300 },
      'logs.all': null,
      'usage.api-counts': { ttlSeconds: 900, warmingSeconds: 300 },
    });
    await defaults.ep.close();
    const { ep } = await setup({
      cachePolicy: { 'usage.api-counts': { ttlSeconds: 60, warmingSeconds: 20 }, 'functions.invocation-stats': null },
    });
    expect(Object.fromEntries(ep.definitions.map((d) => [d.name, d.cache]))).toEqual({
      'functions.invocation-stats': null,
      'logs.all': null,
      'usage.api-counts': { ttlSeconds: 60, warmingSeconds: 20 },
    });
    await ep.close();
  });

  it('applies per-endpoint overrides', async () => {
    const { ep, time, probe } = await setup({
      cachePolicy: { 'usage.api-counts': { ttlSeconds: 60, warmingSeconds: 0 }, 'functions.invocation-stats': null },
    });
    const miss = await ep.query('usage.api-counts', { project: 'abc', interval: 'daily' });
    expect(miss.ttlRemainingSeconds).toBe(60);
    await time.advance(59_000);
    expect((await ep.query('usage.api-counts', { project: 'abc', interval: 'daily' })).cache).toBe('hit');
    await time.advance(1_000);
    expect(probe.runs).toBe(1); // warmingSeconds 0: no background refresh
    expect((await ep.query('usage.api-counts', { project: 'abc', interval: 'daily' })).cache).toBe('miss');
    const stats = await ep.query('functions.invocation-stats', { project: 'abc', interval: '1day' });
    expect(stats.cache).toBe('bypass');
    expect(ep.stats().warmingKeys).toBe(0);
    await ep.close();
  });

  it('refuses overrides that cannot be honoured', async () => {
    const probe = new ProbeEngine(null);
    const make = (cachePolicy: EndpointsOptions['cachePolicy']) => createEndpoints({ sources: {}, engine: probe, cachePolicy });
    await expect(make({ 'logs.all': { ttlSeconds: 60, warmingSeconds: 10 } })).rejects.toThrow(/logs\.all is never cached/);
    await expect(make({ 'usage.api-counts': { ttlSeconds: 0, warmingSeconds: 10 } })).rejects.toThrow(/ttlSeconds/);
    await expect(make({ 'usage.api-counts': { ttlSeconds: 60, warmingSeconds: -1 } })).rejects.toThrow(/warmingSeconds/);
    await expect(make({ 'no.such': null } as never)).rejects.toThrow(/no endpoint/);
    const allowed = await make({ 'logs.all': null });
    await allowed.close();
  });

  it('waits for a store that hangs at most storeTimeoutMs, then computes the answer and counts the failure', async () => {
    const flaky = flakyStore();
    const { ep, probe } = await setup({ cache: flaky.store, storeTimeoutMs: 20 });
    const params = { project: 'abc', interval: 'daily' };
    expect((await ep.query('usage.api-counts' as string, params)).cache).toBe('miss');
    expect((await ep.query('usage.api-counts' as string, params)).cache).toBe('hit');
    flaky.mode.get = 'hang';
    flaky.mode.set = 'hang';
    // Neither hung read nor hung write holds the call: it answers from the engine.
    const answer = await ep.query('usage.api-counts' as string, params);
    expect(answer.cache).toBe('miss');
    expect(answer.result).toHaveLength(1);
    expect(probe.runs).toBe(2);
    expect(flaky.hung).toBe(2);
    expect(ep.stats().cacheErrors).toBe(2);
    flaky.recover();
    await settle();
    expect((await ep.query('usage.api-counts' as string, params)).cache).toBe('hit');
    expect(ep.stats().cacheErrors).toBe(2);
    await ep.close();
  });

  it('gives back a warming lock that was granted after the time limit, so the interval is not blocked', async () => {
    const flaky = flakyStore();
    const { ep, time, probe } = await setup({ cache: flaky.store, storeTimeoutMs: 20 });
    const params = { project: 'abc', interval: 'daily' };
    await ep.query('usage.api-counts' as string, params);
    flaky.mode.tryLock = 'hang';
    await time.advance(300_000); // the refresh waits 20 ms for the lock, then leaves this interval alone
    expect(probe.runs).toBe(1);
    expect(ep.stats()).toMatchObject({ cacheErrors: 1, warmingRefreshes: 0, warmingFailures: 0 });
    flaky.recover();
    await settle();
    expect(flaky.locksTaken).toBe(1);
    expect(flaky.locksHeld).toBe(0);
    await time.advance(300_000); // the next interval refreshes as usual
    expect(probe.runs).toBe(2);
    expect(ep.stats().warmingRefreshes).toBe(1);
    await ep.close();
  });

  it('answers from the engine when the store fails, and counts the failures', async () => {
    const broken: ResultCache = {
      get: () => Promise.reject(new Error('store down')),
      set: () => Promise.reject(new Error('store down')),
      delete: () => Promise.reject(new Error('store down')),
    };
    const { ep, probe } = await setup({ cache: broken });
    const a = await ep.query('usage.api-counts', { project: 'abc', interval: 'daily' });
    const b = await ep.query('usage.api-counts', { project: 'abc', interval: 'daily' });
    expect([a.cache, b.cache]).toEqual(['miss', 'miss']);
    expect(b.result).toEqual(a.result);
    expect(probe.runs).toBe(2);
    expect(ep.stats().cacheErrors).toBe(4);
    await ep.close();
  });
});

describe("a cached, sandboxable endpoint and a caller's SQL that reads the clock", () => {
  const tmp = tempDir('le-cache-now-');
  afterAll(() => tmp.cleanup());

  it('keys the answer by the instant when the SQL reads $now, and caches it as before when it does not', async () => {
    const edge = writeLines(tmp.path('edge', 'a.ndjson'), [edgeEvent({ project: 'abc', timestamp: '2026-11-21T11:00:00Z', path: '/rest/v1/todos' })]);
    const recent = defineEndpoint({
      name: 'recent',
      sql: { duckdb: 'WITH rows AS (SELECT id, timestamp FROM edge_logs) SELECT id, timestamp FROM rows' },
      columns: { id: 'text', timestamp: 'timestamp' },
      cache: { ttlSeconds: 3600, warmingSeconds: 0 },
      sandboxable: true,
    });
    let now = new Date('2026-11-21T12:00:00Z');
    const ep = await createEndpoints({ sources: { edgeLogs: edge }, endpoints: [recent], now: () => now });
    try {
      const clock = 'SELECT $now AS t FROM rows';
      const first = await ep.query('recent', {}, { sql: clock });
      now = new Date('2026-11-21T13:00:00Z');
      const second = await ep.query('recent', {}, { sql: clock });
      expect([first.cache, second.cache]).toEqual(['miss', 'miss']);
      expect(second.result).not.toEqual(first.result);
      // The same instant again, and SQL that does not read the clock: the cache serves them.
      expect((await ep.query('recent', {}, { sql: clock })).cache).toBe('hit');
      const plain = 'SELECT count(*) AS n FROM rows';
      await ep.query('recent', {}, { sql: plain });
      now = new Date('2026-11-21T14:00:00Z');
      expect((await ep.query('recent', {}, { sql: plain })).cache).toBe('hit');
    } finally {
      await ep.close();
    }
  });
});
