import { tableFromIPC } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndpoints, type Endpoints } from '../src/index';
import { createHandler } from '../src/http';
import { toNodeListener } from '../src/node';
import { listen, rawRequest } from './support/http';
import { edgeEvent, functionEvent, tempDir, writeLines } from './support/log-files';

const NOW = '2026-11-21T12:00:00Z';
const KEY = 'test-key-1';
const KEY2 = 'second-key-for-rotation';
const IDS = {
  'functions.invocation-stats': '3e97a72c-f5e4-4378-80ac-22ce14543451',
  'logs.all': '3e715bbd-1626-41ec-8a34-3544ab01d99e',
  'usage.api-counts': '538d9361-e1e6-421a-953a-37a46d1b9e19',
} as const;
const PARAMS: Record<keyof typeof IDS, string> = {
  'functions.invocation-stats': 'project=abc&interval=1day',
  'logs.all': 'project=abc&project_tier=PRO',
  'usage.api-counts': 'project=abc&interval=daily',
};

const tmp = tempDir('le-http-');
let ep: Endpoints;
let server: Awaited<ReturnType<typeof listen>>;

async function get(path: string, init: { method?: string; headers?: Record<string, string> } = {}) {
  const response = await fetch(`${server.url}${path}`, { method: init.method ?? 'GET', headers: { 'X-API-KEY': KEY, ...init.headers } });
  const text = await response.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    // Not every answer is JSON (CSV, NDJSON, HEAD).
  }
  return { status: response.status, headers: response.headers, text, json };
}

beforeAll(async () => {
  writeLines(tmp.path('edge', 'a.ndjson'), [
    edgeEvent({ id: 'e1', timestamp: '2026-11-21T11:00:00.123456Z', path: '/rest/v1/todos', message: 'GET | 200 | "quoted", with comma' }),
    edgeEvent({ id: 'e2', timestamp: '2026-11-21T11:30:00.000001Z', path: '/auth/v1/user' }),
    edgeEvent({ id: 'e3', timestamp: '2026-11-20T15:00:00Z', path: '/storage/v1/object' }),
    edgeEvent({ id: 'x1', project: 'xyz', timestamp: '2026-11-21T11:00:00Z' }),
  ]);
  writeLines(tmp.path('fn', 'a.ndjson'), [
    functionEvent({ project: 'abc', timestamp: '2026-11-21T11:00:01Z', ms: 10, status: 200 }),
    functionEvent({ project: 'abc', timestamp: '2026-11-21T11:00:02Z', ms: 30, status: 500 }),
    functionEvent({ project: 'abc', timestamp: '2026-11-21T10:20:00Z', ms: 20, status: 200 }),
  ]);
  ep = await createEndpoints({
    sources: { edgeLogs: tmp.path('edge', '*.ndjson'), functionEdgeLogs: tmp.path('fn', '*.ndjson') },
    now: () => new Date(NOW),
    // Ages and Cache-Control follow the cache clock: held still, a fresh answer is exactly 900 s from expiry.
    cacheClock: () => Date.parse(NOW),
  });
  server = await listen(toNodeListener(createHandler(ep, { apiKeys: [KEY, KEY2] })));
});

afterAll(async () => {
  await server?.close();
  await ep?.close();
  tmp.cleanup();
});

describe('creating the handler', () => {
  it('refuses to be created without a key unless auth is explicitly off', () => {
    expect(() => createHandler(ep, {})).toThrow(/no API key/);
    expect(() => createHandler(ep, { apiKeys: [] })).toThrow(/no API key/);
    expect(() => createHandler(ep, { apiKeys: [''] })).toThrow(/no API key/);
    expect(() => createHandler(ep, { auth: false })).not.toThrow();
  });
});

