import { once } from 'node:events';
import { afterAll, describe, expect, it } from 'vitest';
import { Prng } from '../src/fixtures/prng';
import { spawnCli, waitForStdout } from './support/cli';
import { tempDir } from './support/log-files';

const SEED = 20261121;
const ROUNDS = 4;
const CLIENTS = 4;
const KEY = 'crash-key';
const NOW = '2026-11-21T12:00:00Z';
/** Every event gets its own millisecond after this, so logs.all can page through all of them. */
const T0 = Date.parse('2026-11-20T13:00:00Z');

const tmp = tempDir('le-crash-');
/** Every server started, so none outlives a failed or timed-out test. */
const children: ReturnType<typeof spawnCli>[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  tmp.cleanup();
});

interface Batch {
  ids: string[];
}

/**
 * Kill -9 at random (seeded) moments: a real `serve --data-dir` child process ingests batches
 * from several concurrent clients while queries run, and is killed the moment a seeded number of
 * batches has been acknowledged, or sent (so other requests are always in flight: being read,
 * parsed, written, fsynced or answered; small segments make some kills land on a roll). It is restarted on the same data dir each round. At the end, every event
 * answered 200 must be served exactly once, and every batch not answered must be all or nothing.
 */
describe('kill -9 while ingesting', () => {
  it('every acknowledged event is served exactly once after restarts; unacknowledged batches are all or nothing', async () => {
    const dataDir = tmp.path('data');
    const acked: Batch[] = [];
    const unacked: Batch[] = [];
    const serverErrors: string[] = [];
    let nextEvent = 0;

    for (let round = 0; round < ROUNDS; round++) {
      const prng = new Prng(SEED + round);
      const server = await start(dataDir);
      // The moment: when the n-th batch is acknowledged, or when the n-th batch is sent (the server is
      // then reading it, or holds it in a group being written).
      const killAt = 10 + prng.int(60);
      const onSend = prng.chance(0.5);
      let acks = 0;
      let sends = 0;
      let killed = false;
      const kill = () => {
        if (killed) return;
        killed = true;
        server.child.kill('SIGKILL');
      };

      const client = async (c: number) => {
        const rnd = new Prng(SEED * 31 + round * 7 + c);
        while (!killed) {
          const size = 1 + rnd.int(rnd.chance(0.2) ? 400 : 40);
          const ids = Array.from({ length: size }, () => `ev-${String(nextEvent++).padStart(7, '0')}`);
          const events = ids.map((id) => event(id));
          const batch = { ids };
          if (onSend && ++sends === killAt + 20) setImmediate(kill);
          try {
            const response = await fetch(`${server.url}/api/logs?source_name=cloudflare.logs.prod`, {
              method: 'POST',
              headers: { 'X-API-KEY': KEY, 'Content-Type': 'application/json' },
              body: JSON.stringify({ batch: events }),
            });
            await response.arrayBuffer();
            if (response.status === 200) {
              acked.push(batch);
              if (++acks === killAt && !onSend) kill();
            } else {
              unacked.push(batch);
              if (response.status >= 500 && response.status !== 503) serverErrors.push(`ingest ${response.status}`);
            }
          } catch {
            // The connection died with the server: not acknowledged.
            unacked.push(batch);
          }
        }
      };
      const querier = async () => {
        const paths = ['logs.all?project=crash&project_tier=PAYG', 'usage.api-counts?project=crash&interval=daily'];
        for (let i = 0; !killed; i++) {
          try {
            const response = await fetch(`${server.url}/api/endpoints/${paths[i % 2]}`, { headers: { 'X-API-KEY': KEY } });
            await response.arrayBuffer();
            if (response.status !== 200 && !killed) serverErrors.push(`query ${response.status}`);
          } catch {
            // Killed mid-query.
          }
        }
      };
      await Promise.all([...Array.from({ length: CLIENTS }, (_, c) => client(c)), querier(), server.exited]);
    }

    // The last restart recovers, then everything is read back through the endpoints.
    const server = await start(dataDir);
    const served = await allIds(server.url);
    const counts = new Map<string, number>();
    for (const id of served) counts.set(id, (counts.get(id) ?? 0) + 1);
    const doubled = [...counts].filter(([, c]) => c > 1).map(([id]) => id);
    expect(doubled, 'events served twice').toEqual([]);

    const ackedIds = acked.flatMap((b) => b.ids);
    const missing = ackedIds.filter((id) => !counts.has(id));
    expect(missing, 'acknowledged events missing').toEqual([]);
    const partial = unacked.filter((b) => b.ids.some((id) => counts.has(id)) && !b.ids.every((id) => counts.has(id)));
    expect(partial, 'unacknowledged batches kept in part').toEqual([]);
    const known = new Set([...ackedIds, ...unacked.flatMap((b) => b.ids)]);
    expect(
      served.filter((id) => !known.has(id)),
      'events nobody sent',
    ).toEqual([]);

    // The counts agree through another endpoint too (it counts every stored copy, so it would also
    // catch a doubled event that logs.all's paging stepped over).
    const usage = await get(server.url, 'usage.api-counts?project=crash&interval=daily');
    expect(usage.reduce((sum: number, r: any) => sum + r.total_rest_requests, 0)).toBe(served.length);
    expect(serverErrors).toEqual([]);
    // Enough happened for the test to mean something.
    expect(acked.length).toBeGreaterThanOrEqual(ROUNDS * 10);

    server.child.kill('SIGTERM');
    const [code] = await once(server.child, 'exit');
    expect(code).toBe(0);
  });
});

function event(id: string) {
  const n = Number(id.slice(3));
  return {
    id,
    message: `GET | 200 | https://crash.supabase.co/rest/v1/items/${n}`,
    project: 'crash',
    timestamp: new Date(T0 + n).toISOString(),
    metadata: { request: { method: 'GET', path: `/rest/v1/items/${n}`, url: `https://crash.supabase.co/rest/v1/items/${n}` } },
  };
}

async function start(dataDir: string) {
  // Small segments, so kills also land while segments are rolled.
  const child = spawnCli(['serve', '--data-dir', dataDir, '--api-key', KEY, '--port', '0', '--now', NOW, '--no-cache', '--wal-segment-bytes', '16384']);
  children.push(child);
  const exited = once(child, 'exit').then(() => undefined);
  const url = (await waitForStdout(child, /Listening on (http:\/\/\S+) /))[1]!;
  return { child, url, exited };
}

async function get(url: string, path: string): Promise<any[]> {
  const response = await fetch(`${url}/api/endpoints/${path}`, { headers: { 'X-API-KEY': KEY } });
  expect(response.status).toBe(200);
  return ((await response.json()) as { result: any[] }).result;
}

/** Every id logs.all serves, newest first, page by page (100 rows each, timestamps all distinct). */
async function allIds(url: string): Promise<string[]> {
  const ids: string[] = [];
  let end = '';
  for (;;) {
    const rows = await get(url, `logs.all?project=crash&project_tier=PAYG${end ? `&iso_timestamp_end=${end}` : ''}`);
    ids.push(...rows.map((r) => r.id as string));
    if (rows.length < 100) return ids;
    end = new Date(Date.parse(rows.at(-1).timestamp) - 1).toISOString();
  }
}
