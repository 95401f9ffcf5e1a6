import { afterEach, describe, expect, it, vi } from 'vitest';
import { createEndpoints, EngineError, type Endpoints } from '../src/index';
import { createHandler, type HandlerOptions } from '../src/http';
import { toNodeListener } from '../src/node';
import { mkdtempSync, rmSync } from 'node:fs';
import { open as openFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ShipTarget } from '../src/index';
import { heldEngine, listen } from './support/http';
import { BUILT_IN_SOURCE_SET } from '../src/sources/built-ins';

/** What a ClickHouse engine declares: the built-in sources and their tables. */
const CLICKHOUSE_TARGET = { dialect: 'clickhouse' as const, sources: BUILT_IN_SOURCE_SET, tables: new Map(BUILT_IN_SOURCE_SET.list.map((d) => [d.relation, `logs.${d.relation}`])) };
import { HANG_MS } from './support/hang-guard';

const KEY = 'k';
const NOW = new Date('2026-11-21T12:00:00Z');
const open: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

async function serve(ep: Endpoints, options: Partial<HandlerOptions> = {}) {
  const server = await listen(toNodeListener(createHandler(ep, { apiKeys: [KEY], onError: () => undefined, ...options })));
  open.push(server.close);
  const get = async (path: string) => {
    const r = await fetch(`${server.url}${path}`, { headers: { 'X-API-KEY': KEY } });
    return { status: r.status, headers: r.headers, json: (await r.json()) as any };
  };
  return { ...server, get };
}

async function endpointsOver(engine: ReturnType<typeof heldEngine>['engine']) {
  const ep = await createEndpoints({ sources: {}, engine, now: () => NOW, cache: false });
  open.push(() => ep.close());
  return ep;
}

describe('under load', () => {
  it('503 overloaded with Retry-After once the running slots and the wait queue are full', async () => {
    const held = heldEngine({ maxConcurrent: 1, maxQueued: 1 });
    const { get } = await serve(await endpointsOver(held.engine));
    const first = get('/api/endpoints/logs.all?project=a&project_tier=FREE');
    await held.running(1);
    const second = get('/api/endpoints/logs.all?project=b&project_tier=FREE');
    await vi.waitFor(() => expect(held.gate.load.queued).toBe(1));

    const third = await get('/api/endpoints/logs.all?project=c&project_tier=FREE');
    expect(third.status).toBe(503);
    expect(third.headers.get('retry-after')).toBe('1');
    expect(third.json).toEqual({ error: { code: 'overloaded', message: expect.any(String), status: 503 } });

    held.open();
    expect((await first).status).toBe(200);
    expect((await second).status).toBe(200);
    // Capacity comes back once the queue drains.
    expect((await get('/api/endpoints/logs.all?project=d&project_tier=FREE')).status).toBe(200);
  });

  it('504 timeout when the engine reports its time limit', async () => {
    const held = heldEngine();
    held.failWith(() => new EngineError('timeout', 'The query ran past its time limit of 1 ms.'));
    held.open();
    const { get } = await serve(await endpointsOver(held.engine));
    const r = await get('/api/endpoints/logs.all?project=a&project_tier=FREE');
    expect(r.status).toBe(504);
    expect(r.json.error).toEqual({ code: 'timeout', message: 'The query ran past its time limit of 1 ms.', status: 504 });
    expect(r.headers.get('cache-control')).toBe('no-store');
  });

  it('500 query_failed without SQL or paths, the details going to onError', async () => {
    const held = heldEngine();
    const secret = new Error("Binder Error: SELECT * FROM read_json('/srv/secret/logs/*.ndjson')");
    held.failWith(() => new EngineError('query_failed', 'The query failed in the engine.', { cause: secret }));
    held.open();
    const onError = vi.fn();
    const { get } = await serve(await endpointsOver(held.engine), { onError });
    const r = await get('/api/endpoints/logs.all?project=a&project_tier=FREE');
    expect(r.status).toBe(500);
    expect(r.json.error).toEqual({ code: 'query_failed', message: 'The query failed in the engine.', status: 500 });
    expect(JSON.stringify(r.json)).not.toMatch(/SELECT|\/srv/);
    expect(onError).toHaveBeenCalledTimes(1);
    const [error, context] = onError.mock.calls[0]!;
    expect((error as Error).cause).toBe(secret);
    expect(context).toMatchObject({ method: 'GET', path: '/api/endpoints/logs.all', status: 500, requestId: expect.any(String) });
  });

  it('an unexpected error is a generic 500 query_failed, never its own message', async () => {
    const held = heldEngine();
    held.failWith(() => new TypeError("Cannot read properties of undefined (reading '/etc/passwd')"));
    held.open();
    const onError = vi.fn(() => {
      throw new Error('a broken logger changes nothing');
    });
    const { get } = await serve(await endpointsOver(held.engine), { onError });
    const r = await get('/api/endpoints/logs.all?project=a&project_tier=FREE');
    expect(r.status).toBe(500);
    expect(r.json.error).toEqual({ code: 'query_failed', message: 'The request failed on the server.', status: 500 });
    expect(onError).toHaveBeenCalledTimes(1);
  });

  it('errors below 500 are not sent to onError', async () => {
    const held = heldEngine();
    held.open();
    const onError = vi.fn();
    const { get } = await serve(await endpointsOver(held.engine), { onError });
    expect((await get('/api/endpoints/logs.all?project_tier=FREE')).status).toBe(400);
    expect((await get('/api/endpoints/nope')).status).toBe(404);
    expect(onError).not.toHaveBeenCalled();
  });
});

