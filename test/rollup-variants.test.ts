import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndpoints, defineEndpoint, defineSource, functionsInvocationStats, p, type Endpoints } from '../src/index';
import { planQuery } from '../src/definitions/plan-query';
import { normalizeParams } from '../src/definitions/params';
import { functionEvent, tempDir, writeLines } from './support/log-files';
import { hourlyWhenStored } from '../src/definitions/functions-invocation-stats';

// Rollups declared on a source and endpoint variants chosen per call (docs/definitions.md,
// "Rollups" and "Variants").

const NOW = new Date('2026-11-21T12:00:00Z');

const gateLogs = defineSource({
  name: 'gateLogs',
  relation: 'gate_logs',
  logflare: { names: ['gate.logs.test'] },
  columns: { project: 'text', status: { type: 'integer', path: '$.status' } },
  projectColumn: 'project',
  rollups: {
    gate_logs_hourly: {
      sql: `SELECT date_trunc('hour', timestamp) AS hour, project, count(*) AS count,
                   count(*) FILTER (WHERE status >= 500) AS errors
            FROM gate_logs GROUP BY ALL`,
    },
  },
});

const gateErrors = defineEndpoint({
  name: 'gate.errors',
  params: { project: p.text(), read: p.oneOf(['raw', 'rollup'], { otherwise: 'raw' }).default('raw') },
  sql: {
    duckdb: `SELECT date_trunc('hour', timestamp) AS hour, count(*) AS count, count(*) FILTER (WHERE status >= 500) AS errors
             FROM gate_logs WHERE project = $project AND $read IS NOT NULL GROUP BY 1 ORDER BY 1`,
  },
  variants: {
    rollup: {
      duckdb: `SELECT hour, sum(count) AS count, sum(errors) AS errors
               FROM gate_logs_hourly WHERE project = $project AND $read IS NOT NULL GROUP BY 1 ORDER BY 1`,
    },
  },
  variant: ({ read }) => (read === 'rollup' ? 'rollup' : null),
  columns: { hour: 'timestamp', count: 'integer', errors: 'integer' },
});

