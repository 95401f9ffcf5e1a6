import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { createHandler } from '../src/http';
import { createEndpoints, type Endpoints } from '../src/index';
import { copiesEndpoint } from './support/copies-endpoint';
import { bodyDigest, bodyKey, bodyKeyOfId, derivedId } from '../src/ingest/body-digest';
import { OFF_THREAD_BYTES } from '../src/ingest/parse-worker';
import { RECENT_BODIES } from '../src/managed/recent-bodies';
import { tempDir } from './support/log-files';

// docs/ingest.md, "Retries and ids": a body sent again after it was acknowledged (its answer lost
// on the way back) is acknowledged again and stored once; events sent without ids get ids derived
// from the body. The crash suite's side (a kill as the answer starts): test/crash-retries.test.ts.

const START = Date.parse('2026-11-21T12:00:00Z');
const tmp = tempDir('le-retries-');
afterAll(() => tmp.cleanup());

const COPIES = [copiesEndpoint('edge_logs'), copiesEndpoint('function_edge_logs')];

/** Managed storage on `dir` behind the HTTP handler, on a clock the test moves. */
async function open(dir: string, clock: { ms: number }) {
  const ep: Endpoints = await createEndpoints({ storage: { dataDir: dir }, now: () => new Date(clock.ms), cache: false, endpoints: COPIES });
  const handler = createHandler(ep, { auth: false });
  const post = async (path: string, body: Uint8Array | string, headers: Record<string, string> = {}) => {
    const response = await handler(new Request(`http://localhost${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body }));
    return { status: response.status, json: await response.json() };
  };
  const ids = async (relation: 'edge_logs' | 'function_edge_logs') => (await ep.query(`copies.${relation}`, {})).result as Array<{ id: string; copies: number }>;
  return { ep, post, ids };
}

let n = 0;
const fresh = () => tmp.path(`data-${++n}`);

/** Gateway events as Vector sends them: a timestamp each, no id. */
function vectorBatch(count: number, tag: string): Array<Record<string, unknown>> {
  return Array.from({ length: count }, (_, i) => ({
    timestamp: new Date(START - 60_000 + i * 1000).toISOString(),
    project: 'abc',
    event_message: `GET | 200 | /rest/v1/${tag}/${i}`,
    metadata: { request: { method: 'GET', path: `/rest/v1/${tag}/${i}`, url: `https://abc.supabase.co/rest/v1/${tag}/${i}` } },
  }));
}
const LOGS = '/api/logs?source_name=cloudflare.logs.prod';
const FUNCTIONS = '/api/logs?source_name=deno-relay-logs';
const gzipped = (events: unknown) => gzipSync(JSON.stringify(events));

const logsAll = (ep: Endpoints) => ep.logsAll({ project: 'abc', project_tier: 'FREE' });

