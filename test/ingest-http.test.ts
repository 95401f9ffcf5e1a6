import { readdirSync, readFileSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { deflateSync, gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createEndpoints, type Endpoints } from '../src/index';
import { createHandler } from '../src/http';
import { toNodeListener } from '../src/node';
import type { HandlerOptions } from '../src/http/handler-options';
import { walDir } from '../src/managed/wal/wal-set';
import { listen } from './support/http';
import { tempDir } from './support/log-files';

const NOW = '2026-11-21T12:00:00Z';
const KEY = 'query-key';
const INGEST_KEY = 'ingest-only-key';
const tmp = tempDir('le-ingest-http-');
afterAll(() => tmp.cleanup());
afterEach(() => vi.restoreAllMocks());

let n = 0;
/** A managed-storage instance behind the node listener on loopback. */
async function serve(handlerOptions: Partial<HandlerOptions> = {}, storage: Record<string, number> = {}) {
  const dataDir = tmp.path(`data-${++n}`);
  const ep = await createEndpoints({ storage: { dataDir, ...storage }, now: () => new Date(NOW) });
  const handler = createHandler(ep, { apiKeys: [KEY], ingestKeys: [INGEST_KEY], onError: () => undefined, ...handlerOptions });
  const server = await listen(toNodeListener(handler));
  return {
    ep,
    dataDir,
    url: server.url,
    async close() {
      await server.close();
      await ep.close();
    },
  };
}

type Server = Awaited<ReturnType<typeof serve>>;

async function post(server: Server, path: string, body: string | Uint8Array, headers: Record<string, string> = {}) {
  const response = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'X-API-KEY': KEY, 'Content-Type': 'application/json', ...headers }, body });
  const text = await response.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    // HEAD and friends.
  }
  return { status: response.status, headers: response.headers, json, text };
}

async function logsAll(server: Server, key = KEY) {
  const response = await fetch(`${server.url}/api/endpoints/logs.all?project=abc&project_tier=FREE`, { headers: { 'X-API-KEY': key } });
  return { status: response.status, json: (await response.json()) as any };
}

/** Committed bytes in a source's WAL: unchanged by a refused request. */
function walBytes(server: Server, source: 'edgeLogs' | 'functionEdgeLogs' = 'edgeLogs'): number {
  const dir = walDir(server.dataDir, source);
  return readdirSync(dir).reduce((sum, f) => sum + statSync(join(dir, f)).size, 0);
}

const event = (id: string, over: Record<string, unknown> = {}) => ({
  id,
  message: `GET | 200 | ${id}`,
  project: 'abc',
  timestamp: '2026-11-21T11:00:00Z',
  metadata: { request: { path: '/rest/v1/x', url: 'https://abc.supabase.co/rest/v1/x' } },
  ...over,
});
const EDGE = '?source_name=cloudflare.logs.prod';

