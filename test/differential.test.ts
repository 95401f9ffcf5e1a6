/**
 * Differential test: the library (DuckDB, over NDJSON and over Parquet) against the plain
 * TypeScript reference of test/reference/, on generated data, for many clocks, projects and
 * parameters. Everything must be identical, except p95/p99, which must lie within the
 * accuracy bound (docs/semantics.md, "functions.invocation-stats"), and avg, within 1e-9 relative.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateLogs, type GeneratedLogs } from '../src/fixtures/generate-logs';
import { createEndpoints, type Endpoints, type FunctionsInvocationStatsRow } from '../src/index';
import {
  formatIso,
  quantileBound,
  readEdgeEvents,
  readFunctionEvents,
  refInvocationStats,
  refLogsAll,
  refUsageApiCounts,
  type Parsed,
  type RefEdgeEvent,
  type RefFunctionEvent,
  type RefInvocationResult,
} from './reference/reference-endpoints';

const NOW = new Date('2026-11-21T12:00:00Z');
const MS = 1000n;
const SECOND = 1_000_000n;
const MINUTE = 60n * SECOND;
const HOUR = 60n * MINUTE;
const DAY = 24n * HOUR;

const FUNCTION_INTERVALS = ['5min', '15min', '1hr', '1day', '7day', '2day', '1DAY'];
const TIERS = ['FREE', 'PRO', 'PAYG', 'ENTERPRISE', 'free', 'GOLD', ''];
const USAGE_INTERVALS = ['hourly', 'daily', 'minutely'];
// Supabase Studio's and the Management API's values: one of them per pattern, beside two of the above.
const STUDIO_INTERVALS = ['15min', '30min', '1hr', '3hr', '1day', '3day', '7day'];
const UNKNOWN_PROJECT = 'zzzzzzzzzzzzzzzzzzzz';
const UNKNOWN_FUNCTION = 'ffffffff-ffff-4fff-bfff-ffffffffffff';

type Format = 'ndjson' | 'parquet';
type Query =
  | { endpoint: 'functions.invocation-stats'; params: { project: string; interval: string; function_id?: string } }
  | { endpoint: 'logs.all'; params: { project: string; project_tier: string; iso_timestamp_start?: string; iso_timestamp_end?: string } }
  | { endpoint: 'usage.api-counts'; params: { project: string; interval: string } };

/** What the comparisons covered, so the test fails if the data stops exercising a rule. */
interface Coverage {
  queries: number;
  nonEmpty: Record<Query['endpoint'], number>;
  logsAtLimit: number;
  logsTies: number;
  usageAtCap: number;
  usageAllZeroRows: number;
  invocationWithFunctionId: number;
  invocationNullStats: number;
  invocationBigBuckets: number;
  invocationErrors: number;
}

/** A clock and the queries asked at it. */
interface Scenario {
  label: string;
  clock: Date;
  queries: Query[];
}

