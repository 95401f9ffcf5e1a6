import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndpoints, type Endpoints, type EndpointsIgnoring } from '../src/index';
import { createHandler } from '../src/http/create-handler';
import { edgeEvent, functionEvent, tempDir, writeLines } from './support/log-files';

const NOW = new Date('2026-11-21T12:00:00Z');
const TOKEN = 'studio-private-token';

/**
 * Supabase Studio's self-hosted analytics proxy, as it calls Logflare (`retrieveAnalyticsData`):
 * `GET {LOGFLARE_URL}/api/endpoints/query/<encoded name>?project=<ref>&<params>` with the private
 * access token in `x-api-key`, JSON content type and accept. Self-hosted, `ref` is `default`.
 */
function studioRequest(name: string, params: Record<string, string | undefined>, projectRef = 'default'): Request {
  const url = new URL(`endpoints/query/${encodeURIComponent(name)}`, 'http://analytics:4000/api/');
  url.searchParams.set('project', projectRef);
  for (const [key, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(key, value);
  return new Request(url, { method: 'GET', headers: { 'x-api-key': TOKEN, 'Content-Type': 'application/json', Accept: 'application/json' } });
}

describe('Supabase Studio (self-hosted) gets 200 with rows', () => {
  const tmp = tempDir();
  let single: EndpointsIgnoring<'project'>;
  let plain: Endpoints;

  beforeAll(async () => {
    // Events as Vector ships them for a self-hosted stack: the gateway's own project ref, whatever it is.
    writeLines(tmp.path('edge', 'e.ndjson'), [
      edgeEvent({ project: 'selfhosted', timestamp: '2026-11-21T11:50:00Z', path: '/rest/v1/todos', id: 'a' }),
      edgeEvent({ project: 'selfhosted', timestamp: '2026-11-21T11:55:00Z', path: '/auth/v1/token', id: 'b' }),
      edgeEvent({ project: 'selfhosted', timestamp: '2026-11-21T09:00:00Z', path: '/storage/v1/object/x', id: 'c' }),
    ]);
    writeLines(tmp.path('fn', 'f.ndjson'), [
      functionEvent({ project: 'selfhosted', functionId: 'f1', timestamp: '2026-11-21T11:40:00Z', ms: 30 }),
      functionEvent({ project: 'selfhosted', functionId: 'f1', timestamp: '2026-11-21T11:41:00Z', ms: 50, status: 500 }),
    ]);
    const sources = { edgeLogs: tmp.path('edge', '*.ndjson'), functionEdgeLogs: tmp.path('fn', '*.ndjson') };
    single = await createEndpoints({ sources, now: () => NOW, singleProject: true });
    plain = await createEndpoints({ sources, now: () => NOW });
  });
  afterAll(async () => {
    await single.close();
    await plain.close();
    tmp.cleanup();
  });

  it('logs.all with time bounds and no project_tier (the logs pages)', async () => {
    const handler = createHandler(single, { apiKeys: [TOKEN] });
    const response = await handler(studioRequest('logs.all', { iso_timestamp_start: '2026-11-21T11:00:00.000Z', iso_timestamp_end: '2026-11-21T12:00:00.000Z' }));
    expect(response.status).toBe(200);
    const { result } = (await response.json()) as { result: Array<{ id: string }> };
    expect(result.map((r) => r.id)).toEqual(['b', 'a']);
  });

  it('usage.api-counts with the intervals current Studio sends', async () => {
    const handler = createHandler(single, { apiKeys: [TOKEN] });
    for (const interval of ['1hr', '1day', '7day']) {
      const response = await handler(studioRequest('usage.api-counts', { interval }));
      expect(response.status, interval).toBe(200);
      const { result } = (await response.json()) as { result: Array<Record<string, number>> };
      const total = (key: string) => result.reduce((n, r) => n + r[key]!, 0);
      expect([total('total_rest_requests'), total('total_auth_requests')], interval).toEqual([1, 1]);
      expect(total('total_storage_requests'), interval).toBe(interval === '1hr' ? 0 : 1);
    }
  });

  it('functions.invocation-stats of one function', async () => {
    const handler = createHandler(single, { apiKeys: [TOKEN] });
    const response = await handler(studioRequest('functions.invocation-stats', { interval: '1hr', function_id: 'f1' }));
    expect(response.status).toBe(200);
    const { result } = (await response.json()) as { result: Array<Record<string, number>> };
    expect(result.map((r) => [r.count, r.error_count])).toEqual([
      [1, 0],
      [1, 1],
    ]);
  });

  it('without singleProject, project=default is a project like any other: 200 and no rows, never a 400', async () => {
    const handler = createHandler(plain, { apiKeys: [TOKEN] });
    for (const [name, params] of [
      ['logs.all', { iso_timestamp_start: '2026-11-21T11:00:00.000Z', iso_timestamp_end: '2026-11-21T12:00:00.000Z' }],
      ['usage.api-counts', { interval: '1day' }],
    ] as const) {
      const response = await handler(studioRequest(name, params));
      expect(response.status, name).toBe(200);
      expect(await response.json()).toEqual({ result: [] });
    }
    // The real project ref gives its rows.
    const own = await handler(studioRequest('logs.all', {}, 'selfhosted'));
    expect(((await own.json()) as { result: unknown[] }).result).toHaveLength(3);
  });

  it('with singleProject the project is optional and every value shares one cache entry', async () => {
    const first = await single.query('usage.api-counts', { project: 'default', interval: '3hr' });
    const second = await single.query('usage.api-counts', { interval: '3hr' });
    expect(second.cache).toBe('hit');
    expect(second.result).toEqual(first.result);
    expect(single.definitions.find((d) => d.name === 'logs.all')!.params.find((s) => s.name === 'project')).toMatchObject({ required: false });
  });
});