describe('ingest routes', () => {
  let server: Server;
  beforeAll(async () => {
    server = await serve();
  });
  afterAll(() => server.close());

  it.each(['/api/logs', '/logs', '/api/events'])('POST %s answers 200 {"message":"Logged!"} and the events are served', async (route) => {
    const id = `route-${route}`;
    const answer = await post(server, `${route}${EDGE}`, JSON.stringify({ batch: [event(id)] }));
    expect(answer.status).toBe(200);
    expect(answer.text).toBe('{"message":"Logged!"}');
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect((await logsAll(server)).json.result.map((r: any) => r.id)).toContain(id);
  });

  const ndjson = (...events: object[]) => events.map((e) => `${JSON.stringify(e)}\r\n`).join('');
  const forms: Array<[string, string[], (events: object[]) => { body: string | Uint8Array; headers: Record<string, string> }]> = [
    ['{"batch": [...]}', ['f1a', 'f1b'], (events) => ({ body: JSON.stringify({ batch: events }), headers: {} })],
    ['a JSON array', ['f2a', 'f2b'], (events) => ({ body: JSON.stringify(events), headers: {} })],
    ['one event object', ['f3a'], (events) => ({ body: JSON.stringify(events[0]), headers: {} })],
    ['NDJSON', ['f4a', 'f4b'], (events) => ({ body: ndjson(...events), headers: { 'Content-Type': 'application/x-ndjson' } })],
    ['a gzip JSON array (Vector)', ['f5a', 'f5b'], (events) => ({ body: gzipSync(JSON.stringify(events)), headers: { 'Content-Encoding': 'gzip' } })],
    ['gzip NDJSON', ['f6a', 'f6b'], (events) => ({ body: gzipSync(ndjson(...events)), headers: { 'Content-Encoding': 'gzip', 'Content-Type': 'application/x-ndjson' } })],
    ['a deflate body', ['f7a'], (events) => ({ body: deflateSync(JSON.stringify(events)), headers: { 'Content-Encoding': 'deflate' } })],
  ];
  for (const [name, ids, make] of forms) {
    it(`takes ${name}`, async () => {
      const { body, headers } = make(ids.map((id) => event(id)));
      const answer = await post(server, `/api/logs${EDGE}`, body, headers);
      expect(answer.status, answer.text).toBe(200);
      expect((await logsAll(server)).json.result.map((r: any) => r.id)).toEqual(expect.arrayContaining(ids));
    });
  }

  it("names the source by UUID too (pino-logflare's sourceToken), and routes deno-relay-logs to the function log", async () => {
    const fn = { message: 'POST | 500', timestamp: '2026-11-21T11:00:00Z', metadata: { project_ref: 'abc', function_id: 'f1', execution_time_ms: 12, response: { status_code: 500 } } };
    expect((await post(server, '/logs?source=25810149-E19D-4B24-A57A-0E886ADD2D74', JSON.stringify({ batch: [fn, fn] }))).status).toBe(200);
    expect((await post(server, '/api/logs?source_name=deno-relay-logs', JSON.stringify(fn))).status).toBe(200);
    const stats = await fetch(`${server.url}/api/endpoints/functions.invocation-stats?project=abc&interval=1day`, { headers: { 'X-API-KEY': KEY } });
    expect(((await stats.json()) as any).result).toEqual([expect.objectContaining({ count: 3, error_count: 3, min_execution_time: 12 })]);
  });

  it('a bad event is 400 invalid_body naming it and its index, and nothing of the request is kept', async () => {
    const before = walBytes(server);
    const answer = await post(server, `/api/logs${EDGE}`, JSON.stringify({ batch: [event('ok-1'), event('bad', { timestamp: 'soon' })] }));
    expect(answer.status).toBe(400);
    expect(answer.json).toEqual({ error: { code: 'invalid_body', status: 400, index: 1, message: expect.stringMatching(/^Event 1: "timestamp" "soon" is not/) } });
    expect(walBytes(server)).toBe(before);
    expect((await logsAll(server)).json.result.map((r: any) => r.id)).not.toContain('ok-1');
  });

  it.each([
    ['not JSON', '{"batch": [', {}, 400, 'invalid_body', /The body is not valid JSON/],
    ['empty', '', {}, 400, 'invalid_body', /The body is empty/],
    ['broken gzip', 'plain text', { 'Content-Encoding': 'gzip' }, 400, 'invalid_body', /not valid gzip data/],
    ['another encoding', '[]', { 'Content-Encoding': 'br' }, 415, 'unsupported_media_type', /Content-Encoding "br" is not supported/],
  ])('a body that is %s is refused (%i)', async (_name, body, headers, status, code, message) => {
    const answer = await post(server, `/api/logs${EDGE}`, body, headers as Record<string, string>);
    expect(answer.status).toBe(status);
    expect(answer.json.error).toMatchObject({ code, status, message: expect.stringMatching(message) });
  });

  it('an unknown source is 404 listing the known names; a missing one is 400 naming source_name', async () => {
    const unknown = await post(server, '/api/logs?source_name=gotrue.logs.prod', '[]');
    expect(unknown.status).toBe(404);
    expect(unknown.json.error.message).toMatch(/No source is named "gotrue.logs.prod". Known sources: cloudflare.logs.prod \(49d2db0a-0317-43a6-9cd4-0b1425da96f0\), deno-relay-logs/);
    const missing = await post(server, '/api/logs', '[]');
    expect(missing.status).toBe(400);
    expect(missing.json.error).toMatchObject({ code: 'invalid_parameter', param: 'source_name' });
  });

  it('other methods on ingest routes are 405 with Allow: POST; POST elsewhere is 405 with Allow: GET, HEAD, or a query', async () => {
    for (const method of ['GET', 'HEAD', 'PUT', 'DELETE']) {
      const response = await fetch(`${server.url}/api/logs${EDGE}`, { method, headers: { 'X-API-KEY': KEY } });
      expect(response.status, method).toBe(405);
      expect(response.headers.get('allow'), method).toBe('POST');
    }
    const list = await post(server, '/api/endpoints', '[]');
    expect(list.status).toBe(405);
    expect(list.headers.get('allow')).toBe('GET, HEAD');
    // Query routes take POST for a caller's SQL ({"sql": ...}, docs/sandboxing.md): a batch there is a bad body.
    const query = await post(server, '/api/endpoints/logs.all?project=abc&project_tier=FREE', '[]');
    expect([query.status, query.json.error.code]).toEqual([400, 'invalid_body']);
  });

  it('keys: none or a wrong one is 401; an ingest key ingests but may not query; a query key does both; ?api_key= works for ingest', async () => {
    expect((await post(server, `/api/logs${EDGE}`, '[]', { 'X-API-KEY': '' })).status).toBe(401);
    expect((await post(server, `/api/logs${EDGE}`, '[]', { 'X-API-KEY': 'wrong' })).status).toBe(401);
    expect((await post(server, `/api/logs${EDGE}`, JSON.stringify(event('by-ingest-key')), { 'X-API-KEY': INGEST_KEY })).status).toBe(200);
    expect((await post(server, `/api/logs${EDGE}`, JSON.stringify(event('by-bearer')), { 'X-API-KEY': '', Authorization: `Bearer ${INGEST_KEY}` })).status).toBe(200);
    expect((await post(server, `/api/logs${EDGE}&api_key=${INGEST_KEY}`, JSON.stringify(event('by-param')), { 'X-API-KEY': '' })).status).toBe(200);
    const refused = await logsAll(server, INGEST_KEY);
    expect(refused.status).toBe(401);
    expect(refused.json.error.message).toBe('This key may only ingest events (POST /api/logs); queries need a query key.');
    const served = (await logsAll(server)).json.result.map((r: any) => r.id);
    expect(served).toEqual(expect.arrayContaining(['by-ingest-key', 'by-bearer', 'by-param']));
  });

  it('a CORS preflight allows POST and Content-Encoding', async () => {
    const cors = await serve({ cors: { origin: '*' } });
    const response = await fetch(`${cors.url}/api/logs${EDGE}`, { method: 'OPTIONS', headers: { Origin: 'https://app.example.com', 'Access-Control-Request-Method': 'POST' } });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-methods')).toBe('POST, OPTIONS');
    expect(response.headers.get('access-control-allow-headers')).toContain('Content-Encoding');
    await cors.close();
  });
});

