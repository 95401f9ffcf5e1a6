import { existsSync, readdirSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { KEPT_DIR } from '../src/drains/drain-log';
import { decodeLogsRequest } from '../src/ingest/otlp-proto';
import { drainReceiver, type Received } from './support/drain-receiver';
import { serveWithDrains } from './support/drains-serve';
import { waitUntil } from './support/hang-guard';
import { tempDir } from './support/log-files';

/** `serve --supabase` with small segments (compaction takes one every few requests). */
const serve = (dataDir: string, env: Record<string, string> = {}) => serveWithDrains(dataDir, ['--wal-segment-bytes', '4096'], env);

/** What the test reads of an OTLP request: each record's `id` attribute. */
type OtlpRequest = { resourceLogs: { scopeLogs: { logRecords: { attributes: { key: string; value: { stringValue?: string } }[] }[] }[] }[] };

const ids = (prefix: string, from: number, to: number) => Array.from({ length: to - from }, (_, k) => `${prefix}${from + k}`);

describe('log drains deliver at least once', () => {
  const tmp = tempDir('le-drains-once-');
  let sink: Awaited<ReturnType<typeof drainReceiver>> | undefined;
  let server: Awaited<ReturnType<typeof serve>> | undefined;
  afterEach(async () => {
    await server?.kill();
    await sink?.close();
    tmp.cleanup();
  });

  it('every event ingested after the drain was made arrives, in order, across a receiver outage and a kill -9 with batches waiting and one in flight; the only repeats are that batch', async () => {
    sink = await drainReceiver();
    // What the receiver did with each request: taken (2xx), failed, or held (never answered: in flight at the kill).
    const outcome: ('taken' | 'failed' | 'held')[] = [];
    let mode: 'up' | 'down' | 'hold' = 'up';
    sink.answer((i) => {
      outcome[i] = mode === 'up' ? 'taken' : mode === 'down' ? 'failed' : 'held';
      return mode === 'up' ? 200 : mode === 'down' ? 503 : new Promise<number>(() => undefined);
    });
    const processed = () => sink!.received.flatMap((r, i) => (outcome[i] === 'failed' ? [] : (JSON.parse(r.body.toString('utf8')) as { id: string }[]).map((e) => e.id)));

    server = await serve(tmp.dir);
    await server.ingest('before', 0, 20);
    await server.drain('webhook', { url: `${sink.url}/hook`, http: 'http1', gzip: false, headers: {} }, 'hook');

    await server.ingest('e', 0, 100);
    await sink.until(() => processed().includes('e99'));

    // An outage: every attempt fails for a while; ingest is answered 200 all along, and the events wait in the log.
    mode = 'down';
    await server.ingest('e', 100, 100);
    await sink.until(() => outcome.filter((o) => o === 'failed').length >= 2);
    mode = 'up';
    await sink.until(() => processed().includes('e199'));

    // A batch held in flight, more behind it (compacted out of the log meanwhile, so kept for the drain), then kill -9.
    mode = 'hold';
    await server.ingest('e', 200, 600);
    await sink.until(() => outcome.includes('held'));
    await waitUntil(() => existsSync(tmp.path('authLogs', KEPT_DIR)) && readdirSync(tmp.path('authLogs', KEPT_DIR)).length > 0);
    await server.kill();
    // The batch in flight (sent again, held again, should its request time out on a slow machine).
    const inFlight = sink.received.flatMap((r, i) => (outcome[i] === 'held' ? (JSON.parse(r.body.toString('utf8')) as { id: string }[]).map((e) => e.id) : []));
    expect(inFlight.length).toBeGreaterThan(0);

    mode = 'up';
    server = await serve(tmp.dir);
    await sink.until(() => processed().includes('e799'));
    await server.ingest('e', 800, 10);
    await sink.until(() => processed().includes('e809'));

    const got = processed();
    // At least once, nothing from before the drain.
    expect([...new Set(got)].sort()).toEqual(ids('e', 0, 810).sort());
    // In order: each event first arrives after the one ingested before it.
    expect([...new Set(got)]).toEqual(ids('e', 0, 810));
    // Repeats come from the crash window only: the batch in flight at the kill, sent once more after the restart.
    const counts = new Map<string, number>();
    for (const id of got) counts.set(id, (counts.get(id) ?? 0) + 1);
    const repeated = [...counts].filter(([, n]) => n > 1);
    expect(repeated.filter(([id, n]) => n - 1 > inFlight.filter((held) => held === id).length)).toEqual([]);
    expect(repeated.length).toBeLessThanOrEqual(250);
    expect(repeated.length).toBeGreaterThan(0);
  });

  it('each wire format (webhook, Datadog, Loki, OTLP) gets every event across a receiver outage and a kill -9, read back as its receiver decodes it', async () => {
    sink = await drainReceiver();
    let down = false;
    const failed = new Set<number>();
    sink.answer((i) => {
      if (down) failed.add(i);
      return down ? 503 : 200;
    });
    const failedAt = (path: string) => [...failed].some((i) => sink!.received[i]!.url === path);
    /** The event ids one receiver path took, as that format carries them (repeats kept). */
    const decoders: Record<string, (r: Received) => string[]> = {
      '/hook': (r) => (JSON.parse(r.body.toString('utf8')) as { id: string }[]).map((e) => e.id),
      '/dd': (r) => (JSON.parse(r.body.toString('utf8')) as { data: { id: string } }[]).map((e) => e.data.id),
      '/loki': (r) => (JSON.parse(r.body.toString('utf8')) as { streams: { values: [string, string, { id: string }][] }[] }).streams.flatMap((st) => st.values.map((v) => v[2].id)),
      '/otlp': (r) =>
        (decodeLogsRequest(r.body) as OtlpRequest).resourceLogs.flatMap((rl) =>
          rl.scopeLogs.flatMap((sl) => sl.logRecords.map((lr) => String(lr.attributes.find((a) => a.key === 'id')?.value.stringValue))),
        ),
    };
    const taken = (path: string) => sink!.received.flatMap((r, i) => (r.url === path && !failed.has(i) ? decoders[path]!(r) : []));
    const allTook = (last: string) => Object.keys(decoders).every((path) => taken(path).includes(last));

    const env = { LOG_ENDPOINTS_DATADOG_URL: `${sink.url}/dd` };
    server = await serve(tmp.dir, env);
    const configs: [string, object][] = [
      ['webhook', { url: `${sink.url}/hook`, http: 'http1', gzip: true, headers: {} }],
      ['datadog', { api_key: 'dd-key', region: 'US1' }],
      ['loki', { url: `${sink.url}/loki`, username: '', password: '', headers: {} }],
      ['otlp', { endpoint: `${sink.url}/otlp`, protocol: 'http/protobuf', gzip: true, headers: {} }],
    ];
    for (const [type, config] of configs) await server.drain(type, config);
    await server.ingest('w', 0, 100);
    await sink.until(() => allTook('w99'));
    // Every receiver down: the events wait in the log (some compacted out of it meanwhile, kept for the drains).
    down = true;
    await server.ingest('w', 100, 300);
    // Each drain tried and failed: the batch before it is taken and its cursor written.
    await sink.until(() => Object.keys(decoders).every(failedAt));
    await server.kill();

    down = false;
    server = await serve(tmp.dir, env);
    await server.ingest('w', 400, 10);
    await sink.until(() => allTook('w409'));
    for (const path of Object.keys(decoders)) {
      const got = taken(path);
      expect([path, [...new Set(got)].sort()]).toEqual([path, ids('w', 0, 410).sort()]);
      // Nothing was in flight and taken at the kill: each event arrived once.
      expect([path, got.length]).toEqual([path, 410]);
    }
  });
});
