import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultAssetsDir } from '../src/dashboard/dashboard-assets';
import { DASHBOARD_CSP } from '../src/http/serve-dashboard';
import { createHandler, type HandlerOptions } from '../src/http';
import { createEndpoints, type Endpoints } from '../src/index';
import { toNodeListener } from '../src/node';
import { listen } from './support/http';
import { edgeEvent, functionEvent, tempDir, writeLines } from './support/log-files';

const NOW = '2026-11-21T12:00:00Z';
const KEY = 'dash-key';
const JS = 'console.log("page");\n';
const CSS = 'body{margin:0}\n';
const tmp = tempDir('le-dashboard-');
let ep: Endpoints;

/** A stand-in page build: the serving side only needs two files. */
function fakeBuild(name: string, js = JS, css = CSS): string {
  const dir = tmp.path(name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'dashboard.js'), js);
  writeFileSync(join(dir, 'dashboard.css'), css);
  return dir;
}

function handlerWith(options: Partial<HandlerOptions> = {}) {
  return createHandler(ep, { apiKeys: [KEY], dashboard: { assetsDir: fakeBuild('build') }, ...options });
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);
const sha384 = (text: string) => `sha384-${createHash('sha384').update(text).digest('base64')}`;

beforeAll(async () => {
  writeLines(tmp.path('edge', 'a.ndjson'), [edgeEvent({ project: 'abc', timestamp: '2026-11-21T11:00:00Z' })]);
  writeLines(tmp.path('fn', 'a.ndjson'), [functionEvent({ project: 'abc', functionId: 'f-1', timestamp: '2026-11-21T11:00:00Z', ms: 5 })]);
  ep = await createEndpoints({
    sources: { edgeLogs: tmp.path('edge', '*.ndjson'), functionEdgeLogs: tmp.path('fn', '*.ndjson') },
    now: () => new Date(NOW),
  });
});

afterAll(async () => {
  await ep?.close();
  tmp.cleanup();
});

