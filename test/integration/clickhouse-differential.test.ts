/**
 * Differential test: the endpoints computed by ClickHouse (two shards, Distributed tables) against
 * the same endpoints computed by DuckDB over the same log files, for many clocks, projects and
 * every parameter kind. Timestamps, counts, ids, metadata and order must be identical; averages
 * within 1e-9 relative; p95/p99 identical to DuckDB's ranks and inside the bound of docs/semantics.md, "functions.invocation-stats".
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickhouseEngine, clickhouseLoader } from '../../src/clickhouse';
import { generateLogs, type GeneratedLogs } from '../../src/fixtures/generate-logs';
import { createEndpoints, type Endpoints, type FunctionsInvocationStatsRow } from '../../src/index';
import { formatIso, quantileBound, readFunctionEvents, refInvocationStats, type RefFunctionEvent } from '../reference/reference-endpoints';
import { tempDir, writeLines } from '../support/log-files';
import { startClickHouseCluster, type ClickHouseCluster } from './support/clickhouse-cluster';
import { edgeCaseEvents } from './support/clickhouse-edge-cases';

const NOW = new Date('2026-11-21T12:00:00Z');
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const FUNCTION_INTERVALS = ['5min', '15min', '1hr', '1day', '7day', '2day', '1DAY'];
const TIERS = ['FREE', 'PRO', 'PAYG', 'ENTERPRISE', 'free', 'GOLD', ''];
const USAGE_INTERVALS = ['hourly', 'daily', 'minutely'];
// Supabase Studio's and the Management API's values: one of them per pattern, beside two of the above.
const STUDIO_INTERVALS = ['15min', '30min', '1hr', '3hr', '1day', '3day', '7day'];
const UNKNOWN_PROJECT = 'zzzzzzzzzzzzzzzzzzzz';
const UNKNOWN_FUNCTION = 'ffffffff-ffff-4fff-bfff-ffffffffffff';

type Query = { endpoint: 'functions.invocation-stats' | 'logs.all' | 'usage.api-counts'; params: Record<string, string> };
type Outcome = { rows: unknown[] } | { error: { code: string; param?: string } };

describe('differential: ClickHouse (2 shards, Distributed tables) versus DuckDB on the same logs', () => {
  const tmp = tempDir('le-ch-diff-');
  let cluster: ClickHouseCluster;
  let clock = NOW;
  let duckdb: Endpoints;
  let clickhouse: Endpoints;
  let spread: GeneratedLogs;
  let dense: GeneratedLogs;
  let projects: string[];
  let functionIds: Record<string, string[]>;
  let generatedFunctions: RefFunctionEvent[];
  const loaded = { rows: 0, skipped: 0 };

  beforeAll(async () => {
    const started = startClickHouseCluster();
    const common = { now: NOW, formats: ['ndjson', 'parquet'] as Array<'ndjson' | 'parquet'>, brokenLineRate: 0.004, eventsAfterNow: true };
    spread = await generateLogs({ ...common, outDir: tmp.path('spread'), seed: 42, days: 8, projects: 6, edgeEvents: 2500, functionEvents: 2000 });
    dense = await generateLogs({ ...common, outDir: tmp.path('dense'), seed: 43, days: 20 / 1440, projects: 3, edgeEvents: 1000, functionEvents: 1200 });
    projects = [...spread.projects, ...dense.projects, 'edgecase', 'EdgeCase', 'quantiles'];
    functionIds = { ...spread.functionIds, ...dense.functionIds, edgecase: ['f-a', 'f-b', 'f-c'], quantiles: ['q0', 'q1', 'q2'] };
    generatedFunctions = readFunctionEvents([spread, dense].map((g) => g.byFormat.ndjson!.functionEdgeLogs)).events;
    const cases = edgeCaseEvents();
    writeLines(tmp.path('cases', 'edge', 'cases.ndjson'), cases.edge);
    writeLines(tmp.path('cases', 'functions', 'cases.ndjson'), cases.functions);

    duckdb = await createEndpoints({
      sources: { edgeLogs: join(tmp.dir, '*', 'edge', '*.ndjson'), functionEdgeLogs: join(tmp.dir, '*', 'functions', '*.ndjson') },
      now: () => clock,
      cache: false,
    });

    cluster = await started;
    const target = { database: 'logs', cluster: cluster.name };
    for (const shard of cluster.shards) {
      const loader = clickhouseLoader({ ...target, url: shard.url });
      await loader.init();
      await loader.close();
    }
    // Generated logs through `load` (the spread from NDJSON, the dense burst from Parquet), the
    // hand-made cases through `insertEvents` (what managed storage's ingest calls).
    const loader = clickhouseLoader({ ...target, url: cluster.url, batchRows: 700 });
    for (const [source, file] of [
      ['edgeLogs', spread.byFormat.ndjson!.edgeLogs],
      ['functionEdgeLogs', spread.byFormat.ndjson!.functionEdgeLogs],
      ['edgeLogs', dense.byFormat.parquet!.edgeLogs],
      ['functionEdgeLogs', dense.byFormat.parquet!.functionEdgeLogs],
    ] as const) {
      const result = await loader.load(source, file);
      expect(result.failed).toBe(0);
      loaded.rows += result.rows;
      loaded.skipped += result.skipped;
    }
    await loader.insertEvents('edgeLogs', cases.edge);
    await loader.insertEvents('functionEdgeLogs', cases.functions);
    await loader.close();
    clickhouse = await createEndpoints({
      sources: {},
      engine: clickhouseEngine({ ...target, url: cluster.url }),
      now: () => clock,
      cache: false,
    });
  });

  afterAll(async () => {
    await clickhouse?.close();
    await duckdb?.close();
    await cluster?.stop();
    tmp.cleanup();
  });

  it('loaded every event once, spread over both shards, and skipped the broken lines', async () => {
    // 2500 + 2000 + 1000 + 1200 events; broken lines only in the NDJSON (the spread).
    expect(loaded.rows).toBe(6700);
    expect(loaded.skipped).toBeGreaterThan(0);
    for (const shard of cluster.shards) {
      const local = await fetch(`${shard.url}/?query=${encodeURIComponent('SELECT count() FROM logs.edge_logs_local')}`).then((r) => r.text());
      expect(Number(local)).toBeGreaterThan(500);
    }
  });

  it('gives the same answers for every clock, project and parameter', async () => {
    const coverage = {
      queries: 0,
      nonEmpty: { 'functions.invocation-stats': 0, 'logs.all': 0, 'usage.api-counts': 0 },
      errors: 0,
      logsAtLimit: 0,
      ties: 0,
      nullStats: 0,
      withFunctionId: 0,
      bounded: 0,
    };
    for (const scenario of scenarios()) {
      clock = scenario.clock;
      const results = await inParallel(scenario.queries, async (q) => ({ q, expected: await outcome(duckdb, q), actual: await outcome(clickhouse, q) }));
      for (const { q, expected, actual } of results) {
        const label = `${scenario.label} ${q.endpoint} ${JSON.stringify(q.params)}`;
        coverage.queries++;
        if ('error' in expected) {
          coverage.errors++;
          expect(actual, label).toEqual(expected);
          continue;
        }
        expect('rows' in actual, `${label}: ${JSON.stringify(actual, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v))}`).toBe(true);
        const rows = (actual as { rows: unknown[] }).rows;
        if (rows.length) coverage.nonEmpty[q.endpoint]++;
        if (q.endpoint !== 'functions.invocation-stats') {
          expect(rows, label).toEqual(expected.rows);
          if (q.endpoint === 'logs.all' && rows.length === 100) coverage.logsAtLimit++;
          if (q.endpoint === 'logs.all' && (rows as Array<{ timestamp: string }>).some((r, i, all) => i > 0 && r.timestamp === all[i - 1]!.timestamp)) coverage.ties++;
          continue;
        }
        if (q.params.function_id && rows.length) coverage.withFunctionId++;
        coverage.nullStats += compareInvocations(rows as FunctionsInvocationStatsRow[], expected.rows as FunctionsInvocationStatsRow[], label);
        coverage.bounded += checkBounds(q, rows as FunctionsInvocationStatsRow[], scenario.clock, label);
      }
    }
    expect(coverage.queries).toBeGreaterThan(1000);
    expect(coverage.nonEmpty['functions.invocation-stats']).toBeGreaterThan(100);
    expect(coverage.nonEmpty['logs.all']).toBeGreaterThan(100);
    expect(coverage.nonEmpty['usage.api-counts']).toBeGreaterThan(100);
    expect(coverage.errors).toBeGreaterThan(0);
    expect(coverage.logsAtLimit).toBeGreaterThan(0);
    expect(coverage.ties).toBeGreaterThan(0);
    expect(coverage.nullStats).toBeGreaterThan(0);
    expect(coverage.withFunctionId).toBeGreaterThan(0);
    expect(coverage.bounded).toBeGreaterThan(200);
    // A hang guard, far above its run time (about 150 s on a machine shared by other work).
  }, 900_000);

  it('gives the same catalog', async () => {
    for (const [at, days] of [
      [NOW, 1],
      [NOW, 7],
      [new Date(NOW.getTime() - 3 * DAY), 2],
      [new Date(NOW.getTime() + 30 * DAY), 90],
    ] as const) {
      clock = at;
      const expected = await duckdb.catalog({ days });
      expect(expected.projects.length).toBeGreaterThan(0);
      expect(await clickhouse.catalog({ days })).toEqual(expected);
    }
  });

  it('reads `.` as not matching a newline, as DuckDB does', async () => {
    clock = NOW;
    const [rows] = await Promise.all([clickhouse.usageApiCounts({ project: 'rest.v1/x', interval: 'hourly' })]);
    expect(rows.reduce((n, r) => n + r.total_rest_requests, 0)).toBe(1);
  });

  it("counts every project's requests with singleProject, one without a URL too, and every project's invocations, as DuckDB does", async () => {
    // The engine drops the statements' project tests (every-project.ts): usage.api-counts' match()
    // goes; its first search, for '' then, must keep a request without a URL (the `no-url` case,
    // 7 s before NOW: in every window here).
    const options = { now: () => clock, cache: false, singleProject: true } as const;
    const single = {
      duckdb: await createEndpoints({ ...options, sources: { edgeLogs: join(tmp.dir, '*', 'edge', '*.ndjson'), functionEdgeLogs: join(tmp.dir, '*', 'functions', '*.ndjson') } }),
      clickhouse: await createEndpoints({ ...options, sources: {}, engine: clickhouseEngine({ database: 'logs', cluster: cluster.name, url: cluster.url }) }),
    };
    try {
      clock = NOW;
      // With singleProject the project may be left out (the typed methods, made for a project, need one).
      const ask = (engine: Endpoints, name: string, params: Record<string, string>): Promise<unknown[]> => engine.query(name as 'usage.api-counts', params as never).then((a) => a.result);
      for (const interval of ['hourly', 'daily', '3hr', '7day']) {
        const expected = await ask(single.duckdb, 'usage.api-counts', { interval });
        expect(expected.length, interval).toBeGreaterThan(0);
        expect(await ask(single.clickhouse, 'usage.api-counts', { interval }), interval).toEqual(expected);
      }
      const expected = (await ask(single.duckdb, 'functions.invocation-stats', { interval: '7day' })) as FunctionsInvocationStatsRow[];
      expect(expected.length).toBeGreaterThan(0);
      compareInvocations((await ask(single.clickhouse, 'functions.invocation-stats', { interval: '7day' })) as FunctionsInvocationStatsRow[], expected, 'singleProject 7day');
    } finally {
      await single.clickhouse.close();
      await single.duckdb.close();
    }
  });

  // -------------------------------------------------------------------------------------------

  /** Everything but avg/p95/p99 identical; avg within 1e-9; p95/p99 equal DuckDB's. Returns null-stat rows seen. */
  function compareInvocations(actual: FunctionsInvocationStatsRow[], expected: FunctionsInvocationStatsRow[], label: string): number {
    const strip = ({ avg_execution_time: _a, ...rest }: FunctionsInvocationStatsRow) => rest;
    expect(actual.map(strip), label).toEqual(expected.map(strip));
    let nulls = 0;
    actual.forEach((row, i) => {
      const want = expected[i]!.avg_execution_time;
      if (want === null) {
        nulls++;
        expect(row.avg_execution_time, label).toBeNull();
      } else {
        expect(Math.abs(row.avg_execution_time! - want), `${label} ${row.timestamp} avg`).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(want)));
      }
    });
    return nulls;
  }

  /** p95/p99 inside the bound of docs/semantics.md, "functions.invocation-stats", from the reference's own reading of the generated files. */
  function checkBounds(q: Query, actual: FunctionsInvocationStatsRow[], now: Date, label: string): number {
    if (!spread.projects.includes(q.params.project!) && !dense.projects.includes(q.params.project!)) return 0;
    const reference = refInvocationStats(generatedFunctions, q.params as { project: string; interval: string }, now);
    let checked = 0;
    actual.forEach((row, i) => {
      const sorted = reference.sortedTimes[i]!;
      if (!sorted.length) return;
      for (const [column, percent] of [
        ['p95_execution_time', 95],
        ['p99_execution_time', 99],
      ] as const) {
        const [lo, hi] = quantileBound(sorted, percent);
        expect(row[column]! >= lo && row[column]! <= hi, `${label} ${row.timestamp} ${column} = ${row[column]} in [${lo}, ${hi}]`).toBe(true);
        checked++;
      }
    });
    return checked;
  }

  function scenarios(): Array<{ label: string; clock: Date; queries: Query[] }> {
    const all = [...projects, UNKNOWN_PROJECT];
    const clocks: Array<[string, Date]> = [
      ['now', NOW],
      ['now-1ms', new Date(NOW.getTime() - 1)],
      ['now+1ms', new Date(NOW.getTime() + 1)],
      ['in the dense burst', new Date(NOW.getTime() - 7 * MINUTE + 123)],
      ['after-now events', new Date(NOW.getTime() + 10 * MINUTE)],
      ['midnight', new Date('2026-11-21T00:00:00Z')],
      ['mid-week', new Date('2026-11-17T07:33:21.457Z')],
      ['before the data', new Date(NOW.getTime() - 9 * DAY)],
      ['two days after', new Date(NOW.getTime() + 2 * DAY)],
      ['a second boundary', new Date('2026-11-21T11:55:00.000Z')],
      ['just before a minute', new Date('2026-11-21T11:59:59.999Z')],
    ];
    return clocks.map(([label, at], k) => ({ label, clock: at, queries: [...invocationQueries(all, k), ...logsQueries(all, k), ...usageQueries(all, k)] }));
  }

  function invocationQueries(list: string[], k: number): Query[] {
    return list.flatMap((project, p) => {
      const ids = functionIds[project] ?? [];
      const out: Query[] = rotate(FUNCTION_INTERVALS, 2, p + 2 * k).map((interval) => ({ endpoint: 'functions.invocation-stats', params: { project, interval } }));
      rotate(['', UNKNOWN_FUNCTION, ...ids], 1, p + k).forEach((function_id, i) => {
        out.push({ endpoint: 'functions.invocation-stats', params: { project, interval: FUNCTION_INTERVALS[(p + k + i) % 5]!, function_id } });
      });
      return out;
    });
  }

  function logsQueries(list: string[], k: number): Query[] {
    const at = (offset: number) => formatIso(BigInt(clock.getTime() + offset) * 1000n);
    return list.flatMap((project, p) => {
      const bounds: Array<Record<string, string>> = [
        { iso_timestamp_start: at(-3 * HOUR) },
        { iso_timestamp_end: at(-20 * MINUTE).replace('Z', '+00:00') },
        { iso_timestamp_start: at(-2 * DAY).replace('Z', '-05:00'), iso_timestamp_end: at(-HOUR) },
        { iso_timestamp_start: '', iso_timestamp_end: '' },
        { iso_timestamp_start: at(-HOUR), iso_timestamp_end: at(-2 * HOUR) },
        { iso_timestamp_end: at(-3 * HOUR).slice(0, 19) },
        { iso_timestamp_start: 'yesterday' },
      ];
      return [
        ...rotate(TIERS, 1, p + k).map((project_tier): Query => ({ endpoint: 'logs.all', params: { project, project_tier } })),
        ...rotate(bounds, 2, p + 2 * k).map((b, i): Query => ({ endpoint: 'logs.all', params: { project, project_tier: TIERS[(p + i) % TIERS.length]!, ...b } })),
      ];
    });
  }

  function usageQueries(list: string[], k: number): Query[] {
    const patterns = [
      ...list,
      `^https://(${projects[1]}|${projects[7]})\\.supabase\\.co`,
      '.',
      '',
      '^$',
      '(?i)EDGECASE',
      'rest.v1',
      'supabase\\.co/rest/v1/(todos|profiles)',
      '-app\\.com/',
      '\\d{3}',
      '(',
      '[a-',
      'a{2,1}',
      'a)|(b',
      '(?i)edge(?-i)CASE',
    ];
    return patterns.flatMap((project, p) =>
      [...rotate(USAGE_INTERVALS, 1, p + k), ...rotate(STUDIO_INTERVALS, 1, p + k), ...(p === k % patterns.length ? ['weekly'] : [])].map(
        (interval): Query => ({ endpoint: 'usage.api-counts', params: { project, interval } }),
      ),
    );
  }
});

async function outcome(ep: Endpoints, q: Query): Promise<Outcome> {
  try {
    return { rows: (await ep.query(q.endpoint as string, q.params)).result };
  } catch (error) {
    const e = error as { code?: string; param?: string };
    if (e.code !== 'invalid_parameter') throw error;
    return { error: { code: e.code, param: e.param } };
  }
}

function rotate<T>(list: readonly T[], count: number, offset: number): T[] {
  return Array.from({ length: Math.min(count, list.length) }, (_, i) => list[(((offset + i) % list.length) + list.length) % list.length]!);
}

/** Runs `work` over `items`, four at a time (the engines' default concurrency), keeping order. */
async function inParallel<T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await work(items[i]!);
      }
    }),
  );
  return out;
}
