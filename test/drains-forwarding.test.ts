import { readFileSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEndpoints, DrainLog, openDrains, supabasePreset, type Drains, type DrainsOptions, type Endpoints } from '../src/index';
import { decodeLogsRequest } from '../src/ingest/otlp-proto';
import { main } from '../src/cli/main';
import { createHandler } from '../src/http/create-handler';
import { Http2Sender } from '../src/drains/http2-sender';
import { drainReceiver } from './support/drain-receiver';
import { memoryIO } from './support/cli';
import { tempDir } from './support/log-files';

/** A gate a held answer waits on. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

const AT = '2026-11-29T10:00:00';
const MICROS = Date.parse(`${AT}Z`) * 1000;
/** Events as Vector sends GoTrue's, each at AT + i µs. */
function authEvents(from: number, count: number): object[] {
  return Array.from({ length: count }, (_, k) => {
    const i = from + k;
    return { id: `e${i}`, timestamp: `${AT}.${String(i).padStart(6, '0')}Z`, message: `line ${i}`, metadata: { level: i % 2 ? 'error' : 'info', status: 200 + i } };
  });
}

describe('events forwarded to drains', () => {
  let tmp: ReturnType<typeof tempDir>;
  let ep: Endpoints;
  let drains: Drains | undefined;
  let sink: Awaited<ReturnType<typeof drainReceiver>>;
  const sleeps: number[] = [];
  const warnings: string[] = [];

  async function start(options: Partial<DrainsOptions> = {}): Promise<Drains> {
    const log = options.log ?? new DrainLog();
    ep = await createEndpoints({ ...supabasePreset, storage: { dataDir: tmp.dir }, segmentKeeper: log });
    drains = await openDrains({
      dataDir: tmp.dir,
      sources: ep.sources,
      log,
      // Backoff is recorded, never waited for.
      sleep: async (ms) => void sleeps.push(ms),
      onWarning: (w) => warnings.push(w.message),
      ...options,
    });
    return drains;
  }

  async function stop(): Promise<void> {
    drains?.close();
    drains = undefined;
    await ep.close();
  }

  async function drainOf(type: string, config: object, lql = '~".*?"', source = 'gotrue.logs.prod') {
    const drain = await drains!.store.create({ name: `${type} drain`, description: '', type, config, metadata: { type: 'log-drain' } });
    await drains!.store.addRule({ backend_id: drain.id, lql_string: lql, source_id: drains!.store.source(source).logflare.id });
    return drain;
  }

  beforeEach(async () => {
    tmp = tempDir('le-drains-fwd-');
    sink = await drainReceiver();
    sleeps.length = 0;
    warnings.length = 0;
  });
  afterEach(async () => {
    await stop();
    await sink.close();
    tmp.cleanup();
  });

  it('webhook: every event ingested after the drain was made, none from before, as a JSON array (µs timestamps) in batches of 250, gzip and headers as configured', async () => {
    await start();
    await ep.ingest('gotrue.logs.prod', authEvents(0, 2));
    await drainOf('webhook', { url: `${sink.url}/hook`, gzip: true, headers: { 'X-Token': 'hook-secret' } });
    await ep.ingest('gotrue.logs.prod', authEvents(2, 600));
    // Another source, no rule: not forwarded.
    await ep.ingest('postgres.logs', [{ message: 'not drained' }]);
    await drains!.idle();
    expect(sink.received.map((r) => [r.method, r.url, r.headers['content-type'], r.headers['content-encoding'], r.headers['x-token']])).toEqual(
      Array(3).fill(['POST', '/hook', 'application/json', 'gzip', 'hook-secret']),
    );
    const batches = sink.received.map((_, i) => sink.json(i) as Record<string, unknown>[]);
    expect(batches.map((b) => b.length)).toEqual([250, 250, 100]);
    expect(batches[0]![0]).toEqual({ id: 'e2', timestamp: MICROS + 2, event_message: 'line 2', metadata: { level: 'info', status: 202 } });
    expect(Object.keys(batches[0]![0]!)).toEqual(['id', 'timestamp', 'event_message', 'metadata']);
    expect(batches.flat().map((e) => e.id)).toEqual(Array.from({ length: 600 }, (_, k) => `e${k + 2}`));
    expect(drains!.stats()).toEqual([expect.objectContaining({ sent: 600, dropped: 0, failures: 0, backlogBytes: 0 })]);
  });

  it('webhook with http "http2": sent over HTTP/2 (prior knowledge on an http URL), the same batches, gzip and headers; HTTP/1.1 for "http1"; a 503 over HTTP/2 is retried', async () => {
    const h2 = await drainReceiver({ http2: true });
    try {
      await start();
      h2.answer((i) => (i === 0 ? 503 : 200));
      await drainOf('webhook', { url: `${h2.url}/hook?x=1`, http: 'http2', gzip: true, headers: { 'X-Token': 'hook-secret', Connection: 'keep-alive' } });
      await drainOf('webhook', { url: `${sink.url}/hook`, http: 'http1', gzip: false, headers: {} });
      await ep.ingest('gotrue.logs.prod', authEvents(0, 300));
      await drains!.idle();
      expect(h2.received.map((r) => [r.httpVersion, r.method, r.url, r.headers['content-type'], r.headers['content-encoding'], r.headers['x-token']])).toEqual(
        Array(3).fill(['2.0', 'POST', '/hook?x=1', 'application/json', 'gzip', 'hook-secret']),
      );
      // The first batch again after its 503, then the rest: each event taken once.
      expect(h2.webhookIds()).toEqual([...authEvents(0, 250), ...authEvents(0, 300)].map((e) => (e as { id: string }).id));
      expect((h2.json(2) as unknown[])[0]).toEqual({ id: 'e250', timestamp: MICROS + 250, event_message: 'line 250', metadata: { level: 'info', status: 450 } });
      expect(sink.received.map((r) => r.httpVersion)).toEqual(['1.1', '1.1']);
      expect(sink.webhookIds()).toEqual(authEvents(0, 300).map((e) => (e as { id: string }).id));
      expect(drains!.stats().map((d) => [d.sent, d.failures])).toEqual([
        [300, 1],
        [300, 0],
      ]);
    } finally {
      await h2.close();
    }
  });

  it('onIngested is told each durable batch as stored; one that throws (or a segment keeper that does) never fails the ingest; one that is no function (or a segment keeper without its methods) is refused', async () => {
    const told: string[] = [];
    const throwing = await createEndpoints({
      ...supabasePreset,
      storage: { dataDir: tmp.path('hook') },
      onIngested: (source, lines) => {
        told.push(`${source} ${Buffer.from(lines).toString('utf8')}`);
        throw new Error('hook failed');
      },
      // A keeper that fails when told keeps neither the ingest nor onIngested from going on.
      segmentKeeper: {
        attach: async () => undefined,
        appended: () => {
          throw new Error('keeper failed');
        },
        releasing: async () => undefined,
      },
    });
    try {
      expect(await throwing.ingest('gotrue.logs.prod', authEvents(1, 1))).toEqual({ ingested: 1 });
      expect(told).toEqual([`authLogs ${JSON.stringify({ id: 'e1', timestamp: `${AT}.000001Z`, event_message: 'line 1', metadata: { level: 'error', status: 201 } })}\n`]);
    } finally {
      await throwing.close();
    }
    await expect(createEndpoints({ ...supabasePreset, onIngested: 'drains' as never })).rejects.toMatchObject({ code: 'invalid_option', option: 'onIngested' });
    await expect(createEndpoints({ ...supabasePreset, segmentKeeper: { attach: async () => undefined } as never })).rejects.toMatchObject({ code: 'invalid_option', option: 'segmentKeeper' });
    // The suite's own instance, so afterEach has one to close.
    await start();
  });

  it('a rule with LQL forwards only the events it matches', async () => {
    await start();
    await drainOf('webhook', { url: sink.url }, 'm.level:error');
    await ep.ingest('gotrue.logs.prod', authEvents(0, 6));
    await drains!.idle();
    expect((sink.json(0) as { id: string }[]).map((e) => e.id)).toEqual(['e1', 'e3', 'e5']);
  });

  it("datadog: the v2 intake JSON with DD-API-KEY, gzip, to the region's URL or the override (LOG_ENDPOINTS_DATADOG_URL)", async () => {
    await start({ datadogUrl: `${sink.url}/api/v2/logs` });
    await drainOf('datadog', { api_key: 'dd-key', region: 'EU' });
    await ep.ingest('gotrue.logs.prod', authEvents(1, 1));
    await drains!.idle();
    const [request] = sink.received;
    expect([request!.url, request!.headers['dd-api-key'], request!.headers['content-encoding'], request!.headers['content-type']]).toEqual(['/api/v2/logs', 'dd-key', 'gzip', 'application/json']);
    expect(sink.json(0)).toEqual([
      {
        message: `${AT}.000001Z line 1`,
        ddsource: 'Supabase',
        service: 'gotrue.logs.prod',
        data: { id: 'e1', timestamp: MICROS + 1, event_message: 'line 1', metadata: { level: 'error', status: 201 } },
      },
    ]);
  });

  it("loki: the push API's JSON, one stream per source, ns timestamps, fields flattened as strings, Basic auth, gzip", async () => {
    await start();
    await drainOf('loki', { url: `${sink.url}/loki/api/v1/push`, username: 'user', password: 'pw', headers: { 'X-Scope-OrgID': 'tenant' } });
    await ep.ingest('gotrue.logs.prod', authEvents(1, 2));
    await drains!.idle();
    const [request] = sink.received;
    expect([request!.url, request!.headers.authorization, request!.headers['x-scope-orgid'], request!.headers['content-encoding']]).toEqual([
      '/loki/api/v1/push',
      `Basic ${Buffer.from('user:pw').toString('base64')}`,
      'tenant',
      'gzip',
    ]);
    expect(sink.json(0)).toEqual({
      streams: [
        {
          stream: { source: 'supabase', service: 'gotrue.logs.prod' },
          values: [
            [String((MICROS + 1) * 1000), 'line 1', { id: 'e1', 'metadata.level': 'error', 'metadata.status': '201' }],
            [String((MICROS + 2) * 1000), 'line 2', { id: 'e2', 'metadata.level': 'info', 'metadata.status': '202' }],
          ],
        },
      ],
    });
  });

  it('otlp: an ExportLogsServiceRequest in protobuf, service.name the source, time_unix_nano, the message as body, the other fields as attributes', async () => {
    await start();
    await drainOf('otlp', { endpoint: `${sink.url}/v1/logs`, protocol: 'http/protobuf', gzip: true });
    await ep.ingest('gotrue.logs.prod', authEvents(1, 1));
    await drains!.idle();
    const [request] = sink.received;
    expect([request!.url, request!.headers['content-type'], request!.headers['content-encoding']]).toEqual(['/v1/logs', 'application/x-protobuf', 'gzip']);
    const nanos = String(BigInt(MICROS + 1) * 1000n);
    expect(decodeLogsRequest(request!.body)).toEqual({
      resourceLogs: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'gotrue.logs.prod' } }] },
          scopeLogs: [
            {
              scope: { name: 'log-endpoints' },
              logRecords: [
                {
                  timeUnixNano: nanos,
                  observedTimeUnixNano: nanos,
                  body: { stringValue: 'line 1' },
                  attributes: [
                    { key: 'id', value: { stringValue: 'e1' } },
                    { key: 'metadata.level', value: { stringValue: 'error' } },
                    { key: 'metadata.status', value: { intValue: '201' } },
                  ],
                },
              ],
            },
          ],
        },
      ],
    });
  });

  it('a receiver that is down: ingest is answered at once, the batch is retried with backoff, and every event arrives once', async () => {
    await start();
    await drainOf('webhook', { url: sink.url });
    const held = gate();
    // The first attempt hangs until the test lets go, the next two fail, then the receiver is back.
    sink.answer((i) => (i === 0 ? held.opened.then(() => 503) : i < 3 ? 500 : 200));
    await ep.ingest('gotrue.logs.prod', authEvents(0, 10));
    await sink.next(1);
    // Acknowledged while the first attempt is still unanswered: more ingest is not held up either.
    await ep.ingest('gotrue.logs.prod', authEvents(10, 5));
    held.open();
    await drains!.idle();
    expect(sleeps).toEqual([1000, 2000, 4000]);
    const ids = sink.received.slice(3).flatMap((_, i) => (sink.json(i + 3) as { id: string }[]).map((e) => e.id));
    expect(ids).toEqual(Array.from({ length: 15 }, (_, k) => `e${k}`));
    expect(drains!.stats()[0]).toMatchObject({ sent: 15, dropped: 0, failures: 3, lastError: null });
    expect(warnings).toEqual(['Log drain webhook drain (webhook): the receiver answered 503; retrying with backoff.']);
  });

  it('a batch is retried until the receiver takes it, whatever the attempts; one it refuses (4xx) is given up at once, counted and told', async () => {
    await start();
    await drainOf('webhook', { url: sink.url });
    // Twelve failures (more than any bound on attempts would allow), then the receiver takes it.
    sink.answer((i) => (i < 12 ? 500 : 200));
    await ep.ingest('gotrue.logs.prod', authEvents(0, 4));
    await drains!.idle();
    expect(sink.received).toHaveLength(13);
    expect(sleeps).toEqual([1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000, 60000, 60000, 60000]);
    expect(drains!.stats()[0]).toMatchObject({ sent: 4, dropped: 0, failures: 12, lastError: null });
    sink.answer(() => 400);
    await ep.ingest('gotrue.logs.prod', authEvents(4, 2));
    await drains!.idle();
    expect(sink.received).toHaveLength(14);
    expect(drains!.stats()[0]).toMatchObject({ sent: 4, dropped: 2, failures: 13, lastError: 'the receiver answered 400' });
    expect(warnings.filter((w) => w.includes('dropped'))).toEqual(['Log drain webhook drain (webhook): dropped 2 events (the receiver answered 400); 2 dropped in all.']);
    // The refused batch is passed: the next one goes.
    sink.answer(() => 200);
    await ep.ingest('gotrue.logs.prod', authEvents(6, 1));
    await drains!.idle();
    expect(sink.webhookIds().slice(-1)).toEqual(['e6']);
  });

  it('a failing drain is named in /health (still 200) with its backlog, counted on /metrics, until a batch goes through', async () => {
    const retry = gate();
    await start({ sleep: () => retry.opened });
    await drainOf('webhook', { url: sink.url });
    const handler = createHandler(ep, { apiKeys: ['k'], drains: drains! });
    const get = async (path: string) => {
      const response = await handler(new Request(`http://analytics:4000${path}`, { headers: { 'X-API-KEY': 'k' } }));
      return { status: response.status, text: await response.text() };
    };
    sink.answer((i) => (i === 0 ? 500 : 200));
    await ep.ingest('gotrue.logs.prod', authEvents(0, 2));
    await sink.next(1);
    await until(() => (drains!.stats()[0]!.failures === 1 ? true : undefined));
    const backlog = drains!.stats()[0]!.backlogBytes;
    expect(backlog).toBeGreaterThan(0);
    expect(JSON.parse((await get('/health')).text)).toEqual({ status: 'ok', degraded: ['drains'], drains: [{ id: 1, type: 'webhook', backlogBytes: backlog, dropped: 0 }] });
    const metrics = (await get('/metrics')).text;
    expect(metrics).toContain('log_endpoints_drain_failures_total{drain="1",name="webhook drain",type="webhook"} 1\n');
    expect(metrics).toContain(`log_endpoints_drain_backlog_bytes{drain="1",name="webhook drain",type="webhook"} ${backlog}\n`);
    retry.open();
    await ep.ingest('gotrue.logs.prod', authEvents(2, 3));
    await drains!.idle();
    expect(await get('/health')).toEqual({ status: 200, text: '{"status":"ok"}' });
    expect((await get('/metrics')).text).toContain('log_endpoints_drain_sent_events_total{drain="1",name="webhook drain",type="webhook"} 5\n');
    expect(drains!.stats()[0]).toMatchObject({ backlogBytes: 0 });
  });

  it('a deleted drain gets nothing more; drains and rules are kept across a restart, and forward what is ingested after it', async () => {
    await start();
    const kept = await drainOf('webhook', { url: `${sink.url}/kept` });
    const gone = await drainOf('webhook', { url: `${sink.url}/gone` });
    await drains!.store.remove(gone.token);
    await ep.ingest('gotrue.logs.prod', authEvents(0, 1));
    await drains!.idle();
    expect(sink.received.map((r) => r.url)).toEqual(['/kept']);
    await stop();

    await start();
    expect(drains!.store.list().map((d) => d.token)).toEqual([kept.token]);
    await ep.ingest('gotrue.logs.prod', authEvents(1, 1));
    await drains!.idle();
    expect(sink.received.map((r) => r.url)).toEqual(['/kept', '/kept']);
    expect((sink.json(1) as { id: string }[]).map((e) => e.id)).toEqual(['e1']);
  });
});