describe('a body sent again after its acknowledgement (the answer lost): stored once', () => {
  it('the same gzip body twice, then plain: each answered Logged!, each event read once, with ids derived from the body', async () => {
    const clock = { ms: START };
    const { ep, post, ids } = await open(fresh(), clock);
    try {
      const body = gzipped(vectorBatch(20, 'twice'));
      expect(await post(LOGS, body, { 'Content-Encoding': 'gzip' })).toEqual({ status: 200, json: { message: 'Logged!' } });
      clock.ms += 30_000;
      expect(await post(LOGS, body, { 'Content-Encoding': 'gzip' })).toEqual({ status: 200, json: { message: 'Logged!' } });
      // The same bytes once inflated: the same body.
      expect((await post(LOGS, JSON.stringify(vectorBatch(20, 'twice')))).status).toBe(200);
      expect((await logsAll(ep)).length).toBe(20);
      const stored = await ids('edge_logs');
      expect(stored.every((r) => r.copies === 1)).toBe(true);
      // The key is of the body as sent after decompression, and of the source it went to.
      const key = bodyKey('edgeLogs', bodyDigest(Buffer.from(JSON.stringify(vectorBatch(20, 'twice')))));
      expect(stored.map((r) => r.id)).toEqual(Array.from({ length: 20 }, (_, i) => derivedId(key, i)).sort());
      // Each sending is acknowledged; the two repeats count apart, so retries show on /metrics.
      expect(ep.stats()).toMatchObject({ ingestedEvents: 60, repeatedEvents: 40 });
    } finally {
      await ep.close();
    }
  });

  it('keeps the ids events were sent with, and stores a body of such events once too', async () => {
    const { ep, post, ids } = await open(fresh(), { ms: START });
    try {
      const events = vectorBatch(3, 'own').map((e, i) => (i === 1 ? { ...e, id: 'sent-id-1' } : e));
      for (let i = 0; i < 2; i++) expect((await post(LOGS, JSON.stringify(events))).status).toBe(200);
      const stored = await ids('edge_logs');
      expect(stored.map((r) => r.copies)).toEqual([1, 1, 1]);
      expect(stored.filter((r) => bodyKeyOfId(r.id) === null).map((r) => r.id)).toEqual(['sent-id-1']);
    } finally {
      await ep.close();
    }
  });

  it('stores a large body (parsed off the main thread) once, and NDJSON alike', async () => {
    const { ep, post, ids } = await open(fresh(), { ms: START });
    try {
      const big = vectorBatch(60, 'big').map((e) => ({ ...e, metadata: { ...(e.metadata as object), pad: 'x'.repeat(2000) } }));
      const body = JSON.stringify(big);
      expect(body.length).toBeGreaterThan(OFF_THREAD_BYTES);
      const ndjson = vectorBatch(5, 'ndjson')
        .map((e) => JSON.stringify(e))
        .join('\n');
      for (let i = 0; i < 2; i++) {
        expect((await post(LOGS, body)).status).toBe(200);
        expect((await post(LOGS, ndjson, { 'Content-Type': 'application/x-ndjson' })).status).toBe(200);
      }
      const stored = await ids('edge_logs');
      expect({ events: stored.length, doubled: stored.filter((r) => r.copies > 1).length }).toEqual({ events: 65, doubled: 0 });
    } finally {
      await ep.close();
    }
  });

  it('stores the same body sent to two sources in each, once', async () => {
    const { ep, post, ids } = await open(fresh(), { ms: START });
    try {
      const body = JSON.stringify(vectorBatch(4, 'both'));
      for (let i = 0; i < 2; i++) {
        expect((await post(LOGS, body)).status).toBe(200);
        expect((await post(FUNCTIONS, body)).status).toBe(200);
      }
      expect((await ids('edge_logs')).map((r) => r.copies)).toEqual([1, 1, 1, 1]);
      expect((await ids('function_edge_logs')).map((r) => r.copies)).toEqual([1, 1, 1, 1]);
    } finally {
      await ep.close();
    }
  });

  it('stores the same body sent twice at once (a retry while the first is still being written) once', async () => {
    const { ep, post, ids } = await open(fresh(), { ms: START });
    try {
      const body = JSON.stringify(vectorBatch(10, 'at-once'));
      const answers = await Promise.all([post(LOGS, body), post(LOGS, body), post(LOGS, body)]);
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
      expect((await ids('edge_logs')).map((r) => r.copies)).toEqual(Array(10).fill(1));
    } finally {
      await ep.close();
    }
  });

  it('stores an OTLP body sent again once, its records to two sources each once', async () => {
    const { ep, post, ids } = await open(fresh(), { ms: START });
    try {
      const record = (i: number) => ({ timeUnixNano: String(BigInt(START - 60_000 + i) * 1_000_000n), body: { stringValue: `otlp ${i}` } });
      const resource = (service: string) => ({
        resource: {
          attributes: [
            { key: 'service.name', value: { stringValue: service } },
            { key: 'project', value: { stringValue: 'abc' } },
          ],
        },
      });
      const body = JSON.stringify({
        resourceLogs: [
          { ...resource('cloudflare.logs.prod'), scopeLogs: [{ logRecords: [record(0), record(1), record(2)] }] },
          { ...resource('deno-relay-logs'), scopeLogs: [{ logRecords: [record(3), record(4)] }] },
        ],
      });
      for (let i = 0; i < 2; i++) expect(await post('/v1/logs', gzipSync(body), { 'Content-Encoding': 'gzip' })).toEqual({ status: 200, json: {} });
      const gateway = await ids('edge_logs');
      const functions = await ids('function_edge_logs');
      expect({ gateway: gateway.map((r) => r.copies), functions: functions.map((r) => r.copies) }).toEqual({ gateway: [1, 1, 1], functions: [1, 1] });
      // Each record's id is of its source, the body and its position in the whole request.
      const digest = bodyDigest(Buffer.from(body));
      expect(functions.map((r) => r.id)).toEqual([derivedId(bodyKey('functionEdgeLogs', digest), 3), derivedId(bodyKey('functionEdgeLogs', digest), 4)].sort());
      expect((await logsAll(ep)).map((r) => r.event_message).sort()).toEqual(['otlp 0', 'otlp 1', 'otlp 2']);
    } finally {
      await ep.close();
    }
  });
});

