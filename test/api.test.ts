import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineError, InvalidParameterError, LogEndpointsError, NotFoundError, type Endpoints } from '../src/index';
import { QueryGate } from '../src/util/query-gate';
import { edgeEvent, endpointsAt, functionEvent, tempDir, writeLines } from './support/log-files';

const NOW = '2026-11-21T12:00:00Z';
const IDS = {
  'functions.invocation-stats': '3e97a72c-f5e4-4378-80ac-22ce14543451',
  'logs.all': '3e715bbd-1626-41ec-8a34-3544ab01d99e',
  'usage.api-counts': '538d9361-e1e6-421a-953a-37a46d1b9e19',
};

describe('the library API', () => {
  const tmp = tempDir();
  let ep: Endpoints;

  beforeAll(async () => {
    writeLines(tmp.path('edge.ndjson'), [edgeEvent({ project: 'abc', timestamp: '2026-11-21T11:00:00Z' })]);
    writeLines(tmp.path('fn.ndjson'), [functionEvent({ project: 'abc', timestamp: '2026-11-21T11:00:00Z', ms: 5 })]);
    ({ ep } = await endpointsAt({ edgeLogs: tmp.path('edge.ndjson'), functionEdgeLogs: tmp.path('fn.ndjson') }, NOW));
  });
  afterAll(async () => {
    await ep.close();
    tmp.cleanup();
  });

  it('lists the three definitions with fixed UUIDs, max rows, cache policy and parameters', () => {
    expect(ep.definitions.map((d) => [d.name, d.id, d.maxRows, d.sandboxed])).toEqual([
      ['functions.invocation-stats', IDS['functions.invocation-stats'], 1000, false],
      ['logs.all', IDS['logs.all'], 1000, false],
      ['usage.api-counts', IDS['usage.api-counts'], 1000, false],
    ]);
    const byName = Object.fromEntries(ep.definitions.map((d) => [d.name, d]));
    expect(byName['logs.all']!.cache).toBeNull();
    expect(byName['usage.api-counts']!.params.map((p) => [p.name, p.required])).toEqual([
      ['project', true],
      ['interval', true],
    ]);
    expect(byName['functions.invocation-stats']!.params.map((p) => [p.name, p.required])).toEqual([
      ['project', true],
      ['function_id', false],
      ['interval', true],
    ]);
    expect(byName['logs.all']!.params.map((p) => p.name)).toEqual(['project', 'project_tier', 'iso_timestamp_start', 'iso_timestamp_end']);
    expect(byName['functions.invocation-stats']!.params[2]!.values).toEqual(['5min', '15min', '1hr', '1day', '7day']);
  });

  it('answers by name and by UUID (any letter case) identically', async () => {
    for (const [name, id] of Object.entries(IDS)) {
      const params = { project: 'abc', interval: name === 'usage.api-counts' ? 'daily' : '1day', project_tier: 'FREE' };
      const byName = await ep.query(name, params);
      const byId = await ep.query(id, params);
      const byUpperId = await ep.query(id.toUpperCase(), params);
      expect(byName.result.length).toBe(1);
      expect(byId.result).toEqual(byName.result);
      expect(byUpperId.result).toEqual(byName.result);
      expect(byId.endpoint).toEqual({ name, id });
    }
  });

  it('the typed functions return the rows of query()', async () => {
    expect(await ep.usageApiCounts({ project: 'abc', interval: 'daily' })).toEqual((await ep.query('usage.api-counts', { project: 'abc', interval: 'daily' })).result);
    expect(await ep.logsAll({ project: 'abc', project_tier: 'FREE' })).toEqual((await ep.query('logs.all', { project: 'abc', project_tier: 'FREE' })).result);
  });

  it('an unknown endpoint is not_found; names are case-sensitive', async () => {
    for (const name of ['nope', 'LOGS.ALL', '00000000-0000-4000-8000-000000000000', '']) {
      const error = await ep.query(name, {}).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(NotFoundError);
      expect(error).toMatchObject({ code: 'not_found', status: 404 });
    }
  });

  it('ignores unknown parameters', async () => {
    const plain = await ep.query('logs.all', { project: 'abc', project_tier: 'FREE' });
    const extra = await ep.query('logs.all' as string, { project: 'abc', project_tier: 'FREE', Project: 'zzz', limit: '1', foo: 'bar' });
    expect(extra.result).toEqual(plain.result);
  });

  it('rejects values over 1024 characters and non-text values, naming the parameter', async () => {
    await expect(ep.query('logs.all', { project: 'a'.repeat(1024), project_tier: 'FREE' })).resolves.toMatchObject({ result: [] });
    for (const params of [
      { project: 'a'.repeat(1025), project_tier: 'FREE' },
      { project: 'abc', project_tier: 'FREE', iso_timestamp_end: 'x'.repeat(2000) },
      { project: 42, project_tier: 'FREE' },
      { project: ['abc', 'def'], project_tier: 'FREE' },
    ]) {
      const error = await ep.query('logs.all', params as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidParameterError);
      expect((error as InvalidParameterError).param).toBe(typeof params.project === 'string' && params.project.length <= 1024 ? 'iso_timestamp_end' : 'project');
    }
  });

  it('errors carry a stable code, an HTTP status and a JSON form', async () => {
    const error = (await ep.query('usage.api-counts' as string, { project: 'abc' }).catch((e: unknown) => e)) as InvalidParameterError;
    expect(error).toBeInstanceOf(LogEndpointsError);
    expect(error.toJSON()).toEqual({ code: 'invalid_parameter', status: 400, param: 'interval', message: 'Parameter "interval" is required.' });
  });

  it('reports how the answer was obtained', async () => {
    const answer = await ep.query('logs.all', { project: 'abc', project_tier: 'FREE' });
    expect(answer).toMatchObject({ cache: 'bypass', ttlRemainingSeconds: null });
    // computedAt is a real instant (the cache clock), not the replayed `now` the window was placed at.
    expect(Date.parse(answer.computedAt)).toBeLessThanOrEqual(ep.cacheClock());
    expect(answer.computedAt).not.toBe('2026-11-21T12:00:00.000Z');
    expect(answer.engineMs).toBeGreaterThanOrEqual(0);
  });

  it('after close, every call fails with a closed error', async () => {
    const own = await endpointsAt({ edgeLogs: tmp.path('edge.ndjson') }, NOW);
    await own.ep.close();
    await own.ep.close(); // idempotent
    const error = await own.ep.query('logs.all', { project: 'abc', project_tier: 'FREE' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngineError);
    expect(error).toMatchObject({ code: 'closed' });
    await expect(own.ep.ping()).rejects.toMatchObject({ code: 'closed' });
  });
});

describe('QueryGate', () => {
  it('runs at most maxConcurrent tasks, queues maxQueued, refuses the rest as overloaded', async () => {
    const gate = new QueryGate({ maxConcurrent: 1, maxQueued: 1 });
    const order: string[] = [];
    let release!: () => void;
    const blocker = new Promise<void>((resolve) => (release = resolve));
    const first = gate.run(async () => {
      order.push('first');
      await blocker;
    });
    const second = gate.run(async () => {
      order.push('second');
    });
    const third = gate.run(async () => {
      order.push('third');
    });
    await expect(third).rejects.toMatchObject({ code: 'overloaded', status: 503, retryAfterSeconds: 1 });
    expect(gate.load).toEqual({ running: 1, queued: 1 });
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(['first', 'second']);
    expect(gate.load).toEqual({ running: 0, queued: 0 });
  });

  it('frees the slot when a task fails', async () => {
    const gate = new QueryGate({ maxConcurrent: 1, maxQueued: 0 });
    await expect(
      gate.run(async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    await expect(gate.run(async () => 'ok')).resolves.toBe('ok');
  });
});