describe('differential: library (NDJSON and Parquet) versus the reference implementation', () => {
  let dir: string;
  let clock = NOW;
  const endpoints = {} as Record<Format, Endpoints>;
  let spread: GeneratedLogs;
  let dense: GeneratedLogs;
  let edge: Parsed<RefEdgeEvent>;
  let fn: Parsed<RefFunctionEvent>;
  let projects: string[];
  let functionIds: Record<string, string[]>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'le-differential-'));
    // Eight days of sparse traffic, plus a dense burst in the last 20 minutes so the short
    // windows (second and minute buckets) hold many events. Two files per source: multi-file globs.
    const common = { now: NOW, formats: ['ndjson', 'parquet'] as Format[], brokenLineRate: 0.004, eventsAfterNow: true };
    spread = await generateLogs({ ...common, outDir: join(dir, 'spread'), seed: 42, days: 8, projects: 6, edgeEvents: 2500, functionEvents: 2000 });
    dense = await generateLogs({ ...common, outDir: join(dir, 'dense'), seed: 43, days: 20 / 1440, projects: 3, edgeEvents: 1000, functionEvents: 1200 });
    projects = [...spread.projects, ...dense.projects];
    functionIds = { ...spread.functionIds, ...dense.functionIds };
    expect(new Set(projects).size).toBe(projects.length);

    const files = (format: Format, source: 'edgeLogs' | 'functionEdgeLogs') => [spread, dense].map((g) => g.byFormat[format]![source]);
    edge = readEdgeEvents(files('ndjson', 'edgeLogs'));
    fn = readFunctionEvents(files('ndjson', 'functionEdgeLogs'));
    for (const format of ['ndjson', 'parquet'] as const) {
      endpoints[format] = await createEndpoints({
        // One glob per source matching both files.
        sources: { edgeLogs: join(dir, '*', 'edge', `*.${format}`), functionEdgeLogs: join(dir, '*', 'functions', `*.${format}`) },
        now: () => clock,
        cache: false,
      });
    }
  });

  afterAll(async () => {
    await Promise.all(Object.values(endpoints).map((ep) => ep.close()));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the generated data has what the comparisons rely on', () => {
    const forms = { micros: 0, isoZ: 0, offset: 0, nanos: 0, noZone: 0 };
    expect([...edge.events, ...fn.events].filter((e) => e.ts === null)).toEqual([]);
    // Both timestamp forms (and offsets) are in the files themselves.
    for (const g of [spread, dense]) {
      for (const file of [g.byFormat.ndjson!.edgeLogs, g.byFormat.ndjson!.functionEdgeLogs]) {
        const text = readFileSync(file, 'utf8');
        forms.micros += text.match(/"timestamp":\d+,/g)?.length ?? 0;
        forms.isoZ += text.match(/"timestamp":"[^"]*\.\d{6}Z"/g)?.length ?? 0;
        forms.offset += text.match(/"timestamp":"[^"]*[+-]\d{2}:?\d{2}"/g)?.length ?? 0;
        forms.nanos += text.match(/"timestamp":"[^"]*\.\d{9}Z"/g)?.length ?? 0;
        forms.noZone += text.match(/"timestamp":"[^"]*\.\d{6}"/g)?.length ?? 0;
      }
    }
    expect(forms.micros).toBeGreaterThan(100);
    expect(forms.isoZ).toBeGreaterThan(100);
    expect(forms.offset).toBeGreaterThan(10);
    expect(forms.nanos).toBeGreaterThan(0);
    expect(forms.noZone).toBeGreaterThan(0);
    expect(edge.skipped).toBeGreaterThan(0);
    expect(fn.skipped).toBeGreaterThan(0);
    expect(edge.events.some((e) => e.ts! > micros(NOW))).toBe(true);
    expect(edge.events.some((e) => e.url === null)).toBe(true);
    // Paths in several classes, and one that only looks like it (storage_auth has no "/storage").
    expect(edge.events.some((e) => e.path?.includes('/rest') && e.path.includes('/auth'))).toBe(true);
    expect(edge.events.some((e) => e.path === '/rest/v1/rpc/storage_auth')).toBe(true);
    // Window edges on events: some sit exactly on a second boundary or 1 µs beside one.
    for (const events of [edge.events, fn.events]) expect(boundaryEvents(events.map((e) => ({ ts: e.ts!, project: '' })))).toHaveLength(3);
    expect(fn.events.some((e) => e.execution_time_ms === null)).toBe(true);
    expect(fn.events.some((e) => e.status_code === null)).toBe(true);
  });

  it('counts the same broken lines as the reference skips', async () => {
    const inspected = await endpoints.ndjson.inspectSources();
    const skipped = Object.fromEntries(inspected.map((s) => [s.source, s.skippedLines]));
    expect(skipped).toEqual({ edgeLogs: edge.skipped, functionEdgeLogs: fn.skipped });
  });

  it('gives identical results for every clock, project and parameter', async () => {
    const coverage: Coverage = {
      queries: 0,
      nonEmpty: { 'functions.invocation-stats': 0, 'logs.all': 0, 'usage.api-counts': 0 },
      logsAtLimit: 0,
      logsTies: 0,
      usageAtCap: 0,
      usageAllZeroRows: 0,
      invocationWithFunctionId: 0,
      invocationNullStats: 0,
      invocationBigBuckets: 0,
      invocationErrors: 0,
    };
    const scenarios = buildScenarios();
    expect(scenarios.length).toBeGreaterThanOrEqual(12);
    for (const scenario of scenarios) {
      clock = scenario.clock;
      const results = await runAll(scenario.queries, async (q) => {
        const [nd, pq] = [await run(endpoints.ndjson, q), await run(endpoints.parquet, q)];
        return { q, nd, pq };
      });
      for (const { q, nd, pq } of results) {
        const label = `${scenario.label} ${q.endpoint} ${JSON.stringify(q.params)}`;
        expect(pq, `Parquet = NDJSON: ${label}`).toEqual(nd);
        compare(q, nd, scenario.clock, label, coverage);
      }
    }
    // The comparisons were not vacuous.
    expect(coverage.queries).toBeGreaterThan(800);
    expect(coverage.nonEmpty['functions.invocation-stats']).toBeGreaterThan(100);
    expect(coverage.nonEmpty['logs.all']).toBeGreaterThan(100);
    expect(coverage.nonEmpty['usage.api-counts']).toBeGreaterThan(100);
    expect(coverage.logsAtLimit).toBeGreaterThan(0);
    expect(coverage.logsTies).toBeGreaterThan(0);
    expect(coverage.usageAtCap).toBeGreaterThan(0);
    expect(coverage.usageAllZeroRows).toBeGreaterThan(0);
    expect(coverage.invocationWithFunctionId).toBeGreaterThan(0);
    expect(coverage.invocationNullStats).toBeGreaterThan(0);
    expect(coverage.invocationBigBuckets).toBeGreaterThan(0);
    expect(coverage.invocationErrors).toBeGreaterThan(0);
    // About 1900 queries: 30 s on two idle cores; vitest.config.ts's testTimeout leaves room for a busy machine.
  });

  it('refuses a start after the end like the reference', async () => {
    const params = { project: 'p1', project_tier: 'PAYG', iso_timestamp_start: '2026-11-21T10:00:00.000001Z', iso_timestamp_end: '2026-11-21T10:00:00Z' };
    expect(() => refLogsAll(edge.events, params, new Date('2026-11-21T12:00:00Z'))).toThrow(/after/);
    for (const ep of Object.values(endpoints)) {
      await expect(ep.logsAll(params)).rejects.toMatchObject({ code: 'invalid_parameter', param: 'iso_timestamp_start' });
    }
  });

  it('rejects an unknown usage interval like the reference', async () => {
    clock = NOW;
    expect(() => refUsageApiCounts(edge.events, { project: '.', interval: 'weekly' }, NOW)).toThrow();
    for (const ep of Object.values(endpoints)) {
      await expect(ep.usageApiCounts({ project: '.', interval: 'weekly' as 'daily' })).rejects.toMatchObject({ code: 'invalid_parameter', param: 'interval' });
    }
  });

  // -------------------------------------------------------------------------------------------

  function compare(q: Query, actual: unknown[], now: Date, label: string, coverage: Coverage): void {
    coverage.queries++;
    if (actual.length) coverage.nonEmpty[q.endpoint]++;
    switch (q.endpoint) {
      case 'functions.invocation-stats': {
        const expected = refInvocationStats(fn.events, q.params, now);
        compareInvocations(actual as FunctionsInvocationStatsRow[], expected, label);
        if (q.params.function_id && actual.length) coverage.invocationWithFunctionId++;
        for (const row of expected.rows) {
          if (row.min_execution_time === null) coverage.invocationNullStats++;
          if (row.count >= 20) coverage.invocationBigBuckets++;
          if (row.error_count > 0) coverage.invocationErrors++;
        }
        return;
      }
      case 'logs.all': {
        const expected = refLogsAll(edge.events, q.params, now);
        expect(actual, label).toEqual(expected);
        if (expected.length === 100) coverage.logsAtLimit++;
        if (expected.some((r, i) => i > 0 && r.timestamp === expected[i - 1]!.timestamp)) coverage.logsTies++;
        return;
      }
      case 'usage.api-counts': {
        const expected = refUsageApiCounts(edge.events, q.params, now);
        expect(actual, label).toEqual(expected);
        if (expected.length === 1000) coverage.usageAtCap++;
        for (const r of expected) {
          const counts = [r.total_rest_requests, r.total_storage_requests, r.total_auth_requests, r.total_realtime_requests];
          if (counts.every((c) => c === 0)) coverage.usageAllZeroRows++;
        }
        return;
      }
    }
  }

  function compareInvocations(actual: FunctionsInvocationStatsRow[], expected: RefInvocationResult, label: string): void {
    const inexact = ['avg_execution_time', 'p95_execution_time', 'p99_execution_time'] as const;
    const strip = (r: FunctionsInvocationStatsRow) => {
      const copy: Partial<FunctionsInvocationStatsRow> = { ...r };
      for (const k of inexact) delete copy[k];
      return copy;
    };
    expect(actual.map(strip), label).toEqual(expected.rows.map(strip));
    actual.forEach((row, i) => {
      const ref = expected.rows[i]!;
      const sorted = expected.sortedTimes[i]!;
      const at = `${label} bucket ${row.timestamp}`;
      if (ref.avg_execution_time === null) {
        expect([row.avg_execution_time, row.p95_execution_time, row.p99_execution_time], at).toEqual([null, null, null]);
        return;
      }
      expect(Math.abs(row.avg_execution_time! - ref.avg_execution_time), `${at} avg`).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(ref.avg_execution_time)));
      for (const [column, percent] of [
        ['p95_execution_time', 95],
        ['p99_execution_time', 99],
      ] as const) {
        const [lo, hi] = quantileBound(sorted, percent);
        const value = row[column];
        expect(value, `${at} ${column} in [${lo}, ${hi}]`).not.toBeNull();
        expect(value! >= lo && value! <= hi, `${at} ${column} = ${value} in [${lo}, ${hi}]`).toBe(true);
      }
    });
  }

  // -------------------------------------------------------------------------------------------
  // Clocks and queries

  function buildScenarios(): Scenario[] {
    const all = [...projects, UNKNOWN_PROJECT];
    const scenarios: Scenario[] = [];
    const full = (label: string, clock: Date) => {
      const k = scenarios.length;
      scenarios.push({ label, clock, queries: [...invocationQueries(all, k), ...logsQueries(all, clock, k), ...usageQueries(all, k)] });
    };
    // Clocks at and around the reference instant (an exact hour boundary), then elsewhere.
    full('now', NOW);
    full('now-1ms', new Date(NOW.getTime() - 1));
    full('now+1ms', new Date(NOW.getTime() + 1));
    full('now-7min (in the dense burst)', new Date(NOW.getTime() - 7 * 60_000 + 123));
    full('now+10min (after-now events)', new Date(NOW.getTime() + 10 * 60_000));
    full('midnight', new Date('2026-11-21T00:00:00Z'));
    full('mid-week', new Date('2026-11-17T07:33:21.457Z'));
    full('before the data (no upper bound, row caps)', new Date(NOW.getTime() - 9 * 86_400_000));
    full('two days after the data', new Date(NOW.getTime() + 2 * 86_400_000));

    // Clocks that put a window edge exactly on (or 1 µs beside) an event.
    for (const e of boundaryEvents(fn.events.map((f) => ({ ts: f.ts!, project: f.project_ref! })))) {
      const b = e.boundary;
      const clocks: Array<[string, bigint]> = [
        ['first bucket = event boundary (5min)', b + 5n * MINUTE],
        ['end = event boundary', b - MS],
      ];
      if (b % MINUTE === 0n) clocks.push(['first bucket = event (15min)', b + 15n * MINUTE], ['first bucket = event (1hr)', b + HOUR]);
      if (b % HOUR === 0n) clocks.push(['first bucket = event (1day)', b + DAY]);
      for (const [what, t] of clocks) {
        scenarios.push({ label: `${what} ${formatIso(e.ts)}`, clock: toDate(t), queries: invocationQueries([e.project], -1) });
      }
    }
    for (const e of boundaryEvents(edge.events.map((x) => ({ ts: x.ts!, project: x.project! })))) {
      const b = e.boundary;
      const project = e.project;
      // With an end bound just after the event, the event is among the 100 newest rows returned.
      const iso_timestamp_end = formatIso(b + 10n * MINUTE);
      const logs = (...tiers: string[]) =>
        tiers.flatMap((project_tier): Query[] => [
          { endpoint: 'logs.all', params: { project, project_tier } },
          { endpoint: 'logs.all', params: { project, project_tier, iso_timestamp_end } },
        ]);
      const usage = (...intervals: string[]) => intervals.map((interval): Query => ({ endpoint: 'usage.api-counts', params: { project, interval } }));
      const clocks: Array<[string, bigint, Query[]]> = [
        ['now - 1 day', b + DAY, logs('FREE', 'GOLD', 'PRO')],
        ['now - 7 days', b + 7n * DAY, [...logs('PRO', 'PAYG'), ...usage('daily')]],
        ['now - 1 hour', b + HOUR, usage('hourly', 'minutely', 'daily')],
        ['just after now - 1 hour', b + HOUR + MS, usage('hourly', 'minutely')],
      ];
      for (const [what, t, queries] of clocks) {
        const clock = toDate(t);
        scenarios.push({ label: `${what} = ${formatIso(e.ts)}`, clock, queries: [...queries, ...logsQueries([project], clock, 0, 1)] });
      }
    }
    return scenarios;
  }

  /**
   * Intervals and function_id (absent, empty, unknown, real) per project. Full scenarios (k >= 0)
   * rotate through the combinations from clock to clock; boundary scenarios (k < 0) ask them all.
   */
  function invocationQueries(list: string[], k: number): Query[] {
    const out: Query[] = [];
    list.forEach((project, p) => {
      const ids = functionIds[project] ?? [];
      const variants = ['', UNKNOWN_FUNCTION, ...ids];
      const intervals = k < 0 ? FUNCTION_INTERVALS : rotate(FUNCTION_INTERVALS, 2, p + 2 * k);
      for (const interval of intervals) out.push({ endpoint: 'functions.invocation-stats', params: { project, interval } });
      const withIds =
        k < 0
          ? ids.slice(0, 1).flatMap((id) => FUNCTION_INTERVALS.slice(0, 5).map((interval) => [id, interval] as const))
          : rotate(variants, 1, p + k).map((id, i) => [id, FUNCTION_INTERVALS[(p + k + i) % FUNCTION_INTERVALS.length]!] as const);
      for (const [function_id, interval] of withIds) {
        out.push({ endpoint: 'functions.invocation-stats', params: { project, interval, function_id } });
      }
    });
    return out;
  }

  /** Tiers per project, then bounds taken from the project's own events (rotating from clock to clock). */
  function logsQueries(list: string[], clock: Date, k: number, perProject = 2): Query[] {
    const out: Query[] = [];
    list.forEach((project, p) => {
      for (const project_tier of rotate(TIERS, 1, p + k)) out.push({ endpoint: 'logs.all', params: { project, project_tier } });
      const tier = (i: number) => TIERS[(p + k + i) % TIERS.length]!;
      // Event instants near the clock, so the bounds cut through the returned rows.
      const times = edge.events
        .filter((e) => e.project === project && e.ts! <= micros(clock) + HOUR)
        .map((e) => e.ts!)
        .sort((a, b) => (a < b ? 1 : a > b ? -1 : 0));
      const at = (i: number) => times[Math.min(i, times.length - 1)] ?? micros(clock) - HOUR;
      const start = at(40),
        end = at(5);
      const bounds: Array<LogsParams> = [
        { project, project_tier: tier(0), iso_timestamp_start: formatIso(start) },
        { project, project_tier: tier(1), iso_timestamp_end: withOffset(end, 330, '+05:30') },
        { project, project_tier: tier(2), iso_timestamp_start: withOffset(start, -300, '-0500'), iso_timestamp_end: formatIso(end) },
        { project, project_tier: tier(3), iso_timestamp_start: '', iso_timestamp_end: '' },
        // Equal bounds: a legal range that holds no instant (start is exclusive). Swapped ones are refused (below).
        { project, project_tier: 'PAYG', iso_timestamp_start: formatIso(end), iso_timestamp_end: formatIso(end) },
        // No offset means UTC.
        { project, project_tier: 'PRO', iso_timestamp_end: formatIso(end - 3n * HOUR).slice(0, 19) },
      ];
      for (const params of rotate(bounds, perProject, p + perProject * k)) out.push({ endpoint: 'logs.all', params });
    });
    return out;
  }

  /** Each project's ref, an alternation, everything, patterns on other parts of the URL, and some with optional parts. */
  function usageQueries(list: string[], k: number): Query[] {
    const patterns = [
      ...list,
      `^https://(${projects[1]}|${projects[projects.length - 1]})\\.supabase\\.co`,
      '.',
      'supabase\\.co/rest/v1/(todos|profiles)',
      '-app\\.com/',
      // Patterns whose literal part the engine searches first (required-literal.ts).
      `${projects[2]}(\\.|$)`,
      'https?://api\\.[a-z]+-ap?p\\.com',
    ];
    return patterns.flatMap((project, p) =>
      [...rotate(USAGE_INTERVALS, 2, p + k), ...rotate(STUDIO_INTERVALS, 1, p + k)].map((interval): Query => ({ endpoint: 'usage.api-counts', params: { project, interval } })),
    );
  }
});

