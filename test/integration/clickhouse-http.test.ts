/**
 * `log-endpoints clickhouse init|load|serve` as real processes against a 2-shard cluster, next to
 * `log-endpoints serve` over the same files: the HTTP API answers the same (status, error codes,
 * rows, order; averages within 1e-9 relative).
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateLogs, type GeneratedLogs } from '../../src/fixtures/generate-logs';
import { runCli, spawnCli, waitForStdout } from '../support/cli';
import { tempDir } from '../support/log-files';
import { startClickHouseCluster, type ClickHouseCluster } from './support/clickhouse-cluster';

const NOW = '2026-11-21T12:00:00Z';
const KEY = 'test-key-1234';

describe('log-endpoints clickhouse: init, load and serve answer the HTTP API like DuckDB', () => {
  const tmp = tempDir('le-ch-http-');
  let cluster: ClickHouseCluster;
  let logs: GeneratedLogs;
  const servers: Array<ChildProcess> = [];
  let duckdbUrl: string;
  let clickhouseUrl: string;

  beforeAll(async () => {
    const started = startClickHouseCluster();
    logs = await generateLogs({
      outDir: tmp.path('logs'),
      now: new Date(NOW),
      seed: 7,
      days: 3,
      projects: 4,
      edgeEvents: 3000,
      functionEvents: 2000,
      formats: ['ndjson', 'parquet'],
      brokenLineRate: 0.01,
    });
    cluster = await started;
    const common = ['--database', 'http_test', '--cluster', cluster.name];
    const init = await runCli(['clickhouse', 'init', ...cluster.shards.flatMap((s) => ['--url', s.url]), ...common]);
    expect(init.stderr).toBe('');
    expect(init.code).toBe(0);
    expect(init.stdout).toMatch(/Created the local and Distributed tables/);
    const edge = await runCli(['clickhouse', 'load', '--url', cluster.url, ...common, '--source', 'edge', '--input', logs.byFormat.ndjson!.edgeLogs]);
    expect(edge.code, edge.stderr).toBe(0);
    expect(edge.stdout).toMatch(/^Loaded 3000 events from 1 of 1 files/);
    expect(edge.stdout).toMatch(/lines were not events/);
    const fn = await runCli(['clickhouse', 'load', '--url', cluster.url, ...common, '--source', 'functions', '--input', logs.byFormat.parquet!.functionEdgeLogs]);
    expect(fn.code, fn.stderr).toBe(0);
    expect(fn.stdout).toMatch(/^Loaded 2000 events/);

    const ch = spawnCli(['clickhouse', 'serve', '--url', cluster.url, ...common, '--port', '0', '--api-key', KEY, '--now', NOW, '--no-cache']);
    const dd = spawnCli([
      'serve',
      '--edge-logs',
      logs.byFormat.ndjson!.edgeLogs,
      '--function-logs',
      logs.byFormat.ndjson!.functionEdgeLogs,
      '--port',
      '0',
      '--api-key',
      KEY,
      '--now',
      NOW,
      '--no-cache',
    ]);
    servers.push(ch, dd);
    clickhouseUrl = (await waitForStdout(ch, /Listening on (http:\/\/\S+)/))[1]!;
    duckdbUrl = (await waitForStdout(dd, /Listening on (http:\/\/\S+)/))[1]!;
  });

  afterAll(async () => {
    for (const server of servers) {
      if (server.exitCode === null) {
        server.kill('SIGTERM');
        await once(server, 'exit');
      }
    }
    await cluster?.stop();
    tmp.cleanup();
  });

  it('answers every endpoint, by name and by UUID, with the same rows, and the same errors', async () => {
    const [p0, p1] = logs.projects;
    const fid = logs.functionIds[p0!]![0]!;
    const paths = [
      `/api/endpoints/functions.invocation-stats?project=${p0}&interval=1day`,
      `/api/endpoints/functions.invocation-stats?project=${p0}&interval=7day&function_id=${fid}`,
      `/api/endpoints/functions.invocation-stats?project=${p1}&interval=1hr`,
      `/api/endpoints/query/functions.invocation-stats?project=${p1}&interval=15min`,
      `/api/endpoints/logs.all?project=${p0}&project_tier=PRO`,
      `/api/endpoints/logs.all?project=${p1}&project_tier=FREE&iso_timestamp_start=2026-11-21T06:00:00Z&iso_timestamp_end=2026-11-21T11:00:00%2B01:00`,
      `/api/endpoints/query/3e715bbd-1626-41ec-8a34-3544ab01d99e?project=${p0}&project_tier=ENTERPRISE`,
      `/api/endpoints/usage.api-counts?project=${p0}&interval=daily`,
      `/api/endpoints/usage.api-counts?project=${encodeURIComponent(`^https://(${p0}|${p1})\\.`)}&interval=hourly`,
      `/api/endpoints/query/538d9361-e1e6-421a-953a-37a46d1b9e19?project=.&interval=minutely`,
      // Errors: bad pattern, missing parameter, bad interval, bad timestamp, unknown endpoint.
      '/api/endpoints/usage.api-counts?project=(&interval=daily',
      '/api/endpoints/logs.all?project_tier=PRO',
      `/api/endpoints/usage.api-counts?project=${p0}&interval=weekly`,
      `/api/endpoints/logs.all?project=${p0}&project_tier=PRO&iso_timestamp_end=soon`,
      '/api/endpoints/no.such-endpoint',
    ];
    let rows = 0;
    for (const path of paths) {
      const [expected, actual] = await Promise.all([get(duckdbUrl, path), get(clickhouseUrl, path)]);
      expect(actual.status, path).toBe(expected.status);
      if (expected.status !== 200) {
        expect(actual.body, path).toEqual(expected.body);
        continue;
      }
      const want = expected.body.result as Array<Record<string, unknown>>;
      const got = actual.body.result as Array<Record<string, unknown>>;
      rows += got.length;
      expect(got.map(withoutAvg), path).toEqual(want.map(withoutAvg));
      got.forEach((row, i) => {
        const a = row.avg_execution_time as number | null | undefined,
          b = want[i]!.avg_execution_time as number | null | undefined;
        if (b === undefined || b === null) expect(a, path).toBe(b);
        else expect(Math.abs(a! - b), path).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(b)));
      });
    }
    expect(rows).toBeGreaterThan(100);
  });

  it('refuses to serve without a key, and says which option is missing', async () => {
    const result = await runCli(['clickhouse', 'serve', '--url', cluster.url, '--database', 'http_test']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/No API key/);
    const noUrl = await runCli(['clickhouse', 'load', '--source', 'edge', '--input', 'x.ndjson']);
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toMatch(/--url/);
  });
});

async function get(base: string, path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(base + path, { headers: { 'X-API-KEY': KEY } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

function withoutAvg(row: Record<string, unknown>): Record<string, unknown> {
  const { avg_execution_time: _avg, ...rest } = row;
  return rest;
}