describe('a user source with a rollup, read by an endpoint variant', () => {
  const tmp = tempDir();
  let ep: Endpoints<typeof gateErrors>;

  beforeAll(async () => {
    const gate = (ts: string, status: number, project = 'abc') => ({ id: `${ts}-${status}-${project}`, timestamp: ts, event_message: 'x', project, metadata: { status } });
    writeLines(tmp.path('gate', 'a.ndjson'), [gate('2026-11-21T10:05:00Z', 200), gate('2026-11-21T10:35:00Z', 503), gate('2026-11-21T11:10:00Z', 500)]);
    writeLines(tmp.path('gate', 'b.ndjson'), [gate('2026-11-21T10:50:00Z', 502), gate('2026-11-21T11:20:00Z', 200, 'other')]);
    ep = await createEndpoints({
      sources: { gateLogs: tmp.path('gate', '*.ndjson') },
      sourceDefinitions: [gateLogs],
      endpoints: [gateErrors],
      now: () => NOW,
      cache: false,
    });
  });
  afterAll(async () => {
    await ep.close();
    tmp.cleanup();
  });

  it('the rollup, re-aggregated, answers as the raw relation does', async () => {
    const expected = [
      { hour: '2026-11-21T10:00:00.000000Z', count: 3, errors: 2 },
      { hour: '2026-11-21T11:00:00.000000Z', count: 1, errors: 1 },
    ];
    expect((await ep.query('gate.errors', { project: 'abc' })).result).toEqual(expected);
    expect((await ep.query('gate.errors', { project: 'abc', read: 'rollup' })).result).toEqual(expected);
  });

  it('each call runs the statement its variant chooser names', () => {
    const sqlOf = (definition: typeof functionsInvocationStats, interval: string) => planQuery(definition, normalizeParams(definition, { project: 'p', interval }), NOW).statement.sql.duckdb;
    const hourly = { ...functionsInvocationStats, variantOf: hourlyWhenStored };
    for (const interval of ['1day', '7day', 'anything']) expect(sqlOf(hourly, interval)).toMatch(/FROM function_edge_logs_hourly/);
    for (const interval of ['5min', '15min', '1hr']) expect(sqlOf(hourly, interval)).toMatch(/FROM function_edge_logs\n/);
    // The built-in reads the rollups for day buckets (where they measured faster): the hourly
    // rollup's counts and the days' quantile summaries, not the hours'; for hour buckets the
    // hours' summaries, which the engine runs only where they pay (test/variant-costs.test.ts);
    // it falls back to its own statement where they are not stored.
    expect(sqlOf(functionsInvocationStats, '7day')).toMatch(/FROM function_edge_logs_hourly/);
    expect(sqlOf(functionsInvocationStats, '7day')).toMatch(/FROM function_edge_logs_daily_summary/);
    expect(sqlOf(functionsInvocationStats, '7day')).not.toMatch(/FROM function_edge_logs_summary/);
    expect(sqlOf(functionsInvocationStats, '1day')).toMatch(/FROM function_edge_logs_summary/);
    expect(sqlOf(functionsInvocationStats, '1hr')).toMatch(/FROM function_edge_logs\n/);
    const planned = planQuery(functionsInvocationStats, normalizeParams(functionsInvocationStats, { project: 'p', interval: '7day' }), NOW).statement;
    expect(planned.fallback).toBe(functionsInvocationStats.sql);
    // The ClickHouse statement is the endpoint's own in every variant.
    expect(planQuery(hourly, normalizeParams(hourly, { project: 'p', interval: '7day' }), NOW).statement.sql.clickhouse).toBe(functionsInvocationStats.sql.clickhouse);
  });

  it('invocation-stats over the hourly rollup answers exactly as over the invocations (small hours: exact quantiles)', async () => {
    const events = [];
    for (let i = 0; i < 600; i++) {
      const at = new Date(NOW.getTime() - ((i * 7919) % (6 * 86_400)) * 1000).toISOString();
      events.push(functionEvent({ timestamp: at, functionId: `f${i % 3}`, ms: i % 17 === 0 ? null : ((i * 37) % 101) + 0.5, status: i % 5 === 0 ? 500 : 200 }));
    }
    writeLines(tmp.path('fn', 'a.ndjson'), events);
    const hourly = { ...functionsInvocationStats, name: 'stats.hourly', id: '8b3c8f5e-1f52-4a0c-9d0e-2b7f6f1c2a11', variantOf: hourlyWhenStored };
    const both = await createEndpoints({ sources: { functionEdgeLogs: tmp.path('fn', '*.ndjson') }, endpoints: [hourly as never], now: () => NOW, cache: false });
    try {
      for (const params of [{ interval: '1day' }, { interval: '7day' }, { interval: '7day', function_id: 'f1' }]) {
        const expected = (await both.query('functions.invocation-stats', { project: 'abc', ...params })).result;
        expect(expected.length).toBeGreaterThan(1);
        expect((await both.query('stats.hourly', { project: 'abc', ...params })).result).toEqual(expected);
      }
    } finally {
      await both.close();
    }
  });

  it('refuses variants that cannot work: at definition, and at start when their SQL does not prepare', async () => {
    const base = { name: 'v', params: { project: p.text() }, sql: { duckdb: 'SELECT 1 AS n WHERE $project IS NOT NULL' }, columns: { n: 'integer' } } as const;
    expect(() => defineEndpoint({ ...base, variants: { a: { duckdb: 'SELECT 1 AS n' } } } as never)).toThrow(/variants and variant go together/);
    expect(() => defineEndpoint({ ...base, variants: { a: { duckdb: 'SELECT $nope AS n WHERE $project IS NOT NULL' } }, variant: () => 'a' })).toThrow(/\$nope/);
    expect(() => defineEndpoint({ ...base, variants: { a: { duckdb: 'SELECT 1 AS n' } }, variant: () => 'a' })).toThrow(/project is declared but its duckdb SQL never uses it/);
    expect(() => defineEndpoint({ ...base, variants: { 'a b': { duckdb: 'SELECT 1' } }, variant: () => null })).toThrow(/variant name/);
    const broken = defineEndpoint({ ...base, variants: { a: { duckdb: 'SELECT n FROM nowhere WHERE $project IS NOT NULL' } }, variant: () => 'a' });
    await expect(createEndpoints({ sources: {}, endpoints: [broken] })).rejects.toThrow(/variant a\) does not prepare/);
    const unknown = defineEndpoint({ ...base, variants: { a: { duckdb: 'SELECT 2 AS n WHERE $project IS NOT NULL' } }, variant: () => 'b' });
    expect(() => planQuery(unknown, normalizeParams(unknown, { project: 'x' }), NOW)).toThrow(/chose variant "b", which it does not declare/);
  });

  it('refuses a rollup that is not over its relation, or named like another relation', async () => {
    const source = { name: 'x', relation: 'x_logs', columns: { project: 'text' }, projectColumn: 'project' } as const;
    expect(() => defineSource({ ...source, rollups: { x_logs: { sql: 'SELECT 1 FROM x_logs' } } })).toThrow(/rollup name/);
    expect(() => defineSource({ ...source, rollups: { x_hourly: { sql: 'SELECT 1' } } })).toThrow(/must be a SELECT over x_logs/);
    expect(() => defineSource({ ...source, rollups: { x_hourly: { sql: 'SELECT 1 FROM x_logs', rest: 'SELECT 1' } } })).toThrow(/must be a SELECT over x_logs/);
    const clash = defineSource({ ...source, name: 'clash', relation: 'clash_logs', rollups: { function_edge_logs_hourly: { sql: 'SELECT * FROM clash_logs' } } });
    await expect(createEndpoints({ sources: {}, sourceDefinitions: [clash] })).rejects.toThrow(/shares its name, relation \(or a rollup's\).*"functionEdgeLogs"/);
  });
});
