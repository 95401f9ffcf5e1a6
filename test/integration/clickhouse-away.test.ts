/**
 * `log-endpoints clickhouse serve --data-dir` started while ClickHouse is away (docs/damaged-data.md):
 * it starts, ingest answers 200 (the events wait in the data dir), queries answer 503 with
 * Retry-After; once the real clickhouse-server (18.16) is back, every acknowledged event is
 * shipped and served exactly once.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickhouseLoader } from '../../src/clickhouse';
import { CENSUS_NOW, CENSUS_PROJECTS, censusEvents } from '../support/census';
import { spawnCli, waitForStdout } from '../support/cli';
import { tempDir } from '../support/log-files';
import { startClickHouseCluster, type ClickHouseCluster } from './support/clickhouse-cluster';

const KEY = 'away-test-key';
const DATABASE = 'away';
const tmp = tempDir('le-ch-away-');
let cluster: ClickHouseCluster;

beforeAll(async () => {
  cluster = await startClickHouseCluster({ shards: 1 });
  const loader = clickhouseLoader({ url: cluster.url, database: DATABASE, cluster: cluster.name });
  await loader.init();
  await loader.close();
});

// The server is stopped by the test; spawnCli kills it with the worker should the test fail first.
afterAll(async () => {
  await cluster?.stop();
  tmp.cleanup();
});

async function get(url: string, path: string): Promise<{ status: number; retryAfter: string | null; body: Record<string, unknown> }> {
  const response = await fetch(url + path, { headers: { 'X-API-KEY': KEY } });
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as Record<string, unknown> };
}

/** Every census event served: `total` from usage.api-counts, `ids` from logs.all; null while not answered 200. */
async function census(url: string): Promise<{ total: number; ids: string[] } | null> {
  const usage = await get(url, '/api/endpoints/usage.api-counts?project=.&interval=daily');
  if (usage.status !== 200) return null;
  const total = (usage.body.result as Array<{ total_rest_requests: number }>).reduce((n, r) => n + r.total_rest_requests, 0);
  const ids: string[] = [];
  for (const project of CENSUS_PROJECTS) {
    const rows = await get(url, `/api/endpoints/logs.all?project=${project}&project_tier=PAYG`);
    if (rows.status !== 200) return null;
    ids.push(...(rows.body.result as Array<{ id: string }>).map((r) => r.id));
  }
  return { total, ids: ids.sort() };
}

/** Only the empty active segment is left in each WAL: everything was shipped. */
function drained(dataDir: string): boolean {
  return ['edgeLogs', 'functionEdgeLogs'].every((source) => {
    const dir = join(dataDir, source, 'wal');
    const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.ndjson')) : [];
    return files.length === 1 && statSync(join(dir, files[0]!)).size === 0;
  });
}

describe('clickhouse serve --data-dir while ClickHouse is away', () => {
  it('starts, takes events, answers queries 503 until ClickHouse is back, then ships every acknowledged event once', async () => {
    await cluster.kill();
    const dataDir = tmp.path('data');
    const child = spawnCli([
      'clickhouse',
      'serve',
      '--url',
      cluster.url,
      '--database',
      DATABASE,
      '--cluster',
      cluster.name,
      '--data-dir',
      dataDir,
      '--api-key',
      KEY,
      '--port',
      '0',
      '--now',
      CENSUS_NOW,
      '--no-cache',
      '--wal-segment-age-ms',
      '50',
    ]);
    const [, url] = await waitForStdout(child, /Listening on (http:\/\/\S+) /);
    expect(child.output.stdout).toContain('cannot be reached yet: queries answer 503 until it can');

    const acknowledged: string[] = [];
    for (let batch = 0; batch < 10; batch++) {
      const events = censusEvents(`away${batch}`, 20);
      const response = await fetch(`${url}/api/logs?source_name=cloudflare.logs.prod`, {
        method: 'POST',
        headers: { 'X-API-KEY': KEY, 'Content-Type': 'application/json' },
        body: JSON.stringify(events),
      });
      expect(response.status).toBe(200);
      acknowledged.push(...events.map((e) => e.id as string));
    }
    const away = await get(url!, '/api/endpoints/usage.api-counts?project=.&interval=daily');
    expect(away).toMatchObject({ status: 503, retryAfter: '5', body: { error: { code: 'overloaded' } } });
    expect(String((away.body.error as { message: string }).message)).not.toContain('127.0.0.1');
    // Health answers ok, naming ClickHouse as degraded: ingest works, durable in the data dir (docs/http.md, "Health").
    const health = await fetch(`${url}/health`);
    expect([health.status, await health.json()]).toEqual([200, { status: 'ok', degraded: ['clickhouse'] }]);

    await cluster.restart();
    // The shipper retries with a pause that doubles (at most 60 s): within two minutes all is in.
    const deadline = Date.now() + 110_000;
    while (!drained(dataDir) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(drained(dataDir)).toBe(true);
    expect(await census(url!)).toEqual({ total: 200, ids: acknowledged.sort() });
    expect(await (await fetch(`${url}/health`)).json()).toEqual({ status: 'ok' });

    child.kill('SIGTERM');
    expect(await new Promise((resolve) => child.once('exit', (code) => resolve(code)))).toBe(0);
  }, 180_000);
});
