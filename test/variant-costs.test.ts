import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDatasetStateStable } from '../src/dataset/dataset-log';
import { compactLogs, createEndpoints, defineEndpoint, defineSource, functionsInvocationStats, p, type Endpoints } from '../src/index';
import { planQuery } from '../src/definitions/plan-query';
import { normalizeParams } from '../src/definitions/params';
import { HOURLY_PAYS } from '../src/definitions/functions-invocation-stats';
import { functionEvent, tempDir, writeLines } from './support/log-files';
import { VariantCosts } from '../src/engine/duckdb/variant-costs';
import type { ReadSet } from '../src/files/source-reader';
import type { SourceDescriptor } from '../src/sources/source-descriptor';

// A variant with `cheaperWhen` runs only where the project's events in the stored files of the
// call, from its first hour on, outnumber what the variant reads by the declared margin
// (docs/definitions.md, "Variants"); elsewhere the base statement answers, the same answer.

const NOW = new Date('2026-11-21T12:00:00Z');

const gateLogs = defineSource({
  name: 'costGateLogs',
  relation: 'cost_gate_logs',
  logflare: { names: ['cost.gate.logs.test'] },
  columns: { project: 'text', status: { type: 'integer', path: '$.status' } },
  projectColumn: 'project',
  looksLike: (event) => typeof event.project === 'string',
  rollups: {
    cost_gate_logs_hourly: {
      sql: `SELECT date_trunc('hour', timestamp) AS hour, project, count(*) AS count,
                   count(*) FILTER (WHERE status >= 500) AS errors
            FROM cost_gate_logs GROUP BY ALL ORDER BY project, hour`,
    },
  },
});

/** Says which statement answered (`via`); the rollup pays where 10 + 2 x its rows < the events. */
const gateErrors = defineEndpoint({
  name: 'cost-gate.errors',
  params: { project: p.text() },
  projectParam: 'project',
  bind: () => ({ first: new Date('2026-11-21T06:00:00Z') }),
  notBefore: 'first',
  sql: {
    duckdb: `SELECT 'raw' AS via, date_trunc('hour', timestamp) AS hour, count(*) AS count, count(*) FILTER (WHERE status >= 500) AS errors
             FROM cost_gate_logs WHERE project = $project AND timestamp >= $first GROUP BY 2 ORDER BY 2`,
  },
  variants: {
    rollup: {
      duckdb: `SELECT 'rollup' AS via, hour, sum(count) AS count, sum(errors) AS errors
               FROM cost_gate_logs_hourly WHERE project = $project AND hour >= $first GROUP BY 2 ORDER BY 2`,
      cheaperWhen: { events: 10, rollupRows: { cost_gate_logs_hourly: { weight: 2, time: 'hour' } } },
    },
  },
  variant: () => 'rollup',
  columns: { via: 'text', hour: 'timestamp', count: 'integer', errors: 'integer' },
});

const gate = (ts: string, status: number, project: string, i: number) => ({ id: `${project}-${i}`, timestamp: ts, event_message: 'x', project, metadata: { status } });
/** `n` events of a project spread over an hour starting at `hour`, every fifth a 503. */
const events = (project: string, hour: string, n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => gate(new Date(Date.parse(hour) + i * 50_000).toISOString(), i % 5 === 0 ? 503 : 200, project, from + i));