describe('health', () => {
  it('503 once the endpoints are closed; queries then answer 503 closed with Retry-After', async () => {
    const held = heldEngine();
    const ep = await createEndpoints({ sources: {}, engine: held.engine, now: () => NOW, cache: false });
    const { url, get } = await serve(ep);
    expect((await fetch(`${url}/health`)).status).toBe(200);
    await ep.close();
    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(503);
    expect(await health.json()).toEqual({ status: 'unavailable' });
    const query = await get('/api/endpoints/logs.all?project=a&project_tier=FREE');
    expect(query.status).toBe(503);
    expect(query.json.error.code).toBe('closed');
    expect(query.headers.get('retry-after')).toBe('1');
  });

  it('200 ok within its time limit when the engine does not answer (a busy or stuck engine is degraded, not down)', async () => {
    const held = heldEngine();
    let pings = 0;
    held.engine.ping = () => {
      pings++;
      return new Promise(() => undefined);
    };
    const { url } = await serve(await endpointsOver(held.engine), { healthTimeoutMs: 1 });
    for (let i = 0; i < 3; i++) {
      const health = await fetch(`${url}/health`);
      expect([health.status, await health.json()]).toEqual([200, { status: 'ok', degraded: ['engine'] }]);
    }
    // One ping waits on the stuck engine; health checks do not pile more up behind it.
    expect(pings).toBe(1);
  });

  it('200 ok, degraded engine, when the engine fails the trivial query; ClickHouse as the engine is named so', async () => {
    const held = heldEngine();
    held.engine.ping = async () => {
      throw new Error('database is gone');
    };
    const { url } = await serve(await endpointsOver(held.engine));
    expect(await (await fetch(`${url}/health`)).json()).toEqual({ status: 'ok', degraded: ['engine'] });
    const away = heldEngine();
    // A ClickHouse engine by its target: the instance's sources, their tables.
    Object.assign(away.engine, { target: CLICKHOUSE_TARGET, ping: async () => Promise.reject(new Error('connect ECONNREFUSED')) });
    const other = await serve(await createEndpoints({ sources: {}, engine: away.engine, now: () => NOW, cache: false }).then((ep) => (open.push(() => ep.close()), ep)));
    expect(await (await fetch(`${other.url}/health`)).json()).toEqual({ status: 'ok', degraded: ['clickhouse'] });
  });

  it('200 ok, degraded clickhouse, while shipping to ClickHouse fails and ingest goes on; 503 once a failed fsync stops ingest', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'le-health-'));
    open.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const held = heldEngine();
    held.open();
    // ClickHouse is away for the whole test.
    const target: ShipTarget = {
      readSegment: async () => {
        throw new Error('connect ECONNREFUSED');
      },
      shippedOffsets: async () => new Set<number>(),
      insertAt: async () => undefined,
    };
    // Each segment closes 1 ms after its first event, and its shipping is tried at once.
    const ep = await createEndpoints({
      engine: Object.assign(held.engine, { target: CLICKHOUSE_TARGET }),
      now: () => NOW,
      cache: false,
      storage: { dataDir, clickhouse: target, maxSegmentAgeMs: 1 },
    });
    open.push(() => ep.close());
    const { url } = await serve(ep);
    expect(await (await fetch(`${url}/health`)).json()).toEqual({ status: 'ok' });
    await ep.ingest('edgeLogs', [{ message: 'kept while ClickHouse is away', project: 'p' }]);
    await vi.waitFor(() => expect(ep.stats().storage?.shippingFailures).toBeGreaterThan(0), { timeout: HANG_MS, interval: 5 });
    const degraded = await fetch(`${url}/health`);
    expect([degraded.status, await degraded.json()]).toEqual([200, { status: 'ok', degraded: ['clickhouse'] }]);
    // Ingest goes on meanwhile: the events are durable in the log.
    expect((await ep.ingest('edgeLogs', [{ message: 'still taken' }])).ingested).toBe(1);

    // A failed fsync: the log takes nothing more until restarted, which is what a 503 asks for.
    const handle = await openFile(join(dataDir, 'probe'), 'w');
    await handle.close();
    const proto = Object.getPrototypeOf(handle) as { datasync: () => Promise<void> };
    const sync = vi.spyOn(proto, 'datasync').mockRejectedValueOnce(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    open.push(async () => sync.mockRestore());
    await expect(ep.ingest('edgeLogs', [{ message: 'lost to the disk' }])).rejects.toMatchObject({ code: 'storage_failed' });
    const failed = await fetch(`${url}/health`);
    // (ClickHouse may still be reported too: its next attempt waits for a pause.)
    expect([failed.status, await failed.json()]).toMatchObject([503, { status: 'unavailable', degraded: expect.arrayContaining(['storage']) }]);
  });
});