describe('routes', () => {
  it('answers by name, by UUID (any case) and by /query/<name> with identical bodies', async () => {
    for (const [name, id] of Object.entries(IDS) as [keyof typeof IDS, string][]) {
      const q = PARAMS[name];
      const byName = await get(`/api/endpoints/${name}?${q}`);
      const byId = await get(`/api/endpoints/query/${id}?${q}`);
      const byUpperId = await get(`/api/endpoints/query/${id.toUpperCase()}?${q}`);
      const byQueryName = await get(`/api/endpoints/query/${name}?${q}`);
      expect(byName.status).toBe(200);
      expect(byName.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(Object.keys(byName.json)).toEqual(['result']);
      expect(byName.json.result.length).toBeGreaterThan(0);
      expect(byId.text).toBe(byName.text);
      expect(byUpperId.text).toBe(byName.text);
      expect(byQueryName.text).toBe(byName.text);
    }
  });

  it('returns the rows of the library, shaped as docs/semantics.md, "Values in results"', async () => {
    const { json } = await get(`/api/endpoints/logs.all?${PARAMS['logs.all']}`);
    expect(json.result.map((r: any) => r.id)).toEqual(['e2', 'e1', 'e3']);
    expect(json.result[0].timestamp).toBe('2026-11-21T11:30:00.000001Z');
    expect(json.result[0].metadata.request.path).toBe('/auth/v1/user');
    const direct = await ep.query('logs.all', { project: 'abc', project_tier: 'PRO' });
    expect(json.result).toEqual(direct.result);
  });

  it('lists the definitions at /api/endpoints (with a key)', async () => {
    const list = await get('/api/endpoints');
    expect(list.status).toBe(200);
    expect(list.json.result.map((d: any) => [d.name, d.id, d.maxRows])).toEqual(Object.entries(IDS).map(([name, id]) => [name, id, 1000]));
    const usage = list.json.result.find((d: any) => d.name === 'usage.api-counts');
    expect(usage.cache).toEqual({ ttlSeconds: 900, warmingSeconds: 300 });
    expect(usage.params.find((p: any) => p.name === 'interval').values).toEqual(['hourly', 'daily', 'minutely', '15min', '30min', '1hr', '3hr', '1day', '3day', '7day']);
    expect((await get('/api/endpoints', { headers: { 'X-API-KEY': '' } })).status).toBe(401);
  });

  it('serves an OpenAPI 3.1 document generated from the definitions, without a key', async () => {
    const doc = await get('/api/openapi.json', { headers: { 'X-API-KEY': '' } });
    expect(doc.status).toBe(200);
    expect(doc.json.openapi).toBe('3.1.0');
    for (const [name, id] of Object.entries(IDS)) {
      const byName = doc.json.paths[`/api/endpoints/${name}`].get;
      expect(doc.json.paths[`/api/endpoints/query/${id}`].get.parameters).toEqual(byName.parameters);
      const definition = ep.definitions.find((d) => d.name === name)!;
      expect(byName.parameters.map((p: any) => [p.name, p.required])).toEqual(definition.params.map((p) => [p.name, p.required]));
      expect(Object.keys(byName.responses['200'].content['application/json'].schema.properties.result.items.properties)).toEqual(definition.columns.map((c) => c.name));
    }
    const interval = doc.json.paths['/api/endpoints/usage.api-counts'].get.parameters.find((p: any) => p.name === 'interval');
    expect(interval.schema.enum).toEqual(['hourly', 'daily', 'minutely', '15min', '30min', '1hr', '3hr', '1day', '3day', '7day']);
    expect(doc.json.components.securitySchemes.apiKey).toEqual({ type: 'apiKey', in: 'header', name: 'X-API-KEY' });
  });

  it('GET /health answers 200 without a key while the engine answers', async () => {
    const health = await get('/health', { headers: { 'X-API-KEY': '' } });
    expect(health.status).toBe(200);
    expect(health.json).toEqual({ status: 'ok' });
  });
});

describe('auth', () => {
  const path = `/api/endpoints/usage.api-counts?${PARAMS['usage.api-counts']}`;

  it('refuses a missing or wrong key with 401 unauthorized', async () => {
    for (const headers of [{ 'X-API-KEY': '' }, { 'X-API-KEY': 'wrong' }, { 'X-API-KEY': `${KEY}x` }, { 'X-API-KEY': KEY.slice(0, -1) }]) {
      const r = await get(path, { headers });
      expect(r.status).toBe(401);
      expect(r.json).toEqual({ error: { code: 'unauthorized', message: expect.any(String), status: 401 } });
    }
    expect((await get(path, { headers: { 'X-API-KEY': '', Authorization: `Basic ${KEY}` } })).status).toBe(401);
    expect((await get(path, { headers: { 'X-API-KEY': '', Authorization: 'Bearer nope' } })).status).toBe(401);
  });

  it('accepts every configured key, in X-API-KEY or as a Bearer token', async () => {
    expect((await get(path)).status).toBe(200);
    expect((await get(path, { headers: { 'X-API-KEY': KEY2 } })).status).toBe(200);
    expect((await get(path, { headers: { 'X-API-KEY': '', Authorization: `Bearer ${KEY2}` } })).status).toBe(200);
    expect((await get(path, { headers: { 'X-API-KEY': '', Authorization: `bearer ${KEY}` } })).status).toBe(200);
  });

  it('tells whether an endpoint or path exists only after the key is checked', async () => {
    expect((await get('/api/endpoints/no.such', { headers: { 'X-API-KEY': '' } })).status).toBe(401);
    expect((await get('/somewhere/else', { headers: { 'X-API-KEY': '' } })).status).toBe(401);
    const unknown = await get('/api/endpoints/no.such?project=abc');
    expect(unknown.status).toBe(404);
    expect(unknown.json.error.code).toBe('not_found');
    expect((await get('/api/endpoints/query/00000000-0000-0000-0000-000000000000')).json.error).toMatchObject({ code: 'not_found', status: 404 });
    expect((await get('/somewhere/else')).json.error).toMatchObject({ code: 'not_found', status: 404 });
  });
});

describe('headers', () => {
  it('reports the cache: MISS then HIT with the remaining lifetime, BYPASS and no-store for logs.all', async () => {
    const q = 'project=%5Eabc&interval=hourly';
    const miss = await get(`/api/endpoints/usage.api-counts?${q}`);
    expect(miss.headers.get('x-cache')).toBe('MISS');
    expect(miss.headers.get('cache-control')).toBe('private, max-age=900');
    const hit = await get(`/api/endpoints/query/${IDS['usage.api-counts']}?${q}`);
    expect(hit.headers.get('x-cache')).toBe('HIT');
    expect(hit.text).toBe(miss.text);
    const logs = await get(`/api/endpoints/logs.all?${PARAMS['logs.all']}`);
    expect(logs.headers.get('x-cache')).toBe('BYPASS');
    expect(logs.headers.get('cache-control')).toBe('no-store');
  });

  it('sends Server-Timing with the engine time and Vary: Accept', async () => {
    const r = await get(`/api/endpoints/logs.all?${PARAMS['logs.all']}`);
    expect(r.headers.get('server-timing')).toMatch(/^engine;dur=\d+(\.\d)?$/);
    expect(r.headers.get('vary')).toBe('Accept');
  });

  it('echoes a sane X-Request-Id and replaces anything else with a UUID', async () => {
    expect((await get('/health', { headers: { 'X-Request-Id': 'abc-123_x.y' } })).headers.get('x-request-id')).toBe('abc-123_x.y');
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    expect((await get('/health')).headers.get('x-request-id')).toMatch(uuid);
    expect((await get('/health', { headers: { 'X-Request-Id': 'has space<script>' } })).headers.get('x-request-id')).toMatch(uuid);
    expect((await get('/health', { headers: { 'X-Request-Id': 'a'.repeat(200) } })).headers.get('x-request-id')).toMatch(uuid);
    // Errors carry it too.
    expect((await get('/nope', { headers: { 'X-Request-Id': 'req-7' } })).headers.get('x-request-id')).toBe('req-7');
  });

  it('answers HEAD like GET without a body', async () => {
    const path = `/api/endpoints/logs.all?${PARAMS['logs.all']}`;
    const full = await get(path);
    const head = await get(path, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(full.text)));
    expect(head.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(head.headers.get('x-cache')).toBe('BYPASS');
    const headError = await get('/api/endpoints/logs.all', { method: 'HEAD' });
    expect(headError.status).toBe(400);
    expect(headError.text).toBe('');
  });

  it('sends no CORS headers by default and refuses OPTIONS', async () => {
    const r = await get('/health', { headers: { Origin: 'https://app.example.com' } });
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
    const options = await get('/api/endpoints/logs.all', { method: 'OPTIONS', headers: { Origin: 'https://app.example.com' } });
    expect(options.status).toBe(405);
  });
});

describe('errors', () => {
  it('405 method_not_allowed with Allow for every method but GET and HEAD (and POST on query routes)', async () => {
    for (const method of ['PUT', 'DELETE', 'PATCH']) {
      const r = await get(`/api/endpoints/logs.all?${PARAMS['logs.all']}`, { method });
      expect(r.status).toBe(405);
      expect(r.headers.get('allow')).toBe('GET, HEAD, POST');
      expect(r.json.error).toEqual({ code: 'method_not_allowed', message: expect.any(String), status: 405 });
    }
    for (const path of ['/health', '/api/endpoints', '/api/catalog']) {
      const r = await get(path, { method: 'POST' });
      expect([path, r.status, r.headers.get('allow')]).toEqual([path, 405, 'GET, HEAD']);
    }
    const raw = await rawRequest(server.port, 'BREW /api/endpoints/logs.all HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect([400, 405]).toContain(raw.status);
  });

  it('400 invalid_parameter naming the parameter', async () => {
    const cases: [string, string, RegExp][] = [
      ['/api/endpoints/logs.all?project_tier=PRO', 'project', /required/],
      ['/api/endpoints/logs.all?project=&project_tier=PRO', 'project', /required/],
      ['/api/endpoints/usage.api-counts?project=abc&interval=weekly', 'interval', /hourly, daily, minutely/],
      ['/api/endpoints/usage.api-counts?project=(abc&interval=daily', 'project', /regular expression/],
      ['/api/endpoints/logs.all?project=abc&project_tier=PRO&iso_timestamp_start=yesterday', 'iso_timestamp_start', /ISO 8601/],
      [`/api/endpoints/logs.all?project=${'a'.repeat(1025)}&project_tier=PRO`, 'project', /1024/],
      ['/api/endpoints/logs.all?project=abc&project=xyz&project_tier=PRO', 'project', /more than once/],
      ['/api/endpoints/logs.all?project=%E0%A4%A&project_tier=PRO', 'project', /percent-encoding/],
    ];
    for (const [path, param, message] of cases) {
      const r = await get(path);
      expect(r.status, path).toBe(400);
      expect(r.json.error).toMatchObject({ code: 'invalid_parameter', status: 400, param });
      expect(r.json.error.message).toMatch(message);
      expect(r.headers.get('cache-control')).toBe('no-store');
    }
  });

  it('ignores unknown parameters, repeated or not', async () => {
    const plain = await get(`/api/endpoints/logs.all?${PARAMS['logs.all']}`);
    const extra = await get(`/api/endpoints/logs.all?${PARAMS['logs.all']}&utm=1&utm=2&%5F=x`);
    expect(extra.status).toBe(200);
    expect(extra.text).toBe(plain.text);
  });

  it('400 bad_request for malformed percent-encoding in a parameter name or the path', async () => {
    const name = await get('/api/endpoints/logs.all?pro%ZZject=abc');
    expect(name.status).toBe(400);
    expect(name.json.error.code).toBe('bad_request');
    const path = await get('/api/endpoints/logs%E0.all');
    expect(path.status).toBe(400);
    expect(path.json.error).toMatchObject({ code: 'bad_request', status: 400 });
  });

  it('accepts the absolute form of a request target (as sent to proxies)', async () => {
    const r = await rawRequest(
      server.port,
      `GET http://127.0.0.1:${server.port}/api/endpoints/logs.all?project=abc&project_tier=PRO HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-KEY: ${KEY}\r\nConnection: close\r\n\r\n`,
    );
    expect(r.status).toBe(200);
    expect(r.text).toContain('"id":"e2"');
  });

  it("answers Logflare's backends and sources listings as self-hosted Studio's Log Drains page calls them: no drains, creating one refused", async () => {
    const listed = await get('/api/backends?metadata%5Btype%5D=log-drain', { headers: { 'X-API-KEY': '', Authorization: `Bearer ${KEY}` } });
    expect(listed.status).toBe(200);
    expect(listed.json).toEqual([]);
    expect((await get('/api/backends', { headers: { 'X-API-KEY': 'wrong' } })).status).toBe(401);
    const created = await get('/api/backends', { method: 'POST' });
    expect(created.status).toBe(405);
    expect(created.headers.get('allow')).toBe('GET, HEAD');
    // And Logflare's list of sources: each by its fixed UUID and its Logflare name.
    const sources = await get('/api/sources');
    expect(sources.status).toBe(200);
    expect(sources.json).toEqual([
      { id: '49d2db0a-0317-43a6-9cd4-0b1425da96f0', token: '49d2db0a-0317-43a6-9cd4-0b1425da96f0', name: 'cloudflare.logs.prod', source: 'edgeLogs' },
      { id: '25810149-e19d-4b24-a57a-0e886add2d74', token: '25810149-e19d-4b24-a57a-0e886add2d74', name: 'deno-relay-logs', source: 'functionEdgeLogs' },
    ]);
    expect((await get('/api/sources', { headers: { 'X-API-KEY': 'wrong' } })).status).toBe(401);
  });

  it('serves URLs up to 64 KiB (Supabase Studio sends its SQL in the query string); 414 uri_too_long past it, before any work', async () => {
    const base = '/api/endpoints/logs.all?project=abc&project_tier=PRO&junk=';
    const served = await get(`${base}${'x'.repeat(64 * 1024 - base.length - 'http://localhost'.length)}`);
    expect(served.status).toBe(200);
    expect(served.json.result.map((r: { id: string }) => r.id)).toEqual(['e2', 'e1', 'e3']);
    const r = await get(`${base}${'x'.repeat(64 * 1024)}`);
    expect(r.status).toBe(414);
    expect(r.json.error).toMatchObject({ code: 'uri_too_long', status: 414 });
  });
});

describe('output formats', () => {
  const path = `/api/endpoints/functions.invocation-stats?${PARAMS['functions.invocation-stats']}`;

  it('JSON by default, for */* and for types it cannot produce', async () => {
    const plain = await get(path);
    for (const accept of ['*/*', 'application/json', 'text/html', 'image/png;q=0.5, */*;q=0.1', 'text/csv;q=0']) {
      const r = await get(path, { headers: { Accept: accept } });
      expect(r.headers.get('content-type'), accept).toBe('application/json; charset=utf-8');
      expect(r.text).toBe(plain.text);
    }
  });

  it('CSV with a header line, parsed back to the JSON rows', async () => {
    const json = (await get(`/api/endpoints/logs.all?${PARAMS['logs.all']}`)).json.result;
    const r = await get(`/api/endpoints/logs.all?${PARAMS['logs.all']}`, { headers: { Accept: 'text/csv' } });
    expect(r.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
    const [header, ...records] = parseCsv(r.text);
    expect(header).toEqual(['id', 'timestamp', 'event_message', 'metadata']);
    expect(records.map(([id, timestamp, message, metadata]) => ({ id, timestamp, event_message: message, metadata: JSON.parse(metadata!) }))).toEqual(json);
    expect(r.text).toContain('"GET | 200 | ""quoted"", with comma"');
  });

  it('CSV of statistics: numbers as text and null as an empty field', async () => {
    const json = (await get(path)).json.result;
    const [header, ...records] = parseCsv((await get(path, { headers: { Accept: 'text/csv' } })).text);
    expect(records.map((r) => Object.fromEntries(header!.map((h, i) => [h, h === 'timestamp' ? r[i] : r[i] === '' ? null : Number(r[i])])))).toEqual(json);
  });

  it('NDJSON, one row per line, equal to the JSON rows', async () => {
    const json = (await get(path)).json.result;
    const r = await get(path, { headers: { Accept: 'application/x-ndjson' } });
    expect(r.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    expect(r.text.endsWith('\n')).toBe(true);
    expect(
      r.text
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual(json);
  });

  it('an Arrow IPC stream with microsecond UTC timestamps, Int64 counts and Float64 times', async () => {
    const json = (await get(path)).json.result;
    const response = await fetch(`${server.url}${path}`, { headers: { 'X-API-KEY': KEY, Accept: 'application/vnd.apache.arrow.stream' } });
    expect(response.headers.get('content-type')).toBe('application/vnd.apache.arrow.stream');
    const table = tableFromIPC(new Uint8Array(await response.arrayBuffer()));
    expect(table.numRows).toBe(json.length);
    expect(table.schema.fields.map((f) => `${f.name}:${f.type}`)).toEqual([
      'timestamp:Timestamp<MICROSECOND, UTC>',
      'min_execution_time:Float64',
      'max_execution_time:Float64',
      'avg_execution_time:Float64',
      'p95_execution_time:Float64',
      'p99_execution_time:Float64',
      'count:Int64',
      'error_count:Int64',
    ]);
    const micros = [...(table.getChild('timestamp')!.data[0]!.values as BigInt64Array)];
    expect(micros.map((m) => new Date(Number(m / 1000n)).toISOString().replace('Z', '000Z'))).toEqual(json.map((r: any) => r.timestamp));
    expect([...table.getChild('count')!].map(Number)).toEqual(json.map((r: any) => r.count));
    expect([...table.getChild('error_count')!].map(Number)).toEqual(json.map((r: any) => r.error_count));
    expect([...table.getChild('avg_execution_time')!]).toEqual(json.map((r: any) => r.avg_execution_time));
  });

  it('Arrow keeps the sixth fractional digit and returns metadata as JSON text', async () => {
    const response = await fetch(`${server.url}/api/endpoints/logs.all?${PARAMS['logs.all']}`, {
      headers: { 'X-API-KEY': KEY, Accept: 'application/json;q=0.5, application/vnd.apache.arrow.stream' },
    });
    const table = tableFromIPC(new Uint8Array(await response.arrayBuffer()));
    expect([...(table.getChild('timestamp')!.data[0]!.values as BigInt64Array)][0]).toBe(BigInt(Date.parse('2026-11-21T11:30:00Z')) * 1000n + 1n);
    expect(JSON.parse(table.getChild('metadata')!.get(0) as string).request.path).toBe('/auth/v1/user');
    expect([...table.getChild('id')!]).toEqual(['e2', 'e1', 'e3']);
  });

  it('the library gives the same Arrow table', async () => {
    const answer = await ep.query('logs.all', { project: 'abc', project_tier: 'PRO' }, { format: 'arrow' });
    expect(answer.table.numRows).toBe(answer.result.length);
    expect([...answer.table.getChild('id')!]).toEqual(answer.result.map((r) => r.id));
  });
});

describe('options', () => {
  it('serves under a base path and nothing outside it', async () => {
    const based = await listen(toNodeListener(createHandler(ep, { apiKeys: [KEY], basePath: '/logs/' })));
    try {
      const inside = await fetch(`${based.url}/logs/api/endpoints/logs.all?${PARAMS['logs.all']}`, { headers: { 'X-API-KEY': KEY } });
      expect(inside.status).toBe(200);
      expect((await fetch(`${based.url}/logs/health`)).status).toBe(200);
      expect((await fetch(`${based.url}/api/endpoints/logs.all?${PARAMS['logs.all']}`, { headers: { 'X-API-KEY': KEY } })).status).toBe(404);
      expect((await fetch(`${based.url}/logsx/health`)).status).toBe(404);
      const doc = (await (await fetch(`${based.url}/logs/api/openapi.json`)).json()) as any;
      expect(doc.servers).toEqual([{ url: '/logs' }]);
    } finally {
      await based.close();
    }
  });

  it('CORS when configured: allowed origins only, and preflight without a key', async () => {
    const cors = await listen(toNodeListener(createHandler(ep, { apiKeys: [KEY], cors: { origin: ['https://app.example.com'] } })));
    try {
      const allowed = await fetch(`${cors.url}/api/endpoints/logs.all?${PARAMS['logs.all']}`, {
        headers: { 'X-API-KEY': KEY, Origin: 'https://app.example.com' },
      });
      expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
      expect(allowed.headers.get('access-control-expose-headers')).toContain('X-Cache');
      expect(allowed.headers.get('vary')).toContain('Origin');
      const other = await fetch(`${cors.url}/health`, { headers: { Origin: 'https://evil.example.com' } });
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
      const preflight = await fetch(`${cors.url}/api/endpoints/logs.all`, {
        method: 'OPTIONS',
        headers: { Origin: 'https://app.example.com', 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'x-api-key' },
      });
      expect(preflight.status).toBe(204);
      // Query routes take POST too: a caller's SQL in a JSON body (docs/sandboxing.md).
      expect(preflight.headers.get('access-control-allow-methods')).toBe('GET, HEAD, POST, OPTIONS');
      expect(preflight.headers.get('access-control-allow-headers')).toContain('X-API-KEY');
      // Errors are readable cross-origin too.
      const denied = await fetch(`${cors.url}/api/endpoints/logs.all`, { headers: { Origin: 'https://app.example.com' } });
      expect(denied.status).toBe(401);
      expect(denied.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    } finally {
      await cors.close();
    }
    const any = await listen(toNodeListener(createHandler(ep, { auth: false, cors: { origin: '*' } })));
    try {
      const r = await fetch(`${any.url}/api/endpoints/logs.all?${PARAMS['logs.all']}`, { headers: { Origin: 'https://x.example' } });
      expect(r.status).toBe(200);
      expect(r.headers.get('access-control-allow-origin')).toBe('*');
    } finally {
      await any.close();
    }
  });

  it('auth: false serves without any key', async () => {
    const open = await listen(toNodeListener(createHandler(ep, { auth: false })));
    try {
      expect((await fetch(`${open.url}/api/endpoints/logs.all?${PARAMS['logs.all']}`)).status).toBe(200);
      expect((await fetch(`${open.url}/api/endpoints/nope`)).status).toBe(404);
    } finally {
      await open.close();
    }
  });
});

/** A small RFC 4180 reader for the tests (quoted fields, doubled quotes, CRLF). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') row.push(field), (field = '');
    else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field), rows.push(row), (row = []), (field = ''), i++;
    } else field += c;
  }
  return rows;
}
