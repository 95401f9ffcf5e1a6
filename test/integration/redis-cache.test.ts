import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDuckDBEngine } from '../../src/engine/duckdb/duckdb-engine';
import { createEndpoints, type CacheEntry, type Endpoints, type Engine } from '../../src/index';
import { redisCache } from '../../src/redis';
import { manualTime, ProbeEngine } from '../support/cache-harness';
import { cacheKey } from '../../src/cache/cache-key';
import { normalizeParams } from '../../src/definitions/params';
import { findDefinition } from '../../src/definitions/registry';
import { freePort, startRedis } from './support/servers';
import { edgeEvent, functionEvent, tempDir, writeLines } from '../support/log-files';
import { BUILT_IN_SOURCE_SET } from '../../src/sources/built-ins';

const NOW = '2026-11-21T12:00:00.000Z';
const SECOND = 1000;

describe('redisCache', () => {
  const tmp = tempDir('le-redis-');
  let server: ChildProcess;
  let client: ReturnType<typeof createClient>;
  let duckdb: Engine;
  let prefixes = 0;
  const prefix = () => `le-test-${++prefixes}:`;

  beforeAll(async () => {
    const port = await freePort();
    server = await startRedis(port);
    client = createClient({ url: `redis://127.0.0.1:${port}` });
    await client.connect();
    writeLines(tmp.path('edge', 'a.ndjson'), [edgeEvent({ project: 'abc', timestamp: '2026-11-21T11:00:00Z' })]);
    writeLines(tmp.path('fn', 'a.ndjson'), [functionEvent({ project: 'abc', timestamp: '2026-11-21T11:00:00Z', ms: 12 })]);
    duckdb = await createDuckDBEngine({ sourceSet: BUILT_IN_SOURCE_SET, sources: { edgeLogs: tmp.path('edge', '*.ndjson'), functionEdgeLogs: tmp.path('fn', '*.ndjson') } });
  });
  afterAll(async () => {
    await client?.quit();
    await duckdb?.close();
    if (server && server.exitCode === null) {
      server.kill();
      await once(server, 'exit');
    }
    tmp.cleanup();
  });

  describe('the store', () => {
    const value: CacheEntry = {
      rows: [{ timestamp: '2026-11-21T11:00:00.000000Z', avg_execution_time: 12.5, count: 3, metadata: { a: [1, null, { b: 'ü' }] }, id: null }],
      computedAt: '2026-11-21T12:00:00.000Z',
      engineMs: 3.25,
    };

    it('stores entries as JSON under its prefix, with the given time to live', async () => {
      const p = prefix();
      const store = redisCache({ client, prefix: p });
      await store.set('k', value, 900);
      expect(await store.get('k')).toEqual(value);
      expect(JSON.parse((await client.get(`${p}entry:k`))!)).toEqual(value);
      const pttl = await client.pTTL(`${p}entry:k`);
      expect(pttl).toBeGreaterThan(0);
      expect(pttl).toBeLessThanOrEqual(900_000);
      await store.delete('k');
      expect(await store.get('k')).toBeUndefined();
      expect(store.shared).toBe(true);
    });

    it('reads a damaged entry as missing', async () => {
      const p = prefix();
      const store = redisCache({ client, prefix: p });
      await client.set(`${p}entry:bad`, '{not json');
      await client.set(`${p}entry:odd`, JSON.stringify({ rows: 'no' }));
      expect(await store.get('bad')).toBeUndefined();
      expect(await store.get('odd')).toBeUndefined();
    });

    it('hands its lock to one holder at a time, with an expiry, and releases only its own', async () => {
      const p = prefix();
      const store = redisCache({ client, prefix: p });
      const lock = await store.tryLock!('k', 300);
      expect(lock).not.toBeNull();
      expect(await store.tryLock!('k', 300)).toBeNull();
      const pttl = await client.pTTL(`${p}lock:k`);
      expect(pttl).toBeGreaterThan(0);
      expect(pttl).toBeLessThanOrEqual(300_000);
      await lock!.release();
      const again = await store.tryLock!('k', 300);
      expect(again).not.toBeNull();
      // The lock expired and someone else took it: releasing the old one must not free theirs.
      await client.set(`${p}lock:k`, 'someone-else');
      await again!.release();
      expect(await client.get(`${p}lock:k`)).toBe('someone-else');
    });
  });

  describe('two instances on one Redis', () => {
    async function twoInstances() {
      const time = manualTime(NOW);
      const store = redisCache({ client, prefix: prefix() });
      const make = async () => {
        const probe = new ProbeEngine(duckdb);
        const ep = await createEndpoints({ sources: {}, engine: probe, now: () => new Date(NOW), cacheClock: time.clock, scheduler: time.scheduler, cache: store });
        return { ep, probe };
      };
      const a = await make();
      const b = await make();
      const runs = () => a.probe.runs + b.probe.runs;
      const refreshes = () => a.ep.stats().warmingRefreshes + b.ep.stats().warmingRefreshes;
      const close = async () => {
        await a.ep.close();
        await b.ep.close();
      };
      return { time, a, b, runs, refreshes, close };
    }
    const KEYS: Array<[string, Record<string, string>]> = [
      ['usage.api-counts', { project: 'abc', interval: 'daily' }],
      ['functions.invocation-stats', { project: 'abc', interval: '1day' }],
    ];
    const readAll = (ep: Endpoints) => Promise.all(KEYS.map(([name, params]) => ep.query(name, params)));

    it('share results: what one computed, the other serves as a hit', async () => {
      const { a, b, runs, close } = await twoInstances();
      const [computed] = await readAll(a.ep);
      const [served] = await readAll(b.ep);
      expect(computed!.cache).toBe('miss');
      expect(served!.cache).toBe('hit');
      expect(served!.result).toEqual(computed!.result);
      expect(served!.computedAt).toBe(computed!.computedAt);
      expect(runs()).toBe(2);
      expect(b.probe.runs).toBe(0);
      await close();
    });

    it('refresh each key once per warming interval in total, not once per instance', async () => {
      const { time, a, b, runs, refreshes, close } = await twoInstances();
      await readAll(a.ep);
      await readAll(b.ep);
      expect(runs()).toBe(KEYS.length);
      for (let interval = 1; interval <= 4; interval++) {
        await time.advance(300 * SECOND);
        expect(runs()).toBe(KEYS.length * (1 + interval));
        expect(refreshes()).toBe(KEYS.length * interval);
        const refreshedAt = new Date(Date.parse(NOW) + interval * 300 * SECOND).toISOString();
        for (const ep of [a.ep, b.ep]) {
          for (const answer of await readAll(ep)) expect(answer).toMatchObject({ cache: 'hit', computedAt: refreshedAt });
        }
        expect(runs()).toBe(KEYS.length * (1 + interval));
      }
      // Both instances did take part: each holds the lock for some of the refreshes or reads the others'.
      expect(a.ep.stats().warmingKeys).toBe(KEYS.length);
      expect(b.ep.stats().warmingKeys).toBe(KEYS.length);
      await close();
    });

    it('keep a key warm while any instance reads it, and stop when none does', async () => {
      const { time, a, b, runs, close } = await twoInstances();
      const [name, params] = KEYS[0]!;
      await a.ep.query(name, params); // computed by A at 0 s
      await time.advance(50 * SECOND);
      await a.ep.query(name, params); // A's last read: 50 s
      await time.advance(50 * SECOND);
      for (let interval = 1; interval <= 6; interval++) {
        await time.advance(300 * SECOND); // B reads at 400, 700, ..., 1900 s
        expect((await b.ep.query(name, params)).cache).toBe('hit');
      }
      // Refreshed at 300, 600, ..., 1800 s: once per interval, though A stopped tracking it at 950 s
      // (and, the store being shared, left the entry for B).
      expect(runs()).toBe(1 + 6);
      expect(a.ep.stats().warmingKeys).toBe(0);
      expect(b.ep.stats().warmingKeys).toBe(1);
      await time.advance(900 * SECOND); // nobody reads it for a lifetime
      const settledRuns = runs();
      expect(b.ep.stats().warmingKeys).toBe(0);
      await time.advance(3600 * SECOND);
      expect(runs()).toBe(settledRuns);
      await close();
    });
  });

  describe('an outage', () => {
    const USAGE = findDefinition('usage.api-counts');
    const keyOf = (project: string) => cacheKey(USAGE, normalizeParams(USAGE, { project, interval: 'daily' }));

    it('never makes a call wait for Redis: killed, calls answer from the engine; restarted, the cache works again', async () => {
      const port = await freePort();
      let redis = await startRedis(port);
      // Made as users make it: offline queue on, and (on purpose) no error listener of our own:
      // redisCache's listener alone must keep the process up.
      const own = createClient({ url: `redis://127.0.0.1:${port}` });
      await own.connect();
      const p = prefix();
      const probe = new ProbeEngine(duckdb);
      const ep = await createEndpoints({ sources: {}, engine: probe, cache: redisCache({ client: own, prefix: p }) });
      try {
        const params = { project: 'abc', interval: 'daily' };
        expect((await ep.query('usage.api-counts' as string, params)).cache).toBe('miss');
        const cached = await ep.query('usage.api-counts' as string, params);
        expect(cached.cache).toBe('hit');

        redis.kill('SIGKILL');
        await once(redis, 'exit');
        // Every call answers while Redis is gone (a call waiting for it would hang here, Redis never returns on its own).
        for (const project of ['abc', 'down-1', 'down-2']) {
          const answer = await ep.query('usage.api-counts', { project, interval: 'daily' });
          expect(answer.cache).toBe('miss');
        }
        expect(probe.runs).toBe(4);
        expect(ep.stats().cacheErrors).toBeGreaterThanOrEqual(3);

        redis = await startRedis(port);
        if (!own.isReady) await once(own, 'ready');
        const errorsBefore = ep.stats().cacheErrors;
        expect((await ep.query('usage.api-counts' as string, params)).cache).toBe('miss'); // the new Redis is empty
        expect((await ep.query('usage.api-counts' as string, params)).cache).toBe('hit');
        expect(ep.stats().cacheErrors).toBe(errorsBefore);
        // Nothing from the outage was queued and replayed into the new Redis.
        expect(await own.get(`${p}entry:${keyOf('down-1')}`)).toBeNull();
        expect(await own.get(`${p}entry:${keyOf('down-2')}`)).toBeNull();
        expect(await own.keys(`${p}*`)).toEqual([`${p}entry:${keyOf('abc')}`]);
      } finally {
        await ep.close();
        own.destroy();
        redis.kill('SIGKILL');
        await once(redis, 'exit');
      }
    });

    it('bounds calls to a Redis that stops answering (stopped process): storeTimeoutMs, then the engine', async () => {
      const port = await freePort();
      const redis = await startRedis(port);
      const own = createClient({ url: `redis://127.0.0.1:${port}` });
      own.on('error', () => undefined);
      await own.connect();
      const probe = new ProbeEngine(duckdb);
      const ep = await createEndpoints({ sources: {}, engine: probe, cache: redisCache({ client: own, prefix: prefix() }), storeTimeoutMs: 100 });
      try {
        const params = { project: 'abc', interval: 'daily' };
        await ep.query('usage.api-counts' as string, params);
        redis.kill('SIGSTOP'); // the socket stays open, nothing answers
        const answer = await ep.query('usage.api-counts' as string, params);
        expect(answer.cache).toBe('miss');
        expect(probe.runs).toBe(2);
        expect(ep.stats().cacheErrors).toBe(2); // the read and the write
        redis.kill('SIGCONT');
        expect(await own.ping()).toBe('PONG');
        expect((await ep.query('usage.api-counts' as string, params)).cache).toBe('hit');
      } finally {
        redis.kill('SIGCONT');
        await ep.close();
        own.destroy();
        redis.kill('SIGKILL');
        await once(redis, 'exit');
      }
    });
  });
});