describe('where the window ends', () => {
  it(`stores the body again once the window (${RECENT_BODIES.windowMs / 60_000} minutes on the injected clock) has passed`, async () => {
    const clock = { ms: START };
    const { ep, post, ids } = await open(fresh(), clock);
    try {
      const body = JSON.stringify(vectorBatch(2, 'late'));
      expect((await post(LOGS, body)).status).toBe(200);
      clock.ms += RECENT_BODIES.windowMs - 1;
      expect((await post(LOGS, body)).status).toBe(200);
      expect((await ids('edge_logs')).map((r) => r.copies)).toEqual([1, 1]);
      clock.ms += 1;
      expect((await post(LOGS, body)).status).toBe(200);
      expect((await ids('edge_logs')).map((r) => r.copies)).toEqual([2, 2]);
    } finally {
      await ep.close();
    }
  });

  it('stores every time a body with an event that has neither a timestamp nor an id (a heartbeat), and ep.ingest (no body) every time', async () => {
    const { ep, post } = await open(fresh(), { ms: START });
    try {
      const ping = JSON.stringify([{ project: 'abc', event_message: 'ping' }]);
      for (let i = 0; i < 2; i++) expect((await post(LOGS, ping)).status).toBe(200);
      const events = vectorBatch(1, 'library');
      for (let i = 0; i < 2; i++) await ep.ingest('cloudflare.logs.prod', events);
      const rows = await logsAll(ep);
      expect(rows.map((r) => r.event_message).sort()).toEqual(['GET | 200 | /rest/v1/library/0', 'GET | 200 | /rest/v1/library/0', 'ping', 'ping']);
      expect(new Set(rows.map((r) => r.id)).size).toBe(4);
      expect(ep.stats()).toMatchObject({ ingestedEvents: 4, repeatedEvents: 0 });
    } finally {
      await ep.close();
    }
  });
});

describe('the window survives a restart', () => {
  it('stores a body sent again after a restart once: the window is rebuilt from the write-ahead log', async () => {
    const dir = fresh();
    const clock = { ms: START };
    const body = JSON.stringify(vectorBatch(8, 'restart'));
    const other = JSON.stringify(vectorBatch(3, 'other'));
    const first = await open(dir, clock);
    try {
      expect((await first.post(LOGS, body)).status).toBe(200);
      expect((await first.post(FUNCTIONS, other)).status).toBe(200);
    } finally {
      await first.ep.close();
    }
    clock.ms += 60_000;
    const second = await open(dir, clock);
    try {
      expect(second.ep.storage?.recovered).toEqual([]);
      expect((await second.post(LOGS, body)).status).toBe(200);
      expect((await second.post(FUNCTIONS, other)).status).toBe(200);
      // A body never sent before is stored as usual.
      expect((await second.post(LOGS, JSON.stringify(vectorBatch(2, 'new')))).status).toBe(200);
      expect((await logsAll(second.ep)).length).toBe(10);
      expect((await second.ids('edge_logs')).filter((r) => r.copies !== 1)).toEqual([]);
      expect((await second.ids('function_edge_logs')).map((r) => r.copies)).toEqual([1, 1, 1]);
    } finally {
      await second.ep.close();
    }
  });
});
