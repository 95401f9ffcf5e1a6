import { DuckDBInstance, DuckDBTimestampValue, TIMESTAMP, VARCHAR, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Prng } from '../src/fixtures/prng';
import { querySql } from '../src/sql/query-files';

// The quantile summaries of function_edge_logs (docs/definitions.md, "Rollups"), per hour and per
// day: summaries of any split of the invocations (hours or days, functions, files), merged by
// functions.invocation-stats' hourly variant (hour and day buckets) and its daily variant (day
// buckets), give p95/p99 inside the rank bound of docs/semantics.md, and exactly quantile_disc's
// answer while every group has fewer than 400 values.

const ROLLUP = querySql('duckdb', 'function_edge_logs_hourly');
const SUMMARY = querySql('duckdb', 'function_edge_logs_summary');
const DAILY_SUMMARY = querySql('duckdb', 'function_edge_logs_daily_summary');
const HOURLY = querySql('duckdb', 'functions.invocation-stats.hourly');
const DAILY = querySql('duckdb', 'functions.invocation-stats.daily');
const BASE = Date.UTC(2026, 10, 20) * 1000;

let connection: DuckDBConnection;
beforeAll(async () => {
  connection = await (await DuckDBInstance.create(':memory:')).connect();
});
afterAll(() => connection.closeSync());

interface Trial {
  rows: number;
  functions: number;
  distinct: number;
  files: number;
  seed: number;
}

/** Invocations over two days, split into `files` parts, each part rolled up on its own. */
async function rollUp(t: Trial): Promise<void> {
  await connection.run(`CREATE OR REPLACE TABLE events AS
    SELECT make_timestamp(${BASE} + (hash(i, ${t.seed}, 1) % ${2 * 86_400})::BIGINT * 1000000) AS timestamp,
           'p' AS project_ref, 'f' || (hash(i, ${t.seed}, 2) % ${t.functions}) AS function_id,
           CASE WHEN hash(i, ${t.seed}, 3) % 20 = 0 THEN NULL ELSE (hash(i, ${t.seed}, 4) % ${t.distinct})::DOUBLE / 7 END AS execution_time_ms,
           CASE WHEN hash(i, ${t.seed}, 5) % 9 = 0 THEN 500 ELSE 200 END AS status_code,
           (hash(i, ${t.seed}, 6) % ${t.files})::INTEGER AS part
    FROM range(${t.rows}) r(i)`);
  const parts = (sql: string) => Array.from({ length: t.files }, (_, k) => `SELECT * FROM (WITH function_edge_logs AS (SELECT * FROM events WHERE part = ${k})\n${sql}\n)`);
  await connection.run(`CREATE OR REPLACE TABLE rollup AS ${parts(ROLLUP).join('\nUNION ALL\n')}`);
  await connection.run(`CREATE OR REPLACE TABLE summary AS ${parts(SUMMARY).join('\nUNION ALL\n')}`);
  await connection.run(`CREATE OR REPLACE TABLE daily_summary AS ${parts(DAILY_SUMMARY).join('\nUNION ALL\n')}`);
}

async function rows(sql: string, unit: string, functionId: string | null): Promise<Record<string, unknown>[]> {
  const values = { project: 'p', function_id: functionId, unit, first: new DuckDBTimestampValue(BigInt(BASE)), end: new DuckDBTimestampValue(BigInt(BASE + 2 * 86_400_000_000)), max_rows: 1000n };
  const types = { project: VARCHAR, function_id: VARCHAR, unit: VARCHAR, first: TIMESTAMP, end: TIMESTAMP };
  return (await connection.runAndReadAll(sql, values, types)).getRowObjects();
}

/** A variant's answer over the rollups of the parts: `hourly` (hour and day buckets) or `daily` (day buckets). */
const merged = (variant: 'hourly' | 'daily', unit: string, functionId: string | null) =>
  rows(
    (variant === 'hourly' ? HOURLY : DAILY).replace(
      /^((?:\s*--[^\n]*\n)*)\s*WITH\s/,
      '$1WITH function_edge_logs_hourly AS (SELECT * FROM rollup), function_edge_logs_summary AS (SELECT * FROM summary), function_edge_logs_daily_summary AS (SELECT * FROM daily_summary),\n',
    ),
    unit,
    functionId,
  );

/** Each variant with the buckets it answers. */
const VARIANTS = [
  ['hourly', 'hour'],
  ['hourly', 'day'],
  ['daily', 'day'],
] as const;