describe('a variant that runs where it pays', () => {
  const tmp = tempDir();
  const out = tmp.path('parquet');
  let ep: Endpoints<typeof gateErrors>;
  const ask = async (project: string) => {
    const rows = (await ep.query('cost-gate.errors', { project })).result as Array<Record<string, unknown>>;
    return { via: [...new Set(rows.map((r) => r.via))].join(), rows: rows.map(({ via: _via, ...rest }) => rest) };
  };

  beforeAll(async () => {
    writeLines(tmp.path('gate', 'a.ndjson'), [
      // 60 events in two hours: 2 rollup rows, 10 + 4 < 60.
      ...events('big', '2026-11-21T10:00:00Z', 30),
      ...events('big', '2026-11-21T11:00:00Z', 30, 30),
      // 3 events: 10 + 2 > 3.
      ...events('small', '2026-11-21T10:00:00Z', 3),
      // 60 events before the first hour (not counted) and 3 after it: 10 + 2 > 3.
      ...events('early', '2026-11-21T01:00:00Z', 60),
      ...events('early', '2026-11-21T10:00:00Z', 3, 60),
    ]);
    ep = await createEndpoints({ sources: { costGateLogs: [tmp.path('gate', '*.ndjson'), out] }, sourceDefinitions: [gateLogs], endpoints: [gateErrors], now: () => NOW, cache: false });
  });
  afterAll(async () => {
    await ep.close();
    tmp.cleanup();
  });

  it('chooses each way by the project’s stored counts from the first hour on, and answers the same', async () => {
    // Nothing stored: the base statement, whatever the counts.
    const before = { big: await ask('big'), small: await ask('small'), early: await ask('early') };
    for (const answer of Object.values(before)) expect(answer.via).toBe('raw');
    expect(before.big.rows).toEqual([
      { hour: '2026-11-21T10:00:00.000000Z', count: 30, errors: 6 },
      { hour: '2026-11-21T11:00:00.000000Z', count: 30, errors: 6 },
    ]);
    expect(before.early.rows).toEqual([{ hour: '2026-11-21T10:00:00.000000Z', count: 3, errors: 1 }]);

    await compactLogs({ source: 'costGateLogs', sourceDefinitions: [gateLogs], inputs: tmp.path('gate', '*.ndjson'), outDir: out });
    const after = { big: await ask('big'), small: await ask('small'), early: await ask('early') };
    expect(after.big).toEqual({ via: 'rollup', rows: before.big.rows });
    expect(after.small).toEqual({ via: 'raw', rows: before.small.rows });
    // Its 60 events before the first hour would make the rollup pay if they were counted.
    expect(after.early).toEqual({ via: 'raw', rows: before.early.rows });
    // Kept per file version: asked again, the same choice.
    expect((await ask('big')).via).toBe('rollup');
    expect((await ask('nobody')).rows).toEqual([]);

    // A data file cut short cannot be counted for a project not counted yet: the base statement
    // runs, which leaves the damaged file out as every statement's read does (no error). The
    // counts kept for its committed version still choose the rollup, which is intact.
    const [file] = [...readDatasetStateStable(out).files.values()];
    const path = join(out, file!.path);
    const saved = readFileSync(path);
    writeFileSync(path, saved.subarray(0, 100));
    try {
      const answer = await ep.query('cost-gate.errors', { project: 'never-counted' });
      expect(answer.result).toEqual([]);
      expect(answer.skippedFiles?.length).toBe(1);
      expect(await ask('big')).toEqual({ via: 'rollup', rows: before.big.rows });
    } finally {
      writeFileSync(path, saved);
    }
  });

  it('refuses a cost that cannot work', () => {
    const base = {
      name: 'c',
      params: { project: p.text() },
      projectParam: 'project',
      sql: { duckdb: 'SELECT 1 AS n WHERE $project IS NOT NULL' },
      columns: { n: 'integer' },
      variant: () => 'a',
    } as const;
    const variant = (cheaperWhen: unknown) => ({ a: { duckdb: 'SELECT 2 AS n WHERE $project IS NOT NULL', cheaperWhen } });
    for (const bad of [
      { events: -1, rollupRows: { r: { weight: 1, time: 'hour' } } },
      { events: 1, rollupRows: {} },
      { events: 1, rollupRows: { r: { weight: 1 } } },
      { events: 1, rollupRows: { 'r r': { weight: 1, time: 'hour' } } },
    ])
      expect(() => defineEndpoint({ ...base, variants: variant(bad) as never })).toThrow(/cheaperWhen must be/);
    const { projectParam: _p, ...unprojected } = base;
    expect(() => defineEndpoint({ ...unprojected, variants: variant({ events: 1, rollupRows: { r: { weight: 1, time: 'hour' } } }) as never })).toThrow(/needs projectParam/);
  });
});

describe('the counts a variant’s cost is judged by', () => {
  it('are kept per file version with a CRC-32, and counted again for a file without one', async () => {
    const costs = new VariantCosts();
    const counted: string[] = [];
    const count = async (path: string) => (counted.push(path), new Map([[0, path.includes('data') ? 100 : 10]]));
    const cost = { events: 0, rollupRows: { r: { weight: 1, time: 'hour' } } };
    const file = (crc32?: number) => ({
      path: '/d/data.parquet',
      size: 5,
      ...(crc32 === undefined ? {} : { crc32 }),
      rollups: { r: { path: '/d/r.parquet', bytes: 3, ...(crc32 === undefined ? {} : { crc32 }) } },
    });
    const read = (crc32?: number) => ({ parquet: [file(crc32)] }) as unknown as ReadSet;
    const source = { projectColumn: 'project' } as SourceDescriptor;
    for (let i = 0; i < 2; i++) expect(await costs.pays(cost, source, read(7), 'a', undefined, count)).toBe(true);
    expect(counted).toEqual(['/d/data.parquet', '/d/r.parquet']);
    for (let i = 0; i < 2; i++) expect(await costs.pays(cost, source, read(), 'a', undefined, count)).toBe(true);
    expect(counted).toHaveLength(6);
  });
});

