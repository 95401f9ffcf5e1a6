import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cacheKey } from '../src/cache/cache-key';
import { timerScheduler } from '../src/util/scheduler';
import { normalizeParams } from '../src/definitions/params';
import { findDefinition } from '../src/definitions/registry';
import { createDuckDBEngine } from '../src/engine/duckdb/duckdb-engine';
import { createEndpoints, EngineError, memoryCache, type Engine, type EndpointsOptions } from '../src/index';
import { cachedEndpoints, flakyStore, manualTime, ProbeEngine, settle } from './support/cache-harness';
import { edgeEvent, tempDir, writeLines } from './support/log-files';
import { BUILT_IN_SOURCE_SET } from '../src/sources/built-ins';

const NOW = '2026-11-21T12:00:00.000Z';
const SECOND = 1000;
const USAGE = { project: 'abc', interval: 'daily' } as const;
const USAGE_KEY = cacheKey(findDefinition('usage.api-counts'), normalizeParams(findDefinition('usage.api-counts'), USAGE));

describe('cache warming', () => {
  const tmp = tempDir('le-warm-');
  let duckdb: Engine;
  let files = 0;
  /** Adds one more log file with `n` REST requests of project abc, stamped before the start time. */
  const addRequests = (n: number) =>
    writeLines(
      tmp.path('edge', `part-${++files}.ndjson`),
      Array.from({ length: n }, (_, i) => edgeEvent({ project: 'abc', timestamp: `2026-11-21T11:${String(i % 60).padStart(2, '0')}:00Z` })),
    );
  const restRequests = (rows: ReadonlyArray<{ total_rest_requests: number }>) => rows.reduce((sum, r) => sum + r.total_rest_requests, 0);

  beforeAll(async () => {
    addRequests(1);
    duckdb = await createDuckDBEngine({ sourceSet: BUILT_IN_SOURCE_SET, sources: { edgeLogs: tmp.path('edge', '*.ndjson') } });
  });
  afterAll(async () => {
    await duckdb.close();
    tmp.cleanup();
  });

  const setup = (extra: Partial<EndpointsOptions> = {}, inner: Engine | null = duckdb) => cachedEndpoints(NOW, inner, extra);

  it('refreshes a read key every warming interval, so new log data shows without a reader waiting', async () => {
    const { ep, time, probe } = await setup();
    const first = await ep.query('usage.api-counts', USAGE);
    expect(first.cache).toBe('miss');
    let expected = restRequests(first.result);
    for (let interval = 1; interval <= 3; interval++) {
      addRequests(interval);
      expected += interval;
      await time.advance(300 * SECOND);
      expect(probe.runs).toBe(1 + interval);
      const read = await ep.query('usage.api-counts', USAGE);
      // The reader got the refreshed rows from the cache: no engine query ran for it.
      expect(probe.runs).toBe(1 + interval);
      expect(read.cache).toBe('hit');
      expect(read.computedAt).toBe(new Date(Date.parse(NOW) + interval * 300 * SECOND).toISOString());
      expect(read.ageSeconds).toBe(0);
      expect(restRequests(read.result)).toBe(expected);
    }
    expect(ep.stats()).toMatchObject({ warmingRefreshes: 3, warmingFailures: 0, engineQueries: 4, cacheMisses: 1, cacheHits: 3 });
    await ep.close();
  });

  it('runs on the real clock under a replayed now: refreshes every interval, computedAt is the real instant', async () => {
    const time = manualTime(NOW);
    const probe = new ProbeEngine(duckdb);
    const replayed = new Date('2026-11-20T14:30:00Z'); // serve --now 2026-11-20T14:30:00Z
    const store = memoryCache({ clock: time.clock });
    const ep = await createEndpoints({ sources: {}, engine: probe, now: () => replayed, cacheClock: time.clock, scheduler: time.scheduler, cache: store });
    const first = await ep.query('usage.api-counts', USAGE);
    expect(first).toMatchObject({ cache: 'miss', computedAt: NOW, ageSeconds: 0, ttlRemainingSeconds: 900 });
    // The window was placed at the replayed instant.
    expect(probe.requests[0]!.notBefore).toBe(BigInt(Date.parse('2026-11-13T14:30:00Z')) * 1000n);
    await time.advance(120 * SECOND);
    expect(await ep.query('usage.api-counts', USAGE)).toMatchObject({ cache: 'hit', ageSeconds: 120, ttlRemainingSeconds: 780 });
    await time.advance(180 * SECOND);
    expect(probe.runs).toBe(2);
    expect(await ep.query('usage.api-counts', USAGE)).toMatchObject({
      cache: 'hit',
      computedAt: new Date(Date.parse(NOW) + 300 * SECOND).toISOString(),
      ageSeconds: 0,
    });
    // Unread for a lifetime: dropped, though the replayed clock never moved.
    await time.advance(900 * SECOND);
    expect(ep.stats().warmingKeys).toBe(0);
    expect(store.entries).toBe(0);
    expect(ep.now()).toEqual(replayed);
    await ep.close();
  });

  it('measures ages on the real clock by default, never on now', async () => {
    const ep = await createEndpoints({ sources: {}, engine: new ProbeEngine(null), now: () => new Date('2020-01-01T00:00:00Z') });
    const before = Date.now();
    const answer = await ep.query('usage.api-counts', USAGE);
    const after = Date.now();
    // The default clock is monotonic from the process's start instant: within a minute of the system clock.
    expect(Date.parse(answer.computedAt)).toBeGreaterThan(before - 60_000);
    expect(Date.parse(answer.computedAt)).toBeLessThan(after + 60_000);
    expect(answer.ttlRemainingSeconds).toBeGreaterThan(890);
    expect(Math.abs(ep.cacheClock() - Date.now())).toBeLessThan(60_000);
    const hit = await ep.query('usage.api-counts', USAGE);
    expect(hit.cache).toBe('hit');
    expect(hit.ageSeconds).toBeLessThan(10);
    await ep.close();
  });

  it('drops a key not read for a whole lifetime: no more refreshes, the entry is evicted', async () => {
    const { ep, time, probe, store } = await setup();
    await ep.query('usage.api-counts', USAGE); // read at 0
    await time.advance(100 * SECOND);
    await ep.query('usage.api-counts', USAGE); // last read at 100 s
    await time.advance(899 * SECOND); // 999 s: refreshed at 300, 600, 900
    expect(probe.runs).toBe(4);
    expect(ep.stats().warmingKeys).toBe(1);
    expect(store.entries).toBe(1);
    await time.advance(1 * SECOND); // 1000 s: a whole lifetime since the last read
    expect(ep.stats().warmingKeys).toBe(0);
    expect(store.entries).toBe(0);
    expect(time.pending).toBe(0);
    await time.advance(3600 * SECOND);
    expect(probe.runs).toBe(4);
    expect(ep.stats().warmingRefreshes).toBe(3);
    expect((await ep.query('usage.api-counts', USAGE)).cache).toBe('miss');
    await ep.close();
  });

  it('keeps a key warm for as long as it keeps being read', async () => {
    const { ep, time, probe } = await setup();
    await ep.query('usage.api-counts', USAGE);
    for (let i = 1; i <= 10; i++) {
      await time.advance(250 * SECOND);
      expect((await ep.query('usage.api-counts', USAGE)).cache).toBe('hit');
    }
    // 2500 s of reads: refreshed at 300, 600, ..., 2400.
    expect(probe.runs).toBe(1 + 8);
    expect(ep.stats().warmingKeys).toBe(1);
    await ep.close();
  });

  it('keeps serving the previous result while refreshes fail, until it expires', async () => {
    const { ep, time, probe } = await setup();
    const first = await ep.query('usage.api-counts', USAGE);
    probe.failing = true;
    await time.advance(300 * SECOND);
    let read = await ep.query('usage.api-counts', USAGE);
    expect(read).toMatchObject({ cache: 'hit', computedAt: first.computedAt, ageSeconds: 300, ttlRemainingSeconds: 600 });
    await time.advance(599 * SECOND); // 899 s: the failure at 600 s changed nothing either
    read = await ep.query('usage.api-counts', USAGE);
    expect(read).toMatchObject({ cache: 'hit', computedAt: first.computedAt, ageSeconds: 899 });
    expect(read.result).toEqual(first.result);
    expect(ep.stats()).toMatchObject({ warmingFailures: 2, warmingRefreshes: 0 });
    await time.advance(1 * SECOND); // 900 s: expired, and this refresh fails too
    expect(ep.stats().warmingFailures).toBe(3);
    await expect(ep.query('usage.api-counts', USAGE)).rejects.toBeInstanceOf(EngineError);
    probe.failing = false;
    const fresh = await ep.query('usage.api-counts', USAGE);
    expect(fresh).toMatchObject({ cache: 'miss', computedAt: new Date(Date.parse(NOW) + 900 * SECOND).toISOString() });
    await ep.close();
  });

  it('a reader of an expired key joins the refresh that is running instead of starting another', async () => {
    const { ep, time, probe } = await setup({ cachePolicy: { 'usage.api-counts': { ttlSeconds: 300, warmingSeconds: 300 } } });
    await ep.query('usage.api-counts', USAGE);
    await time.advance(299 * SECOND);
    await ep.query('usage.api-counts', USAGE);
    probe.holdRuns();
    const advancing = time.advance(1 * SECOND); // 300 s: the refresh starts and is held
    await probe.untilRunning(1);
    const reader = ep.query('usage.api-counts', USAGE); // the entry is a lifetime old now
    await settle();
    expect(probe.runs).toBe(2);
    probe.release();
    await advancing;
    const answer = await reader;
    expect(answer).toMatchObject({ cache: 'miss', computedAt: new Date(Date.parse(NOW) + 300 * SECOND).toISOString() });
    expect(probe.runs).toBe(2);
    await ep.close();
  });

  it("stops warming a key its store evicted, so warming stays within the store's bounds", async () => {
    const time = manualTime(NOW);
    const probe = new ProbeEngine(duckdb);
    const small = memoryCache({ maxEntries: 1, clock: time.clock });
    // Warming bounded only by eviction here (not by maxWarmingKeys), to prove the eviction path.
    const ep = await createEndpoints({
      sources: {},
      engine: probe,
      now: () => new Date(NOW),
      cacheClock: time.clock,
      scheduler: time.scheduler,
      cache: small,
      maxWarmingKeys: 10,
    });
    await ep.query('usage.api-counts', USAGE);
    await ep.query('functions.invocation-stats', { project: 'abc', interval: '1day' }); // evicts the first
    expect(ep.stats().warmingKeys).toBe(2);
    await time.advance(300 * SECOND);
    expect(probe.runs).toBe(3); // only the entry still held was refreshed
    expect(ep.stats()).toMatchObject({ warmingKeys: 1, warmingRefreshes: 1 });
    expect((await ep.query('usage.api-counts', USAGE)).cache).toBe('miss');
    await ep.close();
  });

  it('does not refresh a key a reader recomputed earlier in the interval', async () => {
    const { ep, time, probe, store } = await setup();
    await ep.query('usage.api-counts', USAGE); // computed at 0 s, refresh due at 300 s
    await time.advance(250 * SECOND);
    await store.delete(USAGE_KEY); // e.g. evicted by the memory bounds
    expect((await ep.query('usage.api-counts', USAGE)).cache).toBe('miss'); // recomputed at 250 s
    await time.advance(50 * SECOND); // 300 s: the result is only 50 s old
    expect(probe.runs).toBe(2);
    await time.advance(250 * SECOND); // 550 s: one interval after the reader's computation
    expect(probe.runs).toBe(3);
    expect(ep.stats().warmingRefreshes).toBe(1);
    await ep.close();
  });

  it('keeps at most as many keys warm as the store holds entries: the least recently read stop first', async () => {
    const { ep, time, probe } = await setup({ cache: memoryCache({ maxEntries: 100 }) }, null);
    for (let i = 0; i < 3000; i++) await ep.query('functions.invocation-stats', { project: `p${i}`, interval: '1day' });
    expect(ep.stats().warmingKeys).toBe(100);
    expect(time.pending).toBe(100);
    await time.advance(300 * SECOND);
    expect(probe.runs).toBe(3000 + 100);
    expect(ep.stats().warmingRefreshes).toBe(100);
    // The 100 most recently read keys are the ones refreshed.
    expect(new Set(probe.requests.slice(3000).map((r) => r.params.project))).toEqual(new Set(Array.from({ length: 100 }, (_, i) => `p${2900 + i}`)));
    await ep.close();
  });

  it('bounds warm keys by maxWarmingKeys for a store without an entry bound', async () => {
    const { ep, time, probe } = await setup({ cache: flakyStore().store, maxWarmingKeys: 3 }, null);
    for (let i = 0; i < 10; i++) await ep.query('functions.invocation-stats', { project: `p${i}`, interval: '1day' });
    expect(ep.stats().warmingKeys).toBe(3);
    expect(time.pending).toBe(3);
    // A read moves a key to the newest end: p7 survives the next two new keys, p8 does not.
    await ep.query('functions.invocation-stats', { project: 'p7', interval: '1day' });
    await ep.query('functions.invocation-stats', { project: 'q1', interval: '1day' });
    await ep.query('functions.invocation-stats', { project: 'q2', interval: '1day' });
    expect(ep.stats().warmingKeys).toBe(3);
    const before = probe.requests.length;
    await time.advance(300 * SECOND);
    expect(
      probe.requests
        .slice(before)
        .map((r) => r.params.project)
        .sort(),
    ).toEqual(['p7', 'q1', 'q2']);
    await ep.close();
  });

  it('bounds how many refreshes run at once', async () => {
    const { ep, time, probe } = await setup({ warmingConcurrency: 2 }, null);
    for (let i = 0; i < 5; i++) await ep.query('functions.invocation-stats', { project: `p${i}`, interval: '1day' });
    expect(probe.runs).toBe(5);
    probe.holdRuns();
    const advancing = time.advance(300 * SECOND); // all five keys fall due together
    await probe.untilRunning(2);
    await settle();
    expect(probe.running).toBe(2);
    probe.release();
    await advancing;
    expect(probe.runs).toBe(10);
    expect(probe.maxRunning).toBe(2);
    expect(ep.stats().warmingRefreshes).toBe(5);
    await ep.close();
  });

  it('stops all warming on close; later calls fail with a closed error', async () => {
    const { ep, time, probe } = await setup();
    await ep.query('usage.api-counts', USAGE);
    await ep.query('functions.invocation-stats', { project: 'abc', interval: '1hr' });
    expect(time.pending).toBe(2);
    await ep.close();
    expect(time.pending).toBe(0);
    expect(ep.stats().warmingKeys).toBe(0);
    await time.advance(3600 * SECOND);
    expect(probe.runs).toBe(2);
    await expect(ep.query('usage.api-counts', USAGE)).rejects.toMatchObject({ code: 'closed' });
    await ep.close(); // twice is fine
  });

  it("schedules with unref'ed timers, so warming never keeps the process alive", () => {
    const spy = vi.spyOn(globalThis, 'setTimeout');
    try {
      const task = vi.fn(async () => undefined);
      const cancel = timerScheduler.schedule(300_000, task);
      const timer = spy.mock.results.at(-1)!.value as NodeJS.Timeout;
      expect(timer.hasRef()).toBe(false);
      cancel();
      expect(task).not.toHaveBeenCalled();
    } finally {
      spy.mockRestore();
    }
  });

  it("uses unref'ed timers by default", async () => {
    const spy = vi.spyOn(globalThis, 'setTimeout');
    try {
      const probe = new ProbeEngine(null);
      const ep = await createEndpoints({ sources: {}, engine: probe });
      const before = spy.mock.results.length;
      await ep.query('usage.api-counts', USAGE);
      const timers = spy.mock.results.slice(before).map((r) => r.value as NodeJS.Timeout);
      expect(timers.length).toBeGreaterThan(0);
      expect(timers.every((t) => !t.hasRef())).toBe(true);
      await ep.close();
    } finally {
      spy.mockRestore();
    }
  });
});
