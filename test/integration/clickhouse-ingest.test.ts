/**
 * Managed storage's ingest shipping to a real 2-shard ClickHouse cluster (`log-endpoints clickhouse
 * serve --data-dir`): events sent over HTTP are served by the ClickHouse-backed endpoints as
 * DuckDB's managed storage serves them; the process killed with SIGKILL inside shipping (at every
 * failpoint, and at random moments) then restarted serves every acknowledged event exactly once,
 * a partial insert completed; tables made before the position columns existed are upgraded by
 * `clickhouse init`.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickhouseLoader } from '../../src/clickhouse';
import { generateLogs } from '../../src/fixtures/generate-logs';
import { Prng } from '../../src/fixtures/prng';
import { CENSUS_NOW, CENSUS_PROJECTS, censusEvents } from '../support/census';
import { runCli, spawnCli, waitForStderr, waitForStdout } from '../support/cli';
import { edgeEvent, tempDir, writeLines } from '../support/log-files';
import { startClickHouseCluster, type ClickHouseCluster } from './support/clickhouse-cluster';

const KEY = 'ingest-test-key';
const tmp = tempDir('le-ch-ingest-');
let cluster: ClickHouseCluster;
const children = new Set<ChildProcess>();

beforeAll(async () => {
  cluster = await startClickHouseCluster();
});

afterAll(async () => {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  }
  await cluster?.stop();
  tmp.cleanup();
});

/** Creates the tables of `database` on every shard (no ZooKeeper here: init runs on each server). */
async function makeTables(database: string): Promise<void> {
  for (const shard of cluster.shards) {
    const loader = clickhouseLoader({ url: shard.url, database, cluster: cluster.name });
    await loader.init();
    await loader.close();
  }
}

/** `log-endpoints clickhouse serve --data-dir` on the cluster, segments shipped 50 ms after their first event. */
function startServer(database: string, dataDir: string, extra: string[] = [], env: Record<string, string> = {}) {
  const child = spawnCli(
    [
      'clickhouse',
      'serve',
      '--url',
      cluster.url,
      '--database',
      database,
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
      ...extra,
    ],
    env,
  );
  children.add(child);
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code)));
  return { child, exited, url: waitForStdout(child, /Listening on (http:\/\/\S+) /).then((m) => m[1]!) };
}

async function stopServer(server: ReturnType<typeof startServer>): Promise<void> {
  server.child.kill('SIGTERM');
  expect(await server.exited).toBe(0);
}

