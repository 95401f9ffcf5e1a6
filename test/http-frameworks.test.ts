import { serve, type ServerType } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndpoints, type Endpoints } from '../src/index';
import { createHandler } from '../src/http';
import { toNodeListener } from '../src/node';
import { edgeEvent, tempDir, writeLines } from './support/log-files';

// The mounting snippets of docs/http.md, each checked through a real socket.
const KEY = 'framework-key';
const QUERY = '/logs/api/endpoints/logs.all?project=abc&project_tier=FREE';
const tmp = tempDir('le-frameworks-');
let ep: Endpoints;

beforeAll(async () => {
  writeLines(tmp.path('edge.ndjson'), [edgeEvent({ id: 'only', timestamp: '2026-11-21T11:00:00Z' })]);
  ep = await createEndpoints({ sources: { edgeLogs: tmp.path('edge.ndjson') }, now: () => new Date('2026-11-21T12:00:00Z') });
});

afterAll(async () => {
  await ep?.close();
  tmp.cleanup();
});

/** The same checks for every framework: a query, auth, HEAD, and the app's own routes untouched. */
async function checkMounted(base: string) {
  const ok = await fetch(`${base}${QUERY}`, { headers: { 'X-API-KEY': KEY } });
  expect(ok.status).toBe(200);
  expect(ok.headers.get('x-cache')).toBe('BYPASS');
  expect(((await ok.json()) as any).result.map((r: any) => r.id)).toEqual(['only']);
  const denied = await fetch(`${base}${QUERY}`);
  expect(denied.status).toBe(401);
  expect(((await denied.json()) as any).error.code).toBe('unauthorized');
  const head = await fetch(`${base}${QUERY}`, { method: 'HEAD', headers: { 'X-API-KEY': KEY } });
  expect(head.status).toBe(200);
  expect(await head.text()).toBe('');
  expect((await fetch(`${base}/logs/health`)).status).toBe(200);
  // A POST's JSON body reaches the handler whole (a caller's SQL, refused: the endpoint is not sandboxable).
  const post = await fetch(`${base}${QUERY}`, { method: 'POST', headers: { 'X-API-KEY': KEY, 'Content-Type': 'application/json' }, body: '{"sql":"select 1"}' });
  expect([post.status, ((await post.json()) as any).error.param]).toEqual([400, 'sql']);
  const put = await fetch(`${base}${QUERY}`, { method: 'PUT', headers: { 'X-API-KEY': KEY } });
  expect(put.status).toBe(405);
  expect(put.headers.get('allow')).toBe('GET, HEAD, POST');
  const own = await fetch(`${base}/`);
  expect(await own.text()).toBe('my app');
}

/** Adds the app's own route, serves the app on a free port and checks the mounted handler. */
async function checkExpressApp(app: ReturnType<typeof express>) {
  app.get('/', (_req, res) => {
    res.send('my app');
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    await checkMounted(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('mounting', () => {
  it('Express: app.use(toNodeListener(handler)) with a base path; other routes pass through', async () => {
    const app = express();
    app.use(toNodeListener(createHandler(ep, { apiKeys: [KEY], basePath: '/logs' })));
    await checkExpressApp(app);
  });

  it('Express: app.use("/logs", listener) works too (the original URL is used)', async () => {
    const app = express();
    app.use('/logs', toNodeListener(createHandler(ep, { apiKeys: [KEY], basePath: '/logs' })));
    await checkExpressApp(app);
  });

  it("Express without a base path: only the handler's routes are taken, the rest reaches the app", async () => {
    const app = express();
    app.use(toNodeListener(createHandler(ep, { apiKeys: [KEY] })));
    app.get('/', (_req, res) => {
      res.send('my app');
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect(await (await fetch(`${base}/`)).text()).toBe('my app');
      expect((await fetch(`${base}/api/endpoints/logs.all?project=abc&project_tier=FREE`, { headers: { 'X-API-KEY': KEY } })).status).toBe(200);
      expect((await fetch(`${base}/api/endpoints/no.such`)).status).toBe(401);
      // Express's own 404 for paths that are not routes of the handler.
      expect((await fetch(`${base}/elsewhere`)).headers.get('content-type')).toMatch(/^text\/html/);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('Fastify: a catch-all route under the base path hands the raw request over', async () => {
    const app = Fastify();
    // Bodies are the handler's to read (ingest batches, a caller's SQL as JSON): Fastify would parse them first.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_request, _payload, done) => done(null));
    const listener = toNodeListener(createHandler(ep, { apiKeys: [KEY], basePath: '/logs' }));
    app.all('/logs/*', (request, reply) => {
      reply.hijack();
      listener(request.raw, reply.raw);
    });
    app.get('/', async () => 'my app');
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      await checkMounted(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`);
    } finally {
      await app.close();
    }
  });

  it('Hono on @hono/node-server: the fetch handler is a Hono handler as it is', async () => {
    const handler = createHandler(ep, { apiKeys: [KEY], basePath: '/logs' });
    const app = new Hono();
    app.all('/logs/*', (c) => handler(c.req.raw));
    app.get('/', (c) => c.text('my app'));
    const server: ServerType = await new Promise((resolve) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
    });
    try {
      await checkMounted(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
