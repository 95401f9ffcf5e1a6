import { describe, expect, it } from 'vitest';
import type { EngineTarget } from '../src/engine/engine';
import { functionsInvocationStats, InvalidParameterError, InvalidSqlError, logsAll, usageApiCounts } from '../src/index';
import { normalizeParams } from '../src/definitions/params';
import { planQuery } from '../src/definitions/plan-query';
import { CallerSqlCheck } from '../src/query/check-caller-sql';
import { compileCall } from '../src/query/compile-query';
import { neutralSqlParser } from '../src/query/sql-parser';
import { BUILT_IN_SOURCE_SET } from '../src/sources/built-ins';

// A request is compiled once, for an engine's target, with no engine at all: text in, text out
// (docs/architecture.md). The engines only run what comes out.

const NOW = new Date('2026-11-21T12:00:00Z');
const DUCKDB: EngineTarget = { dialect: 'duckdb' };
const CLICKHOUSE: EngineTarget = {
  dialect: 'clickhouse',
  sources: BUILT_IN_SOURCE_SET,
  tables: new Map([
    ['edge_logs', '`logs`.`edge_logs`'],
    ['function_edge_logs', '`logs`.`function_edge_logs`'],
  ]),
};
const STUDIO_SQL = 'select id, timestamp, event_message from edge_logs where event_message like "%GET%" order by timestamp desc limit 10';

describe("a caller's SQL checked for a target, on the parser's tree", () => {
  it('gives the same cache key for a BigQuery SELECT whatever the target, and each target its own text', async () => {
    const duck = await new CallerSqlCheck(DUCKDB, neutralSqlParser, 'bigquery').check(planQuery(logsAll, params(logsAll), NOW).statement, STUDIO_SQL, 100, BUILT_IN_SOURCE_SET);
    const ch = await new CallerSqlCheck(CLICKHOUSE, neutralSqlParser, 'bigquery').check(planQuery(logsAll, params(logsAll), NOW).statement, STUDIO_SQL, 100, BUILT_IN_SOURCE_SET);
    // The key is the digest of the checked DuckDB tree: one rule set, one key, for both engines.
    expect(ch.key).toBe(duck.key);
    expect(duck.sql).toMatch(/FROM "?edge_logs"?/i);
    expect(ch.sql).toContain('logs`.`edge_logs');
    expect(ch.columns?.map((c) => c.name)).toEqual(['id', 'timestamp', 'event_message']);
  });

  it("refuses what the sandbox refuses, and on ClickHouse DuckDB's dialect, before anything runs", async () => {
    const statement = planQuery(logsAll, params(logsAll), NOW).statement;
    const duck = new CallerSqlCheck(DUCKDB, neutralSqlParser);
    await expect(duck.check(statement, "select * from read_csv('/etc/passwd')", 100, BUILT_IN_SOURCE_SET)).rejects.toBeInstanceOf(InvalidSqlError);
    await expect(duck.check(statement, 'select 1; select 2', 100, BUILT_IN_SOURCE_SET)).rejects.toMatchObject({ code: 'invalid_sql' });
    const ch = new CallerSqlCheck(CLICKHOUSE, neutralSqlParser, 'duckdb');
    await expect(ch.check(statement, 'select 1', 100, BUILT_IN_SOURCE_SET)).rejects.toBeInstanceOf(InvalidParameterError);
  });
});