/** POSTs events to the ingest route; the status, or null when the server died under the request. */
async function post(url: string, events: readonly object[], source = 'cloudflare.logs.prod'): Promise<number | null> {
  try {
    const response = await fetch(`${url}/api/logs?source_name=${source}`, {
      method: 'POST',
      headers: { 'X-API-KEY': KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify(events),
    });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return null;
  }
}

async function get(url: string, path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url + path, { headers: { 'X-API-KEY': KEY } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Every WAL of the data dir holds only its empty active segment: every event is shipped. */
function drained(dataDir: string): boolean {
  return ['edgeLogs', 'functionEdgeLogs'].every((source) => {
    const dir = join(dataDir, source, 'wal');
    const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.ndjson')) : [];
    return files.length === 1 && statSync(join(dir, files[0]!)).size === 0;
  });
}

/** Every census event the endpoints serve: `total` from usage.api-counts, `ids` from logs.all. */
async function census(url: string): Promise<{ total: number; ids: string[] }> {
  const usage = await get(url, '/api/endpoints/usage.api-counts?project=.&interval=daily');
  expect(usage.status).toBe(200);
  const total = (usage.body.result as Array<{ total_rest_requests: number }>).reduce((n, r) => n + r.total_rest_requests, 0);
  const ids: string[] = [];
  for (const project of CENSUS_PROJECTS) {
    const rows = await get(url, `/api/endpoints/logs.all?project=${project}&project_tier=PAYG`);
    expect(rows.status).toBe(200);
    const result = rows.body.result as Array<{ id: string }>;
    if (result.length >= 100) throw new Error(`census: project ${project} has 100 rows or more; keep it under`);
    ids.push(...result.map((r) => r.id));
  }
  return { total, ids: ids.sort() };
}

/** Rows of a query sent to the first shard (JSON format). */
async function clickhouseRows(sql: string): Promise<Array<Record<string, string>>> {
  const response = await fetch(`${cluster.url}/`, { method: 'POST', body: `${sql} FORMAT JSON` });
  const text = await response.text();
  if (!response.ok) throw new Error(text);
  return (JSON.parse(text) as { data: Array<Record<string, string>> }).data;
}

/** Event lines of a WAL segment file (commit markers are not events). */
function eventLines(path: string): number {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('{"_wal_commit"')).length;
}

/** Resolves once `done()` holds (an observable state), checking every 20 ms; fails past 60 s. */
async function waitUntil(done: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`${what}: not reached within 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Restarts the server on the data dir, waits until everything is shipped, and counts what the endpoints serve. */
async function restartAndCount(database: string, dataDir: string): Promise<{ total: number; ids: string[] }> {
  const server = startServer(database, dataDir);
  const url = await server.url;
  await waitUntil(() => drained(dataDir), 'every segment shipped after the restart');
  const counted = await census(url);
  await stopServer(server);
  // No attempt is left recorded: every segment is shipped and released.
  for (const source of ['edgeLogs', 'functionEdgeLogs']) {
    const dir = join(dataDir, source, 'shipping');
    expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
  }
  return counted;
}

/** Every acknowledged event exactly once; an event of a request cut by the kill at most once. */
function expectExactlyOnce(counted: { total: number; ids: string[] }, acked: readonly string[]): void {
  const ackedSet = new Set(acked);
  expect(counted.ids.filter((id) => ackedSet.has(id)).length).toBe(acked.length);
  expect(new Set(counted.ids).size).toBe(counted.ids.length);
  expect(counted.total).toBe(counted.ids.length);
}

describe('clickhouse serve --data-dir: ingest ships to the cluster', () => {
  it('serves events ingested over HTTP like DuckDB managed storage serves them, events sharing an id included', async () => {
    await makeTables('ingest_http');
    const logs = await generateLogs({ outDir: tmp.path('logs'), now: new Date(CENSUS_NOW), seed: 11, days: 3, projects: 4, edgeEvents: 1500, functionEvents: 1000 });
    const read = (file: string) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l, i) => {
          const event = JSON.parse(l) as Record<string, unknown>;
          // Ids given here: a server would give an event without one its own random id.
          return { ...event, id: event.id ?? `generated-${i}` };
        });
    const edge = read(logs.byFormat.ndjson!.edgeLogs);
    const functions = read(logs.byFormat.ndjson!.functionEdgeLogs);
    const [p0, p1] = logs.projects;
    const twins = [0, 1].map((k) => edgeEvent({ id: 'twin', project: p0!, timestamp: `2026-11-21T11:0${k}:00.000001Z` }));

    const clickhouse = startServer('ingest_http', tmp.path('http-ch'), ['--batch-rows', '700']);
    const duckdb = spawnCli(['serve', '--data-dir', tmp.path('http-duckdb'), '--api-key', KEY, '--port', '0', '--now', CENSUS_NOW, '--no-cache']);
    children.add(duckdb);
    const urls = [await clickhouse.url, (await waitForStdout(duckdb, /Listening on (http:\/\/\S+) /))[1]!];
    for (const url of urls) {
      for (let i = 0; i < edge.length; i += 400) expect(await post(url, edge.slice(i, i + 400))).toBe(200);
      for (let i = 0; i < functions.length; i += 400) expect(await post(url, functions.slice(i, i + 400), 'deno-relay-logs')).toBe(200);
      expect(await post(url, twins)).toBe(200);
    }
    await waitUntil(() => drained(tmp.path('http-ch')), 'every segment shipped');

    const fid = logs.functionIds[p0!]![0]!;
    const paths = [
      `/api/endpoints/functions.invocation-stats?project=${p0}&interval=1day`,
      `/api/endpoints/functions.invocation-stats?project=${p0}&interval=7day&function_id=${fid}`,
      `/api/endpoints/functions.invocation-stats?project=${p1}&interval=1hr`,
      `/api/endpoints/logs.all?project=${p0}&project_tier=PRO`,
      `/api/endpoints/logs.all?project=${p1}&project_tier=FREE&iso_timestamp_start=2026-11-21T06:00:00Z`,
      `/api/endpoints/usage.api-counts?project=${p0}&interval=daily`,
      `/api/endpoints/usage.api-counts?project=.&interval=hourly`,
    ];
    let rows = 0;
    for (const path of paths) {
      const [got, want] = await Promise.all(urls.map((url) => get(url, path)));
      expect(got!.status, path).toBe(200);
      const a = got!.body.result as Array<Record<string, unknown>>;
      const b = want!.body.result as Array<Record<string, unknown>>;
      rows += a.length;
      expect(a.map(withoutAvg), path).toEqual(b.map(withoutAvg));
      a.forEach((row, i) => {
        const x = row.avg_execution_time as number | null | undefined,
          y = b[i]!.avg_execution_time as number | null | undefined;
        if (y === undefined || y === null) expect(x, path).toBe(y);
        else expect(Math.abs(x! - y), path).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(y)));
      });
    }
    expect(rows).toBeGreaterThan(100);
    // Both events named `twin` are served: ids are not keys.
    const newest = await get(urls[0]!, `/api/endpoints/logs.all?project=${p0}&project_tier=FREE&iso_timestamp_start=2026-11-21T10:59:00Z`);
    expect((newest.body.result as Array<{ id: string }>).filter((r) => r.id === 'twin')).toHaveLength(2);
    const [positions] = await clickhouseRows("SELECT count() AS rows, uniqExact(_wal_segment, _wal_offset) AS positions, countIf(_wal_segment = '') AS unnamed FROM ingest_http.edge_logs");
    expect(positions).toEqual({ rows: String(edge.length + 2), positions: String(edge.length + 2), unnamed: '0' });

    await stopServer(clickhouse);
    duckdb.kill('SIGTERM');
    await once(duckdb, 'exit');
  });

  const FAILPOINTS = ['ship:attempt-recorded', 'ship:mid-insert', 'ship:batch-inserted', 'ship:inserted', 'ship:released'];
  for (const [n, point] of FAILPOINTS.entries()) {
    it(`killed at ${point}, restarted: every acknowledged event exactly once`, async () => {
      const database = `kill_${n}`;
      await makeTables(database);
      const dataDir = tmp.path(`kill-${n}`);
      // Three rows per INSERT: a segment of eight events goes in three, so it can be half in.
      const server = startServer(database, dataDir, ['--batch-rows', '3'], { LOG_ENDPOINTS_FAILPOINT: point });
      const url = await server.url;
      let killed = false;
      void server.exited.then(() => (killed = true));
      const acked: string[] = [];
      for (let batch = 0; !killed && batch < 40; batch++) {
        const events = censusEvents(`${point}-${batch}`, 8, batch * 8);
        if ((await post(url, events)) === 200) acked.push(...events.map((e) => e.id as string));
        // The next batch once this one is shipped, or the kill came.
        await waitUntil(() => killed || drained(dataDir), 'the batch shipped');
      }
      expect(await server.exited).toBe('SIGKILL');
      expect(acked.length).toBeGreaterThan(0);

      if (point === 'ship:batch-inserted') {
        // The kill left a segment partly in ClickHouse: three of its eight events.
        const instance = readFileSync(join(dataDir, 'instance-id'), 'utf8').trim();
        const shipped = await clickhouseRows(`SELECT _wal_segment AS segment, count() AS n FROM ${database}.edge_logs GROUP BY segment`);
        const walFolder = join(dataDir, 'edgeLogs', 'wal');
        const partial = shipped.filter((row) => {
          const segment = row.segment!;
          const file = join(walFolder, `${segment.split('/')[2]!.padStart(20, '0')}.ndjson`);
          return segment.startsWith(`${instance}/edgeLogs/`) && existsSync(file) && Number(row.n) > 0 && Number(row.n) < eventLines(file);
        });
        expect(partial).toHaveLength(1);
        expect(partial[0]!.n).toBe('3');
      }

      expectExactlyOnce(await restartAndCount(database, dataDir), acked);
    });
  }

  it('killed at random moments while ingesting and shipping, restarted each time: every acknowledged event exactly once', async () => {
    const database = 'kill_random';
    await makeTables(database);
    const dataDir = tmp.path('kill-random');
    const random = new Prng(20261121);
    const acked: string[] = [];
    let sent = 0;
    for (let round = 0; round < 5; round++) {
      const server = startServer(database, dataDir, ['--batch-rows', '4', '--wal-segment-age-ms', '10']);
      const url = await server.url;
      let killed = false;
      void server.exited.then(() => (killed = true));
      // Requests go on until the kill, which comes after a random pause (whatever is going on then).
      const posting = (async () => {
        for (let batch = 0; !killed && batch < 30; batch++, sent++) {
          const events = censusEvents(`random-${sent}`, 6, sent * 6);
          if ((await post(url, events)) === 200) acked.push(...events.map((e) => e.id as string));
        }
      })();
      await new Promise((resolve) => setTimeout(resolve, 20 + random.int(400)));
      server.child.kill('SIGKILL');
      await server.exited;
      await posting;
    }
    expect(acked.length).toBeGreaterThan(0);
    expectExactlyOnce(await restartAndCount(database, dataDir), acked);
  });

  it('shipping to tables made before the position columns fails and says to run clickhouse init, which adds them; then loaded and ingested rows are served together', async () => {
    const database = 'upgraded';
    // Tables as an earlier `clickhouse init` made them: no _wal_segment, no _wal_offset.
    for (const shard of cluster.shards) {
      const statements = [
        `CREATE DATABASE ${database}`,
        `CREATE TABLE ${database}.edge_logs_local (timestamp Int64, project String, id Nullable(String), event_message Nullable(String), metadata Nullable(String), request_path Nullable(String), request_url Nullable(String)) ENGINE = MergeTree() PARTITION BY toDate(toDateTime(intDiv(timestamp, 1000000))) ORDER BY (project, timestamp)`,
        `CREATE TABLE ${database}.edge_logs AS ${database}.edge_logs_local ENGINE = Distributed('${cluster.name}', '${database}', 'edge_logs_local', rand())`,
        `CREATE TABLE ${database}.function_edge_logs_local (timestamp Int64, project_ref String, function_id Nullable(String), id Nullable(String), event_message Nullable(String), metadata Nullable(String), execution_time_ms Nullable(Float64), status_code Nullable(Int32)) ENGINE = MergeTree() PARTITION BY toDate(toDateTime(intDiv(timestamp, 1000000))) ORDER BY (project_ref, timestamp)`,
        `CREATE TABLE ${database}.function_edge_logs AS ${database}.function_edge_logs_local ENGINE = Distributed('${cluster.name}', '${database}', 'function_edge_logs_local', rand())`,
      ];
      for (const sql of statements) {
        const response = await fetch(`${shard.url}/`, { method: 'POST', body: sql });
        expect(response.status, await response.text()).toBe(200);
      }
    }
    const loaded = censusEvents('loaded', 20);
    const file = writeLines(tmp.path('upgrade', 'edge.ndjson'), loaded);
    const load = await runCli(['clickhouse', 'load', '--url', cluster.url, '--database', database, '--cluster', cluster.name, '--source', 'edge', '--input', file]);
    expect(load.code, load.stderr).toBe(0);

    // Shipping to them fails, says what to do, and is retried.
    const dataDir = tmp.path('upgrade', 'data');
    const server = startServer(database, dataDir);
    const url = await server.url;
    const ingested = censusEvents('ingested', 20, 20);
    expect(await post(url, ingested)).toBe(200);
    await waitForStderr(
      server.child,
      /warning: Shipping edgeLogs to ClickHouse failed \(retried shortly\): `upgraded`.`edge_logs` has no _wal_segment \/ _wal_offset columns .*run `log-endpoints clickhouse init` again/,
    );

    const init = await runCli(['clickhouse', 'init', ...cluster.shards.flatMap((s) => ['--url', s.url]), '--database', database, '--cluster', cluster.name]);
    expect(init.code, init.stderr).toBe(0);
    const columns = await clickhouseRows(`SELECT table, name, type, default_kind FROM system.columns WHERE database = '${database}' AND name LIKE '\\\\_wal%' ORDER BY table, name`);
    expect(columns).toEqual(
      ['edge_logs', 'edge_logs_local', 'function_edge_logs', 'function_edge_logs_local'].flatMap((table) => [
        { table, name: '_wal_offset', type: 'UInt64', default_kind: 'DEFAULT' },
        { table, name: '_wal_segment', type: 'String', default_kind: 'DEFAULT' },
      ]),
    );
    // Rows loaded before keep the defaults. (Counted without WHERE: 18.16 answers nothing when a
    // filter on one column reads an added column of parts written before the ALTER.)
    expect(
      await clickhouseRows(`SELECT _wal_segment AS segment, _wal_offset AS offset, countIf(startsWith(id, 'loaded-')) AS n FROM ${database}.edge_logs GROUP BY segment, offset HAVING n > 0`),
    ).toEqual([{ segment: '', offset: '0', n: '20' }]);
    // A second init changes nothing.
    expect((await runCli(['clickhouse', 'init', '--url', cluster.url, '--database', database, '--cluster', cluster.name])).code).toBe(0);

    // The next retry ships the events.
    await waitUntil(() => drained(dataDir), 'the ingested events shipped');
    const counted = await census(url);
    expect(counted).toEqual({ total: 40, ids: [...loaded, ...ingested].map((e) => e.id as string).sort() });
    await stopServer(server);
  });
});

function withoutAvg(row: Record<string, unknown>): Record<string, unknown> {
  const { avg_execution_time: _avg, ...rest } = row;
  return rest;
}