/** Each bucket's timed values, sorted, and quantile_disc's answers. */
const raw = (unit: string, functionId: string | null) =>
  rows(
    `
  SELECT date_trunc($unit, timestamp) AS timestamp, count(*) AS count,
         list(execution_time_ms ORDER BY execution_time_ms) FILTER (WHERE execution_time_ms IS NOT NULL) AS sorted,
         quantile_disc(execution_time_ms, 0.95) AS p95, quantile_disc(execution_time_ms, 0.99) AS p99
  FROM events
  WHERE project_ref = $project AND ($function_id IS NULL OR function_id = $function_id) AND timestamp >= $first AND timestamp < $end
  GROUP BY 1 ORDER BY 1 LIMIT $max_rows`,
    unit,
    functionId,
  );

/** Whether a value lies within the rank bound: [v_lo, v_hi] of the sorted values. */
function inBound(value: number, sorted: readonly number[], q: number): boolean {
  const n = sorted.length;
  const lo = Math.max(1, Math.floor((q - 0.01) * n));
  const hi = Math.min(n, Math.ceil((q + 0.01) * n));
  return value >= sorted[lo - 1]! && value <= sorted[hi - 1]!;
}

async function compare(variant: 'hourly' | 'daily', unit: string, functionId: string | null, exact: boolean): Promise<void> {
  const expected = await raw(unit, functionId);
  const got = await merged(variant, unit, functionId);
  expect(got.map((r) => [String(r.timestamp), r.count])).toEqual(expected.map((r) => [String(r.timestamp), r.count]));
  for (const [i, row] of got.entries()) {
    const sorted = (expected[i]!.sorted as { items: number[] } | null)?.items ?? [];
    for (const [column, q, disc] of [
      ['p95_execution_time', 0.95, 'p95'],
      ['p99_execution_time', 0.99, 'p99'],
    ] as const) {
      if (exact) expect(row[column]).toBe(expected[i]![disc]);
      else expect(inBound(row[column] as number, sorted, q), `${column} of bucket ${String(row.timestamp)}: ${row[column]} (n ${sorted.length})`).toBe(true);
    }
  }
}

describe('the quantile summaries, per hour and per day', () => {
  it('merged over random splits (hours, functions, files), p95 and p99 stay inside the rank bound', async () => {
    const prng = new Prng(20);
    let largestStep = 0;
    let largestDailyStep = 0;
    for (let trial = 0; trial < 12; trial++) {
      const t: Trial = {
        rows: 20_000 + prng.int(200_000),
        functions: 1 + prng.int(4),
        distinct: prng.pick([3, 50, 1000, 1_000_000]),
        files: 1 + prng.int(4),
        seed: prng.uint32(),
      };
      await rollUp(t);
      largestStep = Math.max(largestStep, Number((await connection.runAndReadAll('SELECT max(weight) AS s FROM summary')).getRowObjects()[0]!.s));
      largestDailyStep = Math.max(largestDailyStep, Number((await connection.runAndReadAll('SELECT max(weight) AS s FROM daily_summary')).getRowObjects()[0]!.s));
      for (const [variant, unit] of VARIANTS) {
        await compare(variant, unit, null, false);
        await compare(variant, unit, 'f0', false);
      }
    }
    // The trials did compress: summaries kept one value in several, a day's more than an hour's.
    expect(largestStep).toBeGreaterThan(5);
    expect(largestDailyStep).toBeGreaterThan(largestStep);
  });

  it("while every group has fewer than 400 values, p95 and p99 are exactly quantile_disc's", async () => {
    const prng = new Prng(21);
    for (let trial = 0; trial < 8; trial++) {
      await rollUp({ rows: 1000 + prng.int(15_000), functions: 1 + prng.int(4), distinct: prng.pick([3, 1000]), files: 1 + prng.int(4), seed: prng.uint32() });
      for (const unit of ['hour', 'day']) {
        await compare('hourly', unit, null, true);
        await compare('hourly', unit, 'f1', true);
      }
    }
  });

  it("while every day's group has fewer than 400 values, the daily variant's p95 and p99 are exactly quantile_disc's", async () => {
    const prng = new Prng(22);
    for (let trial = 0; trial < 8; trial++) {
      await rollUp({ rows: 100 + prng.int(500), functions: 1 + prng.int(4), distinct: prng.pick([3, 1000]), files: 1 + prng.int(4), seed: prng.uint32() });
      expect(Number((await connection.runAndReadAll('SELECT max(weight) AS s FROM daily_summary')).getRowObjects()[0]!.s)).toBe(1);
      await compare('daily', 'day', null, true);
      await compare('daily', 'day', 'f1', true);
    }
  });
});
