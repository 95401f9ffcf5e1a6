import { afterAll, beforeAll, expect, it } from 'vitest';
import { createEndpoints, type Endpoints } from '../src/index';
import { createHandler } from '../src/http';
import { toNodeListener } from '../src/node';
import { listen, rawRequest } from './support/http';
import { edgeEvent, functionEvent, tempDir, writeLines } from './support/log-files';

const KEY = 'fuzz-key';
const REQUESTS = 1000;
const tmp = tempDir('le-fuzz-');
let ep: Endpoints;
let server: Awaited<ReturnType<typeof listen>>;

beforeAll(async () => {
  writeLines(tmp.path('edge.ndjson'), [edgeEvent({ timestamp: '2026-11-21T11:00:00Z' }), edgeEvent({ timestamp: '2026-11-21T11:10:00Z', path: '/storage/v1/x' }), '{broken json']);
  writeLines(tmp.path('fn.ndjson'), [functionEvent({ timestamp: '2026-11-21T11:00:00Z', ms: 5 })]);
  ep = await createEndpoints({
    sources: { edgeLogs: tmp.path('edge.ndjson'), functionEdgeLogs: tmp.path('fn.ndjson') },
    now: () => new Date('2026-11-21T12:00:00Z'),
  });
  server = await listen(toNodeListener(createHandler(ep, { apiKeys: [KEY], onError: () => undefined })));
});

afterAll(async () => {
  await server?.close();
  await ep?.close();
  tmp.cleanup();
});

/** mulberry32: a tiny seeded PRNG, so every run sends the same 1000 requests. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(list: readonly T[]): T => list[int(list.length)]!;
  return { next, int, pick };
}

const { next, int, pick } = prng(20261121);

const JUNK = [
  '%',
  '%Z',
  '%E0%A4%A',
  '%00',
  '%FF',
  '%C0%AF',
  '..',
  '.',
  '//',
  '\\',
  '+',
  '%2F',
  '%252F',
  '~',
  '*',
  '(',
  '[a-',
  'a{99999}',
  '\\p{Nope}',
  "'",
  '"',
  ';--',
  'é',
  '%E2%9C%93',
  '%F0%9F%92%A9',
  '%ED%A0%80',
];
const NAMES = ['functions.invocation-stats', 'logs.all', 'usage.api-counts', '3e97a72c-f5e4-4378-80ac-22ce14543451', '538D9361-E1E6-421A-953A-37A46D1B9E19', 'query', 'nope', ''];
const PARAMS = ['project', 'interval', 'project_tier', 'function_id', 'iso_timestamp_start', 'iso_timestamp_end', 'x', '', '__proto__', 'constructor'];
const VALUES = [
  'abc',
  '^abc$',
  '.*',
  'daily',
  'hourly',
  'minutely',
  '1day',
  '5min',
  '7day',
  'FREE',
  'PRO',
  'ENTERPRISE',
  '2026-11-21T10:00:00Z',
  '2026-02-30',
  '0000-01-01T00:00:00Z',
  '9999-12-31T23:59:59.999999999+23:59',
  '',
  'null',
  '-1',
  '1e309',
];
const ACCEPTS = ['*/*', 'text/csv', 'application/x-ndjson', 'application/vnd.apache.arrow.stream', 'text/csv;q=abc', ';;;', 'application/json;q=0', 'x/y, */*;q=0.1'];
const METHODS = ['GET', 'GET', 'GET', 'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'TRACE', 'FOO'];

function junk(max: number): string {
  let s = '';
  const n = int(max);
  for (let i = 0; i < n; i++) {
    const r = next();
    s += r < 0.4 ? pick(JUNK) : r < 0.7 ? String.fromCharCode(0x21 + int(94)) : `%${int(256).toString(16).padStart(2, '0')}`;
  }
  return s.replace(/[\s#?]/g, '_');
}

function headerSafe(text: string): string {
  return text.replace(/[\r\n]/g, '');
}

function randomRequest(): string {
  const method = pick(METHODS);
  const prefix = pick(['/api/endpoints/', '/api/endpoints/query/', '/api/endpoints', '/health', '/api/openapi.json', '/', '/api/', `/${junk(8)}/`]);
  const name = next() < 0.6 ? pick(NAMES) : junk(12);
  let path = `${prefix}${prefix.endsWith('/') ? name : ''}`;
  if (next() < 0.1) path += `/${junk(6)}`;
  if (next() < 0.02) path += 'x'.repeat(int(10_000));
  const pairs: string[] = [];
  const count = int(6);
  for (let i = 0; i < count; i++) {
    const key = next() < 0.8 ? pick(PARAMS) : junk(6);
    const value = next() < 0.6 ? encodeURIComponent(pick(VALUES)) : next() < 0.05 ? 'a'.repeat(1000 + int(60)) : junk(16);
    pairs.push(next() < 0.05 ? key : `${key}=${value}`);
  }
  const target = pairs.length ? `${path}?${pairs.join('&')}` : path;
  const headers = ['Host: 127.0.0.1', 'Connection: close'];
  const key = next();
  if (key < 0.75) headers.push(`X-API-KEY: ${KEY}`);
  else if (key < 0.85) headers.push(`Authorization: ${pick(['Bearer ', 'Basic ', 'bearer', ''])}${pick([KEY, junk(10)])}`);
  else if (key < 0.95) headers.push(`X-API-KEY: ${headerSafe(junk(20))}`);
  if (next() < 0.5) headers.push(`Accept: ${pick(ACCEPTS)}`);
  if (next() < 0.3) headers.push(`X-Request-Id: ${headerSafe(junk(40))}`);
  if (next() < 0.2) headers.push(`X-${junk(4).replace(/[^A-Za-z0-9-]/g, 'a') || 'a'}: ${headerSafe(junk(30))}`);
  if (next() < 0.05) headers.push(`Origin: ${headerSafe(junk(10))}`);
  if (next() < 0.05) headers.push(`Content-Length: ${int(3)}`);
  return `${method} ${target} HTTP/1.1\r\n${headers.join('\r\n')}\r\n\r\n`;
}

it(`${REQUESTS} requests with junk in paths, parameters and headers get 2xx or 4xx, never 5xx, and the server stays healthy`, async () => {
  const requests = Array.from({ length: REQUESTS }, randomRequest);
  const statuses = new Map<number, number>();
  const bad: string[] = [];
  let index = 0;
  // A few sockets at a time, like a handful of clients.
  await Promise.all(
    Array.from({ length: 6 }, async () => {
      while (index < requests.length) {
        const request = requests[index++]!;
        const { status, text } = await rawRequest(server.port, request);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        const ok = status === 200 || status === 204 || (status >= 400 && status < 500);
        if (!ok) bad.push(`${status} for ${request.slice(0, 300)}\n${text.slice(0, 300)}`);
      }
    }),
  );
  expect(bad).toEqual([]);
  // The run exercised both sides: real answers and refusals.
  expect(statuses.get(200) ?? 0).toBeGreaterThan(50);
  expect([...statuses.keys()].filter((s) => s >= 400).length).toBeGreaterThan(3);

  const health = await fetch(`${server.url}/health`);
  expect(health.status).toBe(200);
  const valid = await fetch(`${server.url}/api/endpoints/logs.all?project=abc&project_tier=FREE`, { headers: { 'X-API-KEY': KEY } });
  expect(valid.status).toBe(200);
  expect(((await valid.json()) as { result: unknown[] }).result).toHaveLength(2);
});
