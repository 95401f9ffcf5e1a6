import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndpoints, type Endpoints } from '../src/index';
import { createHandler } from '../src/http';
import { toNodeListener } from '../src/node';
import { AnswerMemo } from '../src/http/answer-memo';
import { edgeEvent, tempDir, writeLines } from './support/log-files';

const KEY = 'secret-key';
const URL = 'http://localhost/api/endpoints/usage.api-counts?project=abc&interval=daily';
const get = (headers: Record<string, string> = { 'X-API-KEY': KEY }, url = URL) => new Request(url, { headers });

describe('HTTP microcache of cached answers', () => {
  const tmp = tempDir();
  // The cache clock moves; the windows stay at one replayed instant.
  let clock = Date.parse('2026-11-21T12:00:00Z');
  let ep: Endpoints;

  beforeAll(async () => {
    writeLines(tmp.path('edge.ndjson'), [edgeEvent({ project: 'abc', timestamp: '2026-11-21T11:00:00Z' })]);
    ep = await createEndpoints({ sources: { edgeLogs: tmp.path('edge.ndjson') }, now: () => new Date('2026-11-21T12:00:00Z'), cacheClock: () => clock });
  });
  afterAll(async () => {
    await ep.close();
    tmp.cleanup();
  });

  it('serves a repeated request from the stored bytes without reaching the cache, after the key check', async () => {
    clock = Date.parse('2026-11-21T12:00:00Z');
    const handler = createHandler(ep, { apiKeys: [KEY], microcacheMs: 3_600_000 });
    const first = await handler(get());
    expect(first.headers.get('x-cache')).toBe('MISS');
    const before = ep.stats();
    clock = Date.parse('2026-11-21T12:01:40Z');
    const second = await handler(get());
    expect(second.headers.get('x-cache')).toBe('HIT');
    expect(second.headers.get('cache-control')).toBe('private, max-age=800');
    expect(second.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
    expect(await second.text()).toBe(await first.text());
    expect(ep.stats().cacheHits).toBe(before.cacheHits);
    // A wrong key never gets the stored answer.
    expect((await handler(get({ 'X-API-KEY': 'wrong' }))).status).toBe(401);
    // Another format is another entry.
    const csv = await handler(get({ 'X-API-KEY': KEY, Accept: 'text/csv' }));
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    // HEAD keeps the headers, drops the body.
    const head = await handler(new Request(URL, { method: 'HEAD', headers: { 'X-API-KEY': KEY } }));
    expect(head.headers.get('x-cache')).toBe('HIT');
    expect(await head.text()).toBe('');
  });

  it('never serves an answer past its result lifetime', async () => {
    clock = Date.parse('2026-11-22T00:00:00Z');
    const handler = createHandler(ep, { apiKeys: [KEY], microcacheMs: 3_600_000 });
    expect((await handler(get())).headers.get('x-cache')).toBe('MISS');
    clock = Date.parse('2026-11-22T00:15:00Z'); // exactly 900 s later: the lifetime is over
    const later = await handler(get());
    expect(later.headers.get('x-cache')).toBe('MISS');
  });

  it('microcacheMs: 0 turns it off; uncached endpoints are never stored', async () => {
    clock = Date.parse('2026-11-23T00:00:00Z');
    const handler = createHandler(ep, { apiKeys: [KEY], microcacheMs: 0 });
    await handler(get());
    const before = ep.stats().cacheHits;
    expect((await handler(get())).headers.get('x-cache')).toBe('HIT');
    expect(ep.stats().cacheHits).toBe(before + 1);
    const logs = 'http://localhost/api/endpoints/logs.all?project=abc&project_tier=FREE';
    const on = createHandler(ep, { apiKeys: [KEY], microcacheMs: 3_600_000 });
    expect((await on(get(undefined, logs))).headers.get('x-cache')).toBe('BYPASS');
    expect((await on(get(undefined, logs))).headers.get('x-cache')).toBe('BYPASS');
  });
  it('answers a hit at once (hit), and the node adapter serves it the same way as a full request', async () => {
    clock = Date.parse('2026-11-25T00:00:00Z');
    const handler = createHandler(ep, { apiKeys: [KEY], microcacheMs: 3_600_000, cors: { origin: ['https://studio.example'] } });
    const plain = (headers: Record<string, string>, method = 'GET') => ({ method, url: URL, header: (name: string) => headers[name.toLowerCase()] ?? null });
    // Not stored yet: the request takes the full path.
    expect(handler.hit!(plain({ 'x-api-key': KEY }))).toBeNull();
    const server = createServer(toNodeListener(handler));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${new globalThis.URL(URL).pathname}${new globalThis.URL(URL).search}`;
      const headers = { 'X-API-KEY': KEY, Origin: 'https://studio.example', 'X-Request-Id': 'trace-1' };
      const first = await fetch(url, { headers });
      expect(first.headers.get('x-cache')).toBe('MISS');
      const stored = handler.hit!(plain({ 'x-api-key': KEY }));
      expect(stored).not.toBeInstanceOf(Promise);
      expect(stored!.headers['X-Cache']).toBe('HIT');
      // Without the right key, no hit: the full path answers 401.
      expect(handler.hit!(plain({ 'x-api-key': 'wrong' }))).toBeNull();
      const second = await fetch(url, { headers });
      expect(second.headers.get('x-cache')).toBe('HIT');
      expect(second.headers.get('x-request-id')).toBe('trace-1');
      expect(second.headers.get('access-control-allow-origin')).toBe('https://studio.example');
      expect(await second.text()).toBe(await first.text());
      expect((await fetch(url, { headers: { 'X-API-KEY': 'wrong' } })).status).toBe(401);
      const head = await fetch(url, { method: 'HEAD', headers });
      expect(head.headers.get('x-cache')).toBe('HIT');
      expect(await head.text()).toBe('');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('AnswerMemo', () => {
  const response = (n: number) => ({ status: 200, headers: { 'X-Cache': 'MISS' }, body: new Uint8Array(n) });

  it('reuses an answer only within its window and its lifetime', () => {
    const memo = new AnswerMemo(1000);
    memo.set('k', response(10), 0, 5000);
    expect(memo.get('k', 999)).not.toBeNull();
    expect(memo.get('k', 1000)).toBeNull();
    const long = new AnswerMemo(10_000);
    long.set('k', response(10), 0, 5000);
    expect(long.get('k', 3500)?.headers['Cache-Control']).toBe('private, max-age=1');
    expect(long.get('k', 4999)?.headers['Cache-Control']).toBe('private, max-age=0');
    expect(long.get('k', 5000)).toBeNull();
  });

  it('stays within its entry and byte bounds, oldest out first', () => {
    const memo = new AnswerMemo(1000, 2, 100);
    memo.set('a', response(10), 0, 1e9);
    memo.set('b', response(10), 0, 1e9);
    memo.set('c', response(10), 0, 1e9);
    expect(memo.get('a', 1)).toBeNull();
    expect(memo.get('c', 1)).not.toBeNull();
    memo.set('big', response(95), 0, 1e9);
    expect(memo.get('b', 1)).toBeNull();
    expect(memo.get('c', 1)).toBeNull();
    expect(memo.get('big', 1)).not.toBeNull();
    memo.set('huge', response(200), 0, 1e9);
    expect(memo.get('huge', 1)).toBeNull();
  });
});