describe('the dashboard page', () => {
  it('is served at /, /dashboard and /dashboard/ without a key, revalidated on every load, under a strict CSP', async () => {
    const handler = handlerWith();
    for (const path of ['/', '/dashboard', '/dashboard/']) {
      const response = await handler(new Request(`http://localhost${path}`));
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(response.headers.get('cache-control')).toBe('no-cache');
      expect(response.headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
      expect(response.headers.get('etag')).toMatch(/^"[\w-]{22}"$/);
      expect(await response.text()).toMatch(/^<!doctype html>/);
    }
    expect(DASHBOARD_CSP).toBe("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
  });

  it('has no inline script, no style attribute and no event-handler attribute (what the CSP would block)', async () => {
    const html = await (await handlerWith()(new Request('http://localhost/'))).text();
    const scripts = html.match(/<script\b[^>]*>[\s\S]*?<\/script>/g) ?? [];
    expect(scripts).toHaveLength(1);
    for (const script of scripts) expect(script).toMatch(/^<script defer src="[^"]+" integrity="[^"]+"><\/script>$/);
    expect(html).not.toMatch(/<style\b/i);
    expect(html).not.toMatch(/\sstyle=/i);
    expect(html).not.toMatch(/\son[a-z]+=/i);
    expect(html).not.toMatch(/https?:\/\//);
  });

  it('names its assets by a hash of their bytes, with Subresource Integrity', async () => {
    const html = await (await handlerWith()(new Request('http://localhost/'))).text();
    expect(html).toContain(`<script defer src="/dashboard/assets/dashboard.${sha256(JS)}.js" integrity="${sha384(JS)}"></script>`);
    expect(html).toContain(`<link rel="stylesheet" href="/dashboard/assets/dashboard.${sha256(CSS)}.css" integrity="${sha384(CSS)}">`);
    expect(html).toContain('<body data-base="" data-auth="key">');

    const changed = createHandler(ep, { apiKeys: [KEY], dashboard: { assetsDir: fakeBuild('changed', `${JS}// one more line\n`) } });
    const other = await (await changed(new Request('http://localhost/'))).text();
    expect(other).not.toContain(sha256(JS));
    expect(other).toContain(sha256(CSS));
  });

  it('serves the assets with a year-long immutable lifetime, without a key', async () => {
    const handler = handlerWith();
    const js = await handler(new Request(`http://localhost/dashboard/assets/dashboard.${sha256(JS)}.js`));
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(js.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await js.text()).toBe(JS);
    const css = await handler(new Request(`http://localhost/dashboard/assets/dashboard.${sha256(CSS)}.css`));
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(await css.text()).toBe(CSS);
  });

  it('answers 404 for any other asset name (an old hash, the unhashed file, a path), with or without a key', async () => {
    const handler = handlerWith();
    for (const name of ['dashboard.js', 'dashboard.0000000000000000.js', `dashboard.${sha256(JS)}.css`, '..%2Fpackage.json', 'x']) {
      for (const headers of [{}, { 'X-API-KEY': KEY }] as Array<Record<string, string>>) {
        const response = await handler(new Request(`http://localhost/dashboard/assets/${name}`, { headers }));
        expect(response.status, name).toBe(404);
        expect(((await response.json()) as any).error.code).toBe('not_found');
        expect(response.headers.get('cache-control')).toBe('no-store');
      }
    }
  });

  it('answers 304 to a matching If-None-Match, for the page and the assets', async () => {
    const handler = handlerWith();
    const page = await handler(new Request('http://localhost/'));
    const tag = page.headers.get('etag')!;
    const again = await handler(new Request('http://localhost/', { headers: { 'If-None-Match': `W/"other", ${tag}` } }));
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect((await handler(new Request('http://localhost/', { headers: { 'If-None-Match': '"stale"' } }))).status).toBe(200);

    const assetUrl = `http://localhost/dashboard/assets/dashboard.${sha256(CSS)}.css`;
    const asset = await handler(new Request(assetUrl));
    expect((await handler(new Request(assetUrl, { headers: { 'If-None-Match': asset.headers.get('etag')! } }))).status).toBe(304);
  });

  it('answers HEAD like GET without a body, and refuses other methods with 405', async () => {
    const handler = handlerWith();
    const head = await handler(new Request('http://localhost/dashboard', { method: 'HEAD' }));
    expect(head.status).toBe(200);
    expect(Number(head.headers.get('content-length'))).toBeGreaterThan(1000);
    expect(await head.text()).toBe('');
    const post = await handler(new Request('http://localhost/', { method: 'POST' }));
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('lives under the base path: page, asset links, and the base the script calls the API under', async () => {
    const handler = handlerWith({ basePath: '/logs' });
    for (const path of ['/logs', '/logs/', '/logs/dashboard']) {
      expect((await handler(new Request(`http://localhost${path}`))).status, path).toBe(200);
    }
    const html = await (await handler(new Request('http://localhost/logs'))).text();
    expect(html).toContain('<body data-base="/logs" data-auth="key">');
    expect(html).toContain(`src="/logs/dashboard/assets/dashboard.${sha256(JS)}.js"`);
    expect((await handler(new Request(`http://localhost/logs/dashboard/assets/dashboard.${sha256(JS)}.js`))).status).toBe(200);
    expect((await handler(new Request('http://localhost/dashboard'))).status).toBe(404);
  });

  it('tells the page not to ask for a key when the handler serves without keys', async () => {
    const handler = createHandler(ep, { auth: false, dashboard: { assetsDir: fakeBuild('open') } });
    expect(await (await handler(new Request('http://localhost/'))).text()).toContain('<body data-base="" data-auth="none">');
  });

  it('still needs a key for every data request', async () => {
    const handler = handlerWith();
    for (const path of ['/api/endpoints', '/api/catalog', '/api/endpoints/logs.all?project=abc&project_tier=PRO']) {
      expect((await handler(new Request(`http://localhost${path}`))).status, path).toBe(401);
    }
  });

  it('is off by default: / and /dashboard are unknown routes (401 without a key, 404 with one)', async () => {
    const handler = createHandler(ep, { apiKeys: [KEY] });
    expect(handler.dashboard).toBe(false);
    for (const path of ['/', '/dashboard', `/dashboard/assets/dashboard.${sha256(JS)}.js`]) {
      expect((await handler(new Request(`http://localhost${path}`))).status, path).toBe(401);
      expect((await handler(new Request(`http://localhost${path}`, { headers: { 'X-API-KEY': KEY } }))).status, path).toBe(404);
    }
    expect(createHandler(ep, { apiKeys: [KEY], dashboard: false }).dashboard).toBe(false);
  });

  it('refuses to create a handler when the page is not built, saying how to build it', () => {
    const empty = tmp.path('empty');
    mkdirSync(empty, { recursive: true });
    expect(() => createHandler(ep, { apiKeys: [KEY], dashboard: { assetsDir: empty } })).toThrow(
      `log-endpoints: the dashboard page is not built (dashboard.js and dashboard.css missing in ${empty}). Build it with \`npm run build:dashboard\``,
    );
  });

  it('finds the build in dist/dashboard of the package it runs from', () => {
    const root = fileURLToPath(new URL('..', import.meta.url));
    expect(defaultAssetsDir()).toBe(join(root, 'dist', 'dashboard'));
  });

  it('as Express-style middleware: the page is the handler’s when on, the app’s paths when off', async () => {
    const nextCalls: string[] = [];
    for (const dashboard of [true, false]) {
      const listener = toNodeListener(createHandler(ep, { apiKeys: [KEY], ...(dashboard ? { dashboard: { assetsDir: fakeBuild('mw') } } : {}) }));
      const server = await listen((req, res) =>
        listener(req, res, () => {
          nextCalls.push(`${dashboard} ${req.url}`);
          res.end('app');
        }),
      );
      try {
        const page = await fetch(`${server.url}/dashboard`);
        expect(await page.text()).toMatch(dashboard ? /^<!doctype html>/ : /^app$/);
      } finally {
        await server.close();
      }
    }
    expect(nextCalls).toEqual(['false /dashboard']);
  });
});

describe('GET /api/catalog', () => {
  it('lists the projects of the data for the pickers, with a key', async () => {
    const handler = createHandler(ep, { apiKeys: [KEY] });
    const response = await handler(new Request('http://localhost/api/catalog', { headers: { 'X-API-KEY': KEY } }));
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.json()).toEqual({ result: await ep.catalog() });
    expect((await ep.catalog()).projects).toEqual([{ project: 'abc', requests: 1, invocations: 1, functionIds: ['f-1'], lastSeen: '2026-11-21T11:00:00.000000Z' }]);
    const oneDay = await handler(new Request('http://localhost/api/catalog?days=1', { headers: { 'X-API-KEY': KEY } }));
    expect(((await oneDay.json()) as any).result.since).toBe('2026-11-20T12:00:00.000000Z');
    expect((await handler(new Request('http://localhost/api/catalog'))).status).toBe(401);
  });

  it('refuses a days value outside 1–90 with 400 naming the parameter', async () => {
    const handler = createHandler(ep, { apiKeys: [KEY] });
    for (const days of ['0', '91', '1.5', 'abc', '-1', '7&days=8', '1e1']) {
      const response = await handler(new Request(`http://localhost/api/catalog?days=${days}`, { headers: { 'X-API-KEY': KEY } }));
      expect(response.status, days).toBe(400);
      expect(((await response.json()) as any).error).toMatchObject({ code: 'invalid_parameter', param: 'days' });
    }
    const empty = await handler(new Request('http://localhost/api/catalog?days=', { headers: { 'X-API-KEY': KEY } }));
    expect(((await empty.json()) as any).result.since).toBe('2026-11-14T12:00:00.000000Z');
  });

  it('is in the OpenAPI document', async () => {
    const handler = createHandler(ep, { apiKeys: [KEY] });
    const doc = (await (await handler(new Request('http://localhost/api/openapi.json'))).json()) as any;
    expect(doc.paths['/api/catalog'].get.operationId).toBe('catalog');
    expect(doc.paths['/api/catalog'].get.parameters[0].name).toBe('days');
  });
});