describe('limits and pressure', () => {
  it('a body past maxBodyBytes is 413, plain or gzip, and the connection serves the next request', async () => {
    const server = await serve({ ingest: { maxBodyBytes: 2000 } });
    const big = JSON.stringify([event('big', { padding: 'x'.repeat(3000) })]);
    const plain = await post(server, `/api/logs${EDGE}`, big);
    expect(plain.status).toBe(413);
    expect(plain.json.error).toMatchObject({ code: 'payload_too_large', message: expect.stringMatching(/larger than 2000 bytes/) });
    expect((await post(server, `/api/logs${EDGE}`, gzipSync(big), { 'Content-Encoding': 'gzip' })).status).toBe(413);
    expect((await post(server, `/api/logs${EDGE}`, JSON.stringify(event('small')))).status).toBe(200);
    await server.close();
  });

  it('the default limit is 12 MiB after decompression: a gzip bomb gets 413', async () => {
    const server = await serve();
    const bomb = gzipSync(Buffer.alloc(13 * 1024 * 1024, 0x20));
    const answer = await post(server, `/api/logs${EDGE}`, bomb, { 'Content-Encoding': 'gzip' });
    expect(answer.status).toBe(413);
    expect(answer.json.error.message).toMatch(/larger than 12582912 bytes/);
    await server.close();
  });

  it('past the bytes in flight of all requests: 503 overloaded with Retry-After', async () => {
    const server = await serve({ ingest: { maxBytesInFlight: 500 } });
    const answer = await post(server, `/api/logs${EDGE}`, JSON.stringify([event('a', { padding: 'x'.repeat(600) })]));
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('1');
    expect(answer.json.error.code).toBe('overloaded');
    // The budget was given back.
    expect((await post(server, `/api/logs${EDGE}`, JSON.stringify(event('b')))).status).toBe(200);
    await server.close();
  });

  it('past the uncompacted bytes of the WAL: 503 overloaded with Retry-After', async () => {
    const server = await serve({}, { maxUncompactedBytes: 600 });
    expect((await post(server, `/api/logs${EDGE}`, JSON.stringify(event('a', { padding: 'x'.repeat(300) })))).status).toBe(200);
    const answer = await post(server, `/api/logs${EDGE}`, JSON.stringify(event('b', { padding: 'x'.repeat(300) })));
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('5');
    await server.close();
  });

  it('answers 200 only once the events are fsynced', async () => {
    const server = await serve();
    const probe = await open(tmp.path('probe'), 'w');
    await probe.close();
    const proto = Object.getPrototypeOf(probe) as { datasync: () => Promise<void> };
    const realSync = proto.datasync;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    vi.spyOn(proto, 'datasync').mockImplementation(async function (this: unknown) {
      await gate;
      return realSync.call(this);
    });
    const before = walBytes(server);
    let answered = false;
    const answer = post(server, `/api/logs${EDGE}`, JSON.stringify(event('synced'))).then((a) => ((answered = true), a));
    await vi.waitFor(() => expect(walBytes(server)).toBeGreaterThan(before));
    expect(answered).toBe(false);
    release();
    expect((await answer).status).toBe(200);
    await server.close();
  });

  it('without managed storage the ingest routes are 404 with a hint', async () => {
    const ep: Endpoints = await createEndpoints({ sources: {} });
    const server = await listen(toNodeListener(createHandler(ep, { apiKeys: [KEY] })));
    const response = await fetch(`${server.url}/api/logs${EDGE}`, { method: 'POST', headers: { 'X-API-KEY': KEY }, body: '[]' });
    expect(response.status).toBe(404);
    expect(((await response.json()) as any).error.message).toMatch(/--data-dir/);
    await server.close();
    await ep.close();
  });
});