describe('serve --supabase with log drains', () => {
  it("takes Studio's calls with the private token and forwards what Vector sends, Datadog to LOG_ENDPOINTS_DATADOG_URL", async () => {
    const tmp = tempDir('le-drains-serve-');
    const sink = await drainReceiver();
    const env = { LOGFLARE_PRIVATE_ACCESS_TOKEN: 'private', LOGFLARE_PUBLIC_ACCESS_TOKEN: 'public', LOG_ENDPOINTS_DATADOG_URL: `${sink.url}/dd` };
    const { io, out, signal } = memoryIO(env);
    try {
      const done = main(['serve', '--supabase', '--data-dir', tmp.dir, '--port', '0'], io, 'test');
      const url = await until(() => /Listening on (http:\/\/\S+)/.exec(out.stdout)?.[1]);
      const studio = (method: string, path: string, body?: object) =>
        fetch(`${url}${path}`, { method, headers: { Authorization: 'Bearer private', 'Content-Type': 'application/json' }, body: body && JSON.stringify(body) });
      const created = await studio('POST', '/api/backends', { name: 'dd', description: '', type: 'datadog', config: { api_key: 'k', region: 'US1' }, metadata: { type: 'log-drain' } });
      expect(created.status).toBe(201);
      const drain = (await created.json()) as { id: number };
      const sources = (await (await studio('GET', '/api/sources')).json()) as { id: string; name: string }[];
      const gotrue = sources.find((s) => s.name.toLowerCase() === 'gotrue.logs.prod')!;
      expect((await studio('POST', '/api/rules', { backend_id: drain.id, lql_string: '~".*?"', source_id: gotrue.id })).status).toBe(201);
      const ingested = await fetch(`${url}/api/logs?source_name=gotrue.logs.prod`, {
        method: 'POST',
        headers: { 'X-API-KEY': 'public', 'Content-Type': 'application/json' },
        body: JSON.stringify(authEvents(7, 1)),
      });
      expect(ingested.status).toBe(200);
      await sink.next(1);
      expect(sink.received[0]!.url).toBe('/dd');
      expect(sink.json(0)).toEqual([expect.objectContaining({ ddsource: 'Supabase', service: 'gotrue.logs.prod', message: `${AT}.000007Z line 7` })]);
      expect((await studio('GET', '/api/backends?metadata[type]=log-drain').then((r) => r.json())) as unknown[]).toHaveLength(1);
      signal();
      expect(await done).toBe(0);
    } finally {
      await sink.close();
      tmp.cleanup();
    }
  });
});

