import { once } from 'node:events';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { createEndpoints, type Endpoints } from '../src/index';
import { copiesEndpoint } from './support/copies-endpoint';
import { bodyDigest, bodyKey, derivedId } from '../src/ingest/body-digest';
import { spawnCli, waitForStderr, waitForStdout } from './support/cli';
import { tempDir } from './support/log-files';

// The lost acknowledgement (docs/durability.md, "Retries after a lost answer"): a real
// `serve --data-dir` whose answer to a stored batch never reaches the sender, which sends the
// same body again, without ids: 0 lost, 0 doubled, for every source and every ingest route.

const KEY = 'retry-key';
const NOW = '2026-11-21T12:00:00Z';
const HOUR_AGO = Date.parse(NOW) - 3_600_000;
const tmp = tempDir('le-crash-retries-');
const children: ReturnType<typeof spawnCli>[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  tmp.cleanup();
});

type Source = 'edgeLogs' | 'functionEdgeLogs';

/** A body as a Vector-like sender sends it (no ids), and the ids its events get (one per position, per source). */
interface Body {
  name: string;
  path: string;
  headers: Record<string, string>;
  bytes: Buffer;
  expected: Record<Source, string[]>;
}

function logflareBody(tag: string, count: number): Body {
  const events = Array.from({ length: count }, (_, i) => ({
    timestamp: new Date(HOUR_AGO + i * 1000).toISOString(),
    project: 'abc',
    event_message: `GET | 200 | /rest/v1/${tag}/${i}`,
    metadata: { request: { method: 'GET', path: `/rest/v1/${tag}/${i}`, url: `https://abc.supabase.co/rest/v1/${tag}/${i}` } },
  }));
  const json = Buffer.from(JSON.stringify(events));
  const key = bodyKey('edgeLogs', bodyDigest(json));
  return {
    name: 'Logflare JSON, gzip',
    path: '/api/logs?source_name=cloudflare.logs.prod',
    headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
    bytes: gzipSync(json),
    expected: { edgeLogs: events.map((_, i) => derivedId(key, i)), functionEdgeLogs: [] },
  };
}

function ndjsonBody(tag: string, count: number): Body {
  const text = Array.from({ length: count }, (_, i) =>
    JSON.stringify({ timestamp: HOUR_AGO * 1000 + i, event_message: `POST ${tag} ${i}`, metadata: { project_ref: 'abc', function_id: 'f1', execution_time_ms: 5 } }),
  ).join('\n');
  const bytes = Buffer.from(text);
  const key = bodyKey('functionEdgeLogs', bodyDigest(bytes));
  return {
    name: 'NDJSON',
    path: '/api/logs?source_name=deno-relay-logs',
    headers: { 'Content-Type': 'application/x-ndjson' },
    bytes,
    expected: { edgeLogs: [], functionEdgeLogs: Array.from({ length: count }, (_, i) => derivedId(key, i)) },
  };
}

/** OTLP/JSON whose first resource names the gateway log and second the edge-function log: two stores, one request. */
function otlpBody(tag: string): Body {
  const record = (i: number) => ({ timeUnixNano: String(BigInt(HOUR_AGO + i) * 1_000_000n), body: { stringValue: `otlp ${tag} ${i}` } });
  const resource = (service: string) => ({
    resource: {
      attributes: [
        { key: 'service.name', value: { stringValue: service } },
        { key: 'project', value: { stringValue: 'abc' } },
      ],
    },
  });
  const bytes = Buffer.from(
    JSON.stringify({
      resourceLogs: [
        { ...resource('cloudflare.logs.prod'), scopeLogs: [{ logRecords: [record(0), record(1), record(2)] }] },
        { ...resource('deno-relay-logs'), scopeLogs: [{ logRecords: [record(3), record(4)] }] },
      ],
    }),
  );
  const digest = bodyDigest(bytes);
  return {
    name: 'OTLP/JSON',
    path: '/v1/logs',
    headers: { 'Content-Type': 'application/json' },
    bytes,
    expected: { edgeLogs: [0, 1, 2].map((i) => derivedId(bodyKey('edgeLogs', digest), i)), functionEdgeLogs: [3, 4].map((i) => derivedId(bodyKey('functionEdgeLogs', digest), i)) },
  };
}

/** A real server on `dataDir`; `env` sets its failpoint or holdpoint. */
async function start(dataDir: string, env: Record<string, string> = {}) {
  const child = spawnCli(['serve', '--data-dir', dataDir, '--api-key', KEY, '--port', '0', '--now', NOW, '--no-cache'], env);
  children.push(child);
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const url = (await waitForStdout(child, /Listening on (http:\/\/\S+) /))[1]!;
  return { child, url, exited };
}
type Server = Awaited<ReturnType<typeof start>>;

function send(url: string, body: Body, signal?: AbortSignal): Promise<Response> {
  return fetch(`${url}${body.path}`, { method: 'POST', headers: { 'X-API-KEY': KEY, ...body.headers }, body: body.bytes, ...(signal ? { signal } : {}) });
}

