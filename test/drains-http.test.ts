import { afterAll, beforeAll, beforeEach, afterEach, describe, expect, it } from 'vitest';
import { createEndpoints, openDrains, supabasePreset, type Drains, type Endpoints } from '../src/index';
import { createHandler, type FetchHandler } from '../src/http/create-handler';
import { tempDir } from './support/log-files';

const PRIVATE = 'private-token';
const PUBLIC = 'public-token';
/** The feeds of self-hosted Vector as Studio's Log Drains page matches them (lower-cased). */
const VECTOR_SOURCES = [
  'cloudflare.logs.prod',
  'postgres.logs',
  'deno-relay-logs',
  'deno-subhosting-events',
  'gotrue.logs.prod',
  'realtime.logs.prod',
  'storage.logs.prod.2',
  'postgrest.logs.prod',
  'pgbouncer.logs.prod',
];
/** Studio's create body for a webhook drain, as its form sends it. */
const STUDIO_WEBHOOK = {
  name: 'My webhook',
  description: 'to the collector',
  type: 'webhook',
  config: { url: 'http://collector:8080/logs', http: 'http2', gzip: true, headers: { Authorization: 'Bearer hook-secret', 'X-Team': 'ops' } },
  metadata: { type: 'log-drain' },
};

describe("Studio's Log Drains calls", () => {
  let ep: Endpoints;
  let tmp: ReturnType<typeof tempDir>;
  let drains: Drains;
  let handler: FetchHandler;

  beforeAll(async () => {
    ep = await createEndpoints({ ...supabasePreset, sources: {} });
  });
  afterAll(() => ep.close());
  beforeEach(async () => {
    tmp = tempDir('le-drains-http-');
    drains = await openDrains({ dataDir: tmp.dir, sources: ep.sources, now: () => new Date('2026-11-29T10:00:00Z') });
    handler = createHandler(ep, { apiKeys: [PRIVATE], ingestKeys: [PUBLIC], drains });
  });
  afterEach(() => {
    drains.close();
    tmp.cleanup();
  });

  async function call(method: string, path: string, body?: unknown, token: string | null = PRIVATE): Promise<{ status: number; json: unknown; text: string }> {
    const headers: Record<string, string> = body === undefined ? {} : { 'Content-Type': 'application/json' };
    if (token !== null) headers.Authorization = `Bearer ${token}`;
    const response = await handler(new Request(`http://analytics:4000${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }));
    const text = await response.text();
    return { status: response.status, text, json: text && response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : null };
  }

  it('creates a drain as Studio does (backend, sources, one rule per Vector source) and lists it for the page', async () => {
    expect(await call('GET', '/api/backends?metadata[type]=log-drain')).toMatchObject({ status: 200, json: [] });
    const created = await call('POST', '/api/backends', STUDIO_WEBHOOK);
    expect(created.status).toBe(201);
    const drain = created.json as Record<string, unknown>;
    expect(drain).toEqual({
      id: 1,
      token: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'My webhook',
      description: 'to the collector',
      type: 'webhook',
      config: { url: 'http://collector:8080/logs', http: 'http2', gzip: true, headers: { Authorization: 'REDACTED', 'X-Team': 'REDACTED' } },
      metadata: { type: 'log-drain' },
      inserted_at: '2026-11-29T10:00:00.000Z',
      updated_at: '2026-11-29T10:00:00.000Z',
    });
    const sources = (await call('GET', '/api/sources')).json as { id: string; name: string }[];
    const vector = sources.filter((s) => VECTOR_SOURCES.includes(s.name.toLowerCase()));
    expect(vector.map((s) => s.name.toLowerCase()).sort()).toEqual([...VECTOR_SOURCES].sort());
    for (const source of vector) {
      const rule = await call('POST', '/api/rules', { backend_id: drain.id, lql_string: '~".*?"', source_id: source.id });
      expect(rule.status).toBe(201);
      expect(rule.json).toMatchObject({ backend_id: 1, lql_string: '~".*?"', source_id: source.id });
    }
    expect(drains.store.rules()).toHaveLength(9);
    const listed = await call('GET', '/api/backends?metadata%5Btype%5D=log-drain');
    expect(listed).toMatchObject({ status: 200, json: [drain] });
    // Another kind of backend is not a log drain.
    expect((await call('GET', '/api/backends?metadata[type]=other')).json).toEqual([]);
  });

  it('reads, edits (without metadata, secrets sent back redacted) and deletes one drain by its token', async () => {
    const drain = (await call('POST', '/api/backends', STUDIO_WEBHOOK)).json as { id: number; token: string; config: Record<string, unknown> };
    expect((await call('GET', `/api/backends/${drain.token}`)).json).toEqual(drain);
    // Studio's edit: metadata removed, the headers it shows as REDACTED left out.
    const edited = await call('PUT', `/api/backends/${drain.token}`, {
      name: 'Renamed',
      description: '',
      type: 'webhook',
      config: { url: 'http://collector:9090/logs', http: 'http1', gzip: false, headers: {} },
    });
    expect(edited.status).toBe(200);
    expect(edited.json).toMatchObject({
      name: 'Renamed',
      metadata: { type: 'log-drain' },
      config: { url: 'http://collector:9090/logs', headers: { Authorization: 'REDACTED', 'X-Team': 'REDACTED' } },
    });
    expect(drains.store.get(drain.token).config).toMatchObject({ headers: { Authorization: 'Bearer hook-secret', 'X-Team': 'ops' } });
    expect((await call('GET', '/api/backends?metadata[type]=log-drain')).json).toHaveLength(1);
    const deleted = await call('DELETE', `/api/backends/${drain.token}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await call('GET', '/api/backends?metadata[type]=log-drain')).json).toEqual([]);
    expect(await call('GET', `/api/backends/${drain.token}`)).toMatchObject({ status: 404, json: { error: { code: 'not_found' } } });
    // Gone for good: a new store over the data dir has none.
    const reopened = await openDrains({ dataDir: tmp.dir, sources: ep.sources });
    expect(reopened.store.list()).toEqual([]);
  });

  it('takes the four types and refuses the others Studio lists with a 400 naming the supported ones', async () => {
    const made = [
      { type: 'datadog', config: { api_key: 'dd', region: 'US5' } },
      { type: 'loki', config: { url: 'http://loki:3100/loki/api/v1/push', username: 'u', password: 'p', headers: {} } },
      { type: 'otlp', config: { endpoint: 'http://otel:4318/v1/logs', protocol: 'http/protobuf', gzip: true, headers: {} } },
    ];
    for (const { type, config } of made) expect((await call('POST', '/api/backends', { name: type, description: '', type, config, metadata: { type: 'log-drain' } })).status).toBe(201);
    for (const type of ['s3', 'sentry', 'axiom', 'last9', 'syslog']) {
      const refused = await call('POST', '/api/backends', { name: type, description: '', type, config: {}, metadata: { type: 'log-drain' } });
      expect(refused.status).toBe(400);
      expect(refused.json).toEqual({
        error: { code: 'invalid_parameter', param: 'type', status: 400, message: `The type "${type}" is not forwarded to by this server; the supported types are webhook, datadog, loki, otlp.` },
      });
    }
    const badConfig = await call('POST', '/api/backends', { ...STUDIO_WEBHOOK, config: { url: 'not a url' } });
    expect(badConfig).toMatchObject({ status: 400, json: { error: { code: 'invalid_parameter', param: 'config.url' } } });
    expect(await call('POST', '/api/backends', '[1,2]')).toMatchObject({ status: 400, json: { error: { code: 'invalid_body' } } });
    expect(drains.store.list()).toHaveLength(3);
  });

  it('refuses an unsupported rule with a 400 naming the supported LQL, keeping nothing', async () => {
    const drain = (await call('POST', '/api/backends', STUDIO_WEBHOOK)).json as { id: number };
    const source = ((await call('GET', '/api/sources')).json as { id: string }[])[0]!;
    const refused = await call('POST', '/api/rules', { backend_id: drain.id, lql_string: 'c:count(*) c:group_by(t::minute)', source_id: source.id });
    expect(refused).toMatchObject({ status: 400, json: { error: { code: 'invalid_parameter', param: 'lql_string' } } });
    expect((refused.json as { error: { message: string } }).error.message).toContain('Supported: ~".*?" (every event)');
    expect(await call('POST', '/api/rules', { backend_id: 42, lql_string: '~".*?"', source_id: source.id })).toMatchObject({ status: 400, json: { error: { param: 'backend_id' } } });
    expect(drains.store.rules()).toEqual([]);
  });

  it('needs the private token: the public ingest token and no token get 401 and change nothing', async () => {
    const drain = (await call('POST', '/api/backends', STUDIO_WEBHOOK)).json as { token: string };
    for (const token of [PUBLIC, null, 'wrong']) {
      expect((await call('GET', '/api/backends?metadata[type]=log-drain', undefined, token)).status).toBe(401);
      expect((await call('POST', '/api/backends', STUDIO_WEBHOOK, token)).status).toBe(401);
      expect((await call('PUT', `/api/backends/${drain.token}`, { name: 'x' }, token)).status).toBe(401);
      expect((await call('DELETE', `/api/backends/${drain.token}`, undefined, token)).status).toBe(401);
      expect((await call('POST', '/api/rules', { backend_id: 1, lql_string: '~".*?"', source_id: 'x' }, token)).status).toBe(401);
    }
    expect(drains.store.list()).toHaveLength(1);
    expect(drains.store.get(drain.token).name).toBe('My webhook');
    expect(drains.store.rules()).toEqual([]);
  });

  it('answers other methods with 405 and the allowed ones', async () => {
    const response = await handler(new Request('http://analytics:4000/api/backends', { method: 'DELETE', headers: { Authorization: `Bearer ${PRIVATE}` } }));
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD, POST');
  });
});