describe('serve with a drains file that does not read', () => {
  it('stops at start naming the file, and leaves it as it is', async () => {
    const tmp = tempDir('le-drains-bad-');
    try {
      writeFileSync(tmp.path('drains.json'), '{"version": 2}');
      const { io, out } = memoryIO({ LOGFLARE_PRIVATE_ACCESS_TOKEN: 'private' });
      const code = await main(['serve', '--supabase', '--data-dir', tmp.dir, '--port', '0'], io, 'test');
      expect(code).not.toBe(0);
      expect(out.stderr).toContain(`The drains file ${tmp.path('drains.json')} is not one this version writes (version 1); fix or remove it.`);
      expect(out.stdout).not.toContain('Listening on');
      expect(readFileSync(tmp.path('drains.json'), 'utf8')).toBe('{"version": 2}');
    } finally {
      tmp.cleanup();
    }
  });
});

/** Waits, a turn of the event loop at a time, until `read` gives a value (the server prints its address once it listens). */
async function until<T>(read: () => T | undefined): Promise<T> {
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe("a webhook's HTTP/2 requests", () => {
  const request = (url: string) => ({ url, headers: { 'Content-Type': 'application/json' }, body: Buffer.from('[]'), http: 'http2' as const });

  it('a receiver that is not there is a failure at each attempt (the forwarder retries it); another receiver is reached meanwhile', async () => {
    const sender = new Http2Sender();
    // A port that was just closed: nothing listens there (reopening it would race other processes for it).
    const gone = await drainReceiver({ http2: true });
    await gone.close();
    const receiver = await drainReceiver({ http2: true });
    try {
      await expect(sender.send(request(`${gone.url}/hook`))).rejects.toThrow(/ECONNREFUSED/);
      await expect(sender.send(request(`${gone.url}/hook`))).rejects.toThrow(/ECONNREFUSED/);
      await expect(sender.send(request(`${receiver.url}/hook`))).resolves.toBe(200);
      expect(receiver.received.map((r) => r.httpVersion)).toEqual(['2.0']);
    } finally {
      sender.close();
      await receiver.close();
    }
  });

  it('an answer that does not come within the timeout is a failure; a receiver that ends its session is connected to again', async () => {
    const sender = new Http2Sender({ timeoutMs: 50 });
    const receiver = await drainReceiver({ http2: true });
    let release!: () => void;
    receiver.answer((i) => (i === 0 ? new Promise<number>((resolve) => (release = () => resolve(200))) : 204));
    try {
      await expect(sender.send(request(`${receiver.url}/slow`))).rejects.toThrow(/closed before its answer/);
      release();
      await receiver.dropSessions();
      await expect(sender.send(request(`${receiver.url}/next`))).resolves.toBe(204);
      expect(receiver.received.map((r) => r.url)).toEqual(['/slow', '/next']);
    } finally {
      sender.close();
      await receiver.close();
    }
  });
});