describe('functions.invocation-stats: hour buckets from the hours’ summaries only where they pay', () => {
  const tmp = tempDir();
  const out = tmp.path('parquet');
  // The built-in's statements and chooser with a margin fitted to a test's few thousand events.
  const scaled = { ...functionsInvocationStats, name: 'stats.scaled', id: '4f3c2a1e-7b6d-4c5e-9f8a-1b2c3d4e5f60', variantCosts: { hourly: { ...HOURLY_PAYS, events: 1000 } } };
  const hourly = { ...functionsInvocationStats, name: 'stats.hourly', id: '4f3c2a1e-7b6d-4c5e-9f8a-1b2c3d4e5f61', variantOf: () => 'hourly', variantCosts: undefined };
  const raw = { ...functionsInvocationStats, name: 'stats.raw', id: '4f3c2a1e-7b6d-4c5e-9f8a-1b2c3d4e5f62', variantOf: () => null, variantCosts: undefined };
  let ep: Endpoints;

  beforeAll(async () => {
    const lines = [];
    // 'big': 1,500 invocations an hour for two hours, values in whole ms, distinct enough that the
    // summaries keep one value in 7; 'small': 100 an hour, every value kept.
    for (const [project, perHour] of [
      ['big', 1500],
      ['small', 100],
    ] as const)
      for (const hour of ['2026-11-21T09:00:00Z', '2026-11-21T10:00:00Z'])
        for (let i = 0; i < perHour; i++)
          lines.push(functionEvent({ timestamp: new Date(Date.parse(hour) + Math.floor((i * 3_600_000) / perHour)).toISOString(), project, ms: (i * 7919) % 1009, status: i % 9 === 0 ? 500 : 200 }));
    writeLines(tmp.path('fn', 'a.ndjson'), lines);
    await compactLogs({ source: 'functionEdgeLogs', inputs: tmp.path('fn', '*.ndjson'), outDir: out });
    ep = await createEndpoints({ sources: { functionEdgeLogs: out }, endpoints: [scaled, hourly, raw] as never, now: () => NOW, cache: false });
  });
  afterAll(async () => {
    await ep.close();
    tmp.cleanup();
  });

  it('the built-in declares the hourly variant’s cost for hour buckets', () => {
    const planned = planQuery(functionsInvocationStats, normalizeParams(functionsInvocationStats, { project: 'p', interval: '1day' }), NOW).statement;
    expect(planned.sql.duckdb).toMatch(/FROM function_edge_logs_summary/);
    expect(planned.cheaperWhen).toEqual(HOURLY_PAYS);
    expect(planned.fallback).toBe(functionsInvocationStats.sql);
    expect(planQuery(functionsInvocationStats, normalizeParams(functionsInvocationStats, { project: 'p', interval: '7day' }), NOW).statement.cheaperWhen).toBeUndefined();
  });

  it('runs the summaries for the busy project (its p95/p99 inside the rank bound) and the raw statement for the small one', async () => {
    const q = async (name: string, project: string) => (await ep.query(name as never, { project, interval: '1day' } as never)).result as Array<Record<string, unknown>>;
    // 3,000 invocations against 1,000 + 3 x about 430 summary rows: the summaries.
    const big = { scaled: await q('stats.scaled', 'big'), hourly: await q('stats.hourly', 'big'), raw: await q('stats.raw', 'big') };
    expect(big.scaled).toEqual(big.hourly);
    expect(big.scaled).not.toEqual(big.raw);
    const rest = (rows: Array<Record<string, unknown>>) => rows.map(({ p95_execution_time: _a, p99_execution_time: _b, ...r }) => r);
    expect(rest(big.scaled)).toEqual(rest(big.raw));
    for (const row of big.scaled.filter((r) => r.count !== 0)) {
      const hour = Date.parse(String(row.timestamp));
      const sorted = Array.from({ length: 1500 }, (_, i) => (i * 7919) % 1009).sort((a, b) => a - b);
      for (const [column, q95] of [
        ['p95_execution_time', 0.95],
        ['p99_execution_time', 0.99],
      ] as const) {
        const lo = sorted[Math.max(1, Math.floor((q95 - 0.01) * 1500)) - 1]!;
        const hi = sorted[Math.min(1500, Math.ceil((q95 + 0.01) * 1500)) - 1]!;
        expect(row[column] as number, `${column} at ${new Date(hour).toISOString()}`).toBeGreaterThanOrEqual(lo);
        expect(row[column] as number).toBeLessThanOrEqual(hi);
      }
    }
    // 200 invocations, every value kept (400 rows x 3 + 1,000 > 200): the raw statement's exact answer.
    const small = { scaled: await q('stats.scaled', 'small'), raw: await q('stats.raw', 'small') };
    expect(small.scaled).toEqual(small.raw);
    expect(small.scaled.some((r) => r.count === 100)).toBe(true);
  });
});