type LogsParams = Extract<Query, { endpoint: 'logs.all' }>['params'];

/** `count` items of `list` starting at `offset`, wrapping around. */
function rotate<T>(list: readonly T[], count: number, offset: number): T[] {
  return Array.from({ length: Math.min(count, list.length) }, (_, i) => list[(((offset + i) % list.length) + list.length) % list.length]!);
}

/** Runs the library for one query. */
async function run(ep: Endpoints, q: Query): Promise<unknown[]> {
  return (await ep.query(q.endpoint as string, q.params as Record<string, string>)).result;
}

/** Runs `work` over `items`, four at a time (the engine's default concurrency), keeping order. */
async function runAll<T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
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

/**
 * Events on a second boundary or 1 µs beside one (the generator snaps a few there), one of each
 * kind: 1 µs before, on, 1 µs after. The boundary is a whole millisecond, so a `Date` clock can
 * sit exactly on it.
 */
function boundaryEvents(events: Array<{ ts: bigint; project: string }>): Array<{ ts: bigint; project: string; boundary: bigint }> {
  const out: Array<{ ts: bigint; project: string; boundary: bigint }> = [];
  for (const delta of [-1n, 0n, 1n]) {
    const found = events.filter((e) => (e.ts - delta) % SECOND === 0n).slice(0, 1);
    for (const e of found) out.push({ ...e, boundary: e.ts - delta });
  }
  return out;
}

function micros(d: Date): bigint {
  return BigInt(d.getTime()) * MS;
}

function toDate(t: bigint): Date {
  return new Date(Number(t / MS));
}

/** The instant written with a numeric offset, e.g. `2026-11-21T17:30:00.000000+05:30`. */
function withOffset(t: bigint, minutes: number, label: string): string {
  return formatIso(t + BigInt(minutes) * MINUTE).replace('Z', label);
}