describe('the fetch handler', () => {
  it('reads request bodies too (Hono, Bun, Deno)', async () => {
    const dataDir = tmp.path(`data-${++n}`);
    const ep = await createEndpoints({ storage: { dataDir }, now: () => new Date(NOW) });
    const handler = createHandler(ep, { ingestKeys: [INGEST_KEY], apiKeys: [KEY], ingest: { maxBodyBytes: 5000 } });
    const send = (body: string | Uint8Array, headers: Record<string, string> = {}) =>
      handler(new Request(`http://localhost/api/logs${EDGE}`, { method: 'POST', headers: { 'X-API-KEY': INGEST_KEY, ...headers }, body }));
    expect((await send(JSON.stringify([event('fetch-1')]))).status).toBe(200);
    expect((await send(gzipSync(JSON.stringify([event('fetch-2')])), { 'Content-Encoding': 'gzip' })).status).toBe(200);
    expect((await send('x'.repeat(6000))).status).toBe(413);
    expect((await ep.logsAll({ project: 'abc', project_tier: 'FREE' })).map((r) => r.id).sort()).toEqual(['fetch-1', 'fetch-2']);
    await ep.close();
  });
});

describe('createHandler keys', () => {
  it('ingest keys alone are enough to start; no key at all is refused unless auth: false', async () => {
    const ep = await createEndpoints({ sources: {} });
    expect(() => createHandler(ep, { ingestKeys: ['k'] })).not.toThrow();
    expect(() => createHandler(ep, {})).toThrow(/no API key configured/);
    expect(() => createHandler(ep, { apiKeys: ['k'], ingest: { maxBodyBytes: 0 } })).toThrow(/ingest.maxBodyBytes/);
    await ep.close();
  });
});

describe('stored bytes', () => {
  it('what the WAL holds is the events as normalised JSON lines and commit markers', async () => {
    const server = await serve();
    await post(server, `/api/logs${EDGE}`, JSON.stringify([{ message: 'hi', id: 'x1', timestamp: 1795256102 }]));
    const dir = walDir(server.dataDir, 'edgeLogs');
    const text = readdirSync(dir)
      .map((f) => readFileSync(join(dir, f), 'utf8'))
      .join('');
    expect(text.split('\n')[0]).toBe('{"id":"x1","timestamp":1795256102,"event_message":"hi"}');
    expect(text.split('\n')[1]).toMatch(/^\{"_wal_commit":\{"seq":1,"bytes":56,"crc32":\d+\}\}$/);
    await server.close();
  });
});
