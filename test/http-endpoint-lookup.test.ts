import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createEndpoints, type EndpointDescription, type Endpoints } from '../src/index';
import { createHandler } from '../src/http/create-handler';
import { EndpointSet } from '../src/definitions/registry';
import { edgeEvent, tempDir, writeLines } from './support/log-files';

const TOKEN = 'lookup-key';
const NOW = new Date('2026-11-21T12:00:00Z');

describe('a query over HTTP looks its endpoint up once', () => {
  const tmp = tempDir('le-http-lookup-');
  let ep: Endpoints;
  beforeAll(async () => {
    writeLines(tmp.path('edge', 'a.ndjson'), [edgeEvent({ project: 'p', timestamp: '2026-11-21T11:00:00Z', path: '/rest/v1/x', id: 'a' })]);
    ep = await createEndpoints({ sources: { edgeLogs: tmp.path('edge', '*.ndjson') }, now: () => NOW, cache: false });
  });
  afterAll(async () => {
    await ep.close();
    tmp.cleanup();
  });
  const get = (handler: (r: Request) => Promise<Response>, path: string) => handler(new Request(`http://localhost${path}`, { headers: { 'X-API-KEY': TOKEN } }));

  it('by name and by UUID: one look-up by the instance, none by the adapter, the same answer as ep.query', async () => {
    const handler = createHandler(ep, { apiKeys: [TOKEN] });
    const id = ep.definitions.find((d) => d.name === 'logs.all')!.id;
    const expected = await ep.query('logs.all', { project: 'p', project_tier: 'PRO' });
    for (const nameOrId of ['logs.all', id.toUpperCase()]) {
      const lookups = vi.spyOn(EndpointSet.prototype, 'lookup');
      const scans = vi.spyOn(ep.definitions as EndpointDescription[], 'find');
      const response = await get(handler, `/api/endpoints/${nameOrId}?project=p&project_tier=PRO`);
      expect(response.status).toBe(200);
      expect(((await response.json()) as { result: unknown }).result).toEqual(expected.result);
      expect(lookups).toHaveBeenCalledTimes(1);
      expect(scans).not.toHaveBeenCalled();
      lookups.mockRestore();
      scans.mockRestore();
    }
  });

  it('an unknown name is refused 404 and counted as ep.query counts it', async () => {
    const handler = createHandler(ep, { apiKeys: [TOKEN] });
    const before = ep.stats().refusals.not_found ?? 0;
    const response = await get(handler, '/api/endpoints/no.such-endpoint');
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('not_found');
    expect(ep.stats().refusals.not_found).toBe(before + 1);
  });

  it('an Endpoints of another making (a wrapper) is served through its public API', async () => {
    const calls: string[] = [];
    const wrapper = new Proxy(ep, {
      get(target, key) {
        if (key === 'query') return (nameOrId: string, params: object, options?: object) => (calls.push(nameOrId), target.query(nameOrId as 'logs.all', params as never, options as never));
        if (typeof key === 'symbol' && key.description === 'log-endpoints.resolveEndpoint') return undefined;
        const value: unknown = Reflect.get(target, key);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const response = await get(createHandler(wrapper, { apiKeys: [TOKEN] }), '/api/endpoints/logs.all?project=p&project_tier=PRO');
    expect(response.status).toBe(200);
    expect(calls).toEqual(['logs.all']);
  });
});