/**
 * Sends `body` until it is answered 200, as Vector does: a request that got no answer is sent
 * again; a server found killed is started again (without its failpoint), as a supervisor would.
 * Returns the server now running and how many times the body was sent.
 */
async function sendUntilAcknowledged(server: Server, dataDir: string, body: Body): Promise<{ server: Server; sendings: number; killed: boolean }> {
  let killed = false;
  for (let sendings = 1; ; sendings++) {
    try {
      const response = await send(server.url, body);
      await response.arrayBuffer();
      if (response.status === 200) return { server, sendings, killed };
      expect(response.status, `${body.name}: ${response.status}`).toBe(503);
    } catch {
      // No answer: here only because the server killed itself at its failpoint.
      const [, signal] = await server.exited;
      expect(signal).toBe('SIGKILL');
      killed = true;
      server = await start(dataDir);
    }
  }
}

const RELATIONS: Record<Source, string> = { edgeLogs: 'edge_logs', functionEdgeLogs: 'function_edge_logs' };

/** Opens the data dir once the server is stopped and checks every expected id is read exactly once, nothing else. */
async function expectExactlyOnce(dataDir: string, bodies: readonly Body[]): Promise<void> {
  const ep: Endpoints = await createEndpoints({ storage: { dataDir }, now: () => new Date(NOW), cache: false, endpoints: Object.values(RELATIONS).map((relation) => copiesEndpoint(relation)) });
  try {
    for (const source of Object.keys(RELATIONS) as Source[]) {
      const expected = bodies.flatMap((b) => b.expected[source]);
      const rows = (await ep.query(`copies.${RELATIONS[source]}`, {})).result as Array<{ id: string; copies: number }>;
      const read = new Map(rows.map((r) => [r.id, r.copies]));
      expect({
        source,
        lost: expected.filter((id) => !read.has(id)).length,
        doubled: rows.filter((r) => r.copies > 1).length,
        unknown: rows.filter((r) => !expected.includes(r.id)).length,
      }).toEqual({ source, lost: 0, doubled: 0, unknown: 0 });
    }
    // logs.all reads the gateway's events once each too.
    const gateway = bodies.flatMap((b) => b.expected.edgeLogs);
    expect((await ep.logsAll({ project: 'abc', project_tier: 'FREE' })).map((r) => r.id).sort()).toEqual([...gateway].sort());
  } finally {
    await ep.close();
  }
}

async function stop(server: Server): Promise<void> {
  server.child.kill('SIGTERM');
  await server.exited;
}

describe('the lost acknowledgement, with a retrying sender: 0 lost, 0 doubled', () => {
  const kinds = [(tag: string) => logflareBody(tag, 6), (tag: string) => ndjsonBody(tag, 4), (tag: string) => otlpBody(tag)];
  for (const [k, first] of kinds.entries()) {
    const killedBody = first('killed');
    it(`kill -9 as the answer to a ${killedBody.name} body starts (fsynced, not answered); the body sent again to the restarted server`, async () => {
      const dataDir = tmp.path(`kill-${k}`);
      // The failpoint kills the server at its first ingest, once the batch is fsynced.
      let server = await start(dataDir, { LOG_ENDPOINTS_FAILPOINT: 'ingest:durable' });
      const bodies = [killedBody, ...kinds.map((make, j) => make(`after-${j}`))];
      const first = await sendUntilAcknowledged(server, dataDir, killedBody);
      expect({ sendings: first.sendings, killed: first.killed }).toEqual({ sendings: 2, killed: true });
      server = first.server;
      for (const body of bodies.slice(1)) server = (await sendUntilAcknowledged(server, dataDir, body)).server;
      // Sent again once more after all that: still within the window.
      for (const body of bodies) expect((await sendUntilAcknowledged(server, dataDir, body)).sendings).toBe(1);
      await stop(server);
      await expectExactlyOnce(dataDir, bodies);
    });
  }

  it('a dropped response (the sender gives up on the connection while the batch is fsynced), the body sent again at once', async () => {
    const dataDir = tmp.path('dropped');
    // The server holds each first ingest once its batch is fsynced, until SIGUSR2.
    const server = await start(dataDir, { LOG_ENDPOINTS_HOLD: 'ingest:durable' });
    const bodies = [logflareBody('dropped', 5), ndjsonBody('dropped', 3), otlpBody('dropped')];
    const dropped = new AbortController();
    const first = send(server.url, bodies[0]!, dropped.signal).then(
      () => 'answered',
      () => 'dropped',
    );
    await waitForStderr(server.child, /held ingest:durable/);
    dropped.abort();
    expect(await first).toBe('dropped');
    // The retry arrives while the first is still held: it waits for it, then is acknowledged again.
    const retry = send(server.url, bodies[0]!);
    server.child.kill('SIGUSR2');
    expect((await retry).status).toBe(200);
    for (const body of bodies) {
      const { sendings } = await sendUntilAcknowledged(server, dataDir, body);
      expect(sendings).toBe(1);
    }
    await stop(server);
    await expectExactlyOnce(dataDir, bodies);
  });
});