describe('a call compiled for a target', () => {
  it('on DuckDB: the variant, its fallback and what each reads, found once', () => {
    const query = compileCall(functionsInvocationStats, planQuery(functionsInvocationStats, params(functionsInvocationStats, { interval: '7day' }), NOW), DUCKDB, BUILT_IN_SOURCE_SET);
    expect(query.statement.sql).toMatch(/FROM function_edge_logs_hourly/);
    expect(query.statement.reads).toEqual([{ source: 'functionEdgeLogs', relation: false, rollups: ['function_edge_logs_hourly', 'function_edge_logs_daily_summary'] }]);
    expect(query.fallback?.reads).toEqual([{ source: 'functionEdgeLogs', relation: true, rollups: [] }]);
    expect(query.params.max_rows).toBe(functionsInvocationStats.maxRows);
    expect(query.caller).toBeUndefined();
  });

  it("on DuckDB: a caller's SELECT over source tables reads the sources it names, no others, composed once", async () => {
    const checked = await new CallerSqlCheck(DUCKDB, neutralSqlParser, 'bigquery').check(planQuery(logsAll, params(logsAll), NOW).statement, STUDIO_SQL, logsAll.maxRows, BUILT_IN_SOURCE_SET);
    // Found once, when the text is checked (and kept with it), not on each run.
    expect(checked.sources).toEqual(['edgeLogs']);
    const query = compileCall(logsAll, planQuery(logsAll, params(logsAll), NOW), DUCKDB, BUILT_IN_SOURCE_SET, checked);
    expect(query.statement.reads.map((r) => r.source)).toEqual(['edgeLogs']);
    expect(query.statement.shadows).toBe(true);
    // The statement's CTEs, then the caller's SELECT under the wrapper capping its rows.
    expect(query.caller).toMatch(/^WITH edge_logs AS \(/);
    expect(query.caller).toContain(`\nSELECT * FROM (\n${checked.sql}\n) AS sandboxed LIMIT ${logsAll.maxRows}`);
  });

  it("on DuckDB: a caller's checked SELECT compiled once per endpoint, target, source set and row cap, each call with its own values", async () => {
    const checked = await new CallerSqlCheck(DUCKDB, neutralSqlParser, 'bigquery').check(planQuery(logsAll, params(logsAll), NOW).statement, STUDIO_SQL, logsAll.maxRows, BUILT_IN_SOURCE_SET);
    const plan = (extra: Record<string, string>) => planQuery(logsAll, params(logsAll, extra), NOW);
    const first = compileCall(logsAll, plan({ iso_timestamp_start: '2026-11-21T10:00:00Z' }), DUCKDB, BUILT_IN_SOURCE_SET, checked);
    const again = compileCall(logsAll, plan({ iso_timestamp_start: '2026-11-21T11:00:00Z' }), DUCKDB, BUILT_IN_SOURCE_SET, checked);
    // The same texts, the same list of sources (not built again), each call's own values.
    expect(again.caller).toBe(first.caller);
    expect(again.sources).toBe(first.sources);
    expect(again.params.iso_timestamp_start).not.toEqual(first.params.iso_timestamp_start);
    expect(again.notBefore).not.toEqual(first.notBefore);
    expect({ ...again, params: first.params, notBefore: first.notBefore }).toEqual(first);
    // Another row cap, source set or target is compiled anew, as it was before it was kept.
    const capped = compileCall(logsAll, { ...plan({}), maxRows: 7 }, DUCKDB, BUILT_IN_SOURCE_SET, checked);
    expect(capped.caller).toContain(') AS sandboxed LIMIT 7');
    expect(capped.params.max_rows).toBe(7);
    // A set whose typed fields grew (a discovered field): its own descriptors, its typed column read.
    const grown = BUILT_IN_SOURCE_SET.withTypedPaths(() => ['request.referer']);
    const otherSet = compileCall(logsAll, plan({}), DUCKDB, grown, checked);
    expect(otherSet.sources).toEqual([grown.get('edgeLogs')]);
    // Its text the same: its tables have the columns the caller's SELECT names, and it names none
    // the set added (test/caller-columns.test.ts).
    expect(otherSet.caller).toBe(first.caller);
    expect(otherSet.caller).not.toContain('request.referer');
    // The heads found usable at start under the template: another compilation (its newest-first bound says so).
    const withHeads = compileCall(logsAll, plan({}), DUCKDB, BUILT_IN_SOURCE_SET, checked, { statement: true, sourceTables: true, hourCounts: true });
    expect(withHeads.newestFirst?.heads).toBe(true);
    expect(first.newestFirst?.heads).toBe(false);
    expect(compileCall(logsAll, plan({}), DUCKDB, BUILT_IN_SOURCE_SET, checked).newestFirst?.heads).toBe(false);
    const otherTarget = compileCall(logsAll, plan({}), { dialect: 'duckdb' }, BUILT_IN_SOURCE_SET, checked);
    expect(otherTarget.sources).not.toBe(first.sources);
    expect(otherTarget.sources).toEqual(first.sources);
  });

  it('on ClickHouse: its tables named, comments gone, and with the project bound NULL its tests dropped', () => {
    const one = compileCall(usageApiCounts, planQuery(usageApiCounts, params(usageApiCounts, { interval: '1day' }), NOW), CLICKHOUSE, BUILT_IN_SOURCE_SET);
    expect(one.statement.sql).toContain('FROM `logs`.`edge_logs`');
    expect(one.statement.sql).not.toMatch(/--/);
    expect(one.statement.sql).toContain('{project:String}');
    const every = compileCall(usageApiCounts, planQuery(usageApiCounts, { ...params(usageApiCounts, { interval: '1day' }), project: null }, NOW), CLICKHOUSE, BUILT_IN_SOURCE_SET);
    expect(every.statement.sql).not.toContain('{project:String}');
  });

  it("has no SQL for a dialect a statement lacks: the engine's error, named", () => {
    const duckOnly = { ...usageApiCounts, sql: { duckdb: usageApiCounts.sql.duckdb }, variants: undefined, variantOf: undefined };
    expect(() => compileCall(duckOnly, planQuery(duckOnly, params(duckOnly, { interval: '1day' }), NOW), CLICKHOUSE, BUILT_IN_SOURCE_SET)).toThrow(
      expect.objectContaining({ code: 'query_failed', message: 'usage.api-counts has no ClickHouse SQL.' }),
    );
  });
});

function params(definition: Parameters<typeof normalizeParams>[0], extra: Record<string, string> = {}) {
  return normalizeParams(definition, { project: 'p', project_tier: 'PRO', ...extra });
}
