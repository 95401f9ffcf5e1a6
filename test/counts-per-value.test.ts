import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DuckDBConnection } from '@duckdb/node-api';
import { compactLogs } from '../src/compaction/compact';
import { translateBigQuery } from '../src/bigquery/translate-bigquery';
import { bigQuerySchemaOf } from '../src/bigquery/schema-of-sources';
import { SUPABASE_SOURCES } from '../src/index';
import { edgeLogs } from '../src/sources/edge-logs';
import { withTypedPaths } from '../src/sources/typed-fields';
import { edgeEvent, endpointsAt, tempDir, writeLines } from './support/log-files';
import { chartQuery } from './support/supabase/studio-sql';
import { microsOf } from './support/supabase/instants';

/**
 * A chart's counts by time bucket counted per value of the declared typed fields they read
 * (src/bigquery/counts-per-value.ts, docs/definitions.md "Typed fields"): the DuckDB text counts
 * the rows per (bucket, value) first, then sums those counts per bucket where each condition
 * holds. The answers are the one-step query's on every layout.
 */

const tmp = tempDir('le-counts-per-value-');
afterAll(() => tmp.cleanup());

const NOW = '2026-11-21T12:00:00Z';
/** The first step's count, in a text counted in two steps. */
const FIRST_STEP = 'count(*) AS "__bq_n"';
/** The first step grouped by the bucket's number and the status's typed column. */
const BY_STATUS = `GROUP BY CASE WHEN epoch_us("t"."timestamp") >= 0 THEN epoch_us("t"."timestamp") // 3600000000 WHEN isfinite("t"."timestamp") THEN epoch_us(date_trunc('hour', "t"."timestamp")) // 3600000000 WHEN "t"."timestamp" > make_timestamp(0) THEN 9223372036854775807 WHEN "t"."timestamp" < make_timestamp(0) THEN -9223372036854775807 END, "t"."text:metadata.response.status_code"`;

const schema = bigQuerySchemaOf(SUPABASE_SOURCES);
const studioNow = microsOf(new Date(NOW));
const week = { start: '2026-11-14T12:00:00.000Z', end: '' };

describe('the translation of a chart by time bucket', () => {
  it("counts Studio's 7-day charts per value of the field, in both texts of the range", async () => {
    const gateway = await translateBigQuery(chartQuery('edge_logs', week, {}, studioNow), schema, 'duckdb');
    for (const text of [gateway.checked, gateway.arraysFree!]) {
      expect(text).toContain(FIRST_STEP);
      expect(text).toContain(BY_STATUS);
      // The conditions are evaluated over the first step's rows: each count a sum of its counts.
      expect(text).toContain('CAST(coalesce(sum(CASE WHEN');
      expect(text).not.toContain('count(CASE WHEN');
    }
    const postgres = await translateBigQuery(chartQuery('postgres_logs', week, {}, studioNow), schema, 'duckdb');
    expect(postgres.checked).toContain(FIRST_STEP);
    expect(postgres.checked).toContain('"t"."text:metadata.parsed.error_severity"');
  });

  it('reads the fields by their columns alone in the text without the arrays half, whose unnest aliases are NULL', async () => {
    // Every unnest alias of that text's range is the constant NULL: grouping the first step by it,
    // and testing it in each condition, was a tenth of the chart by minute's CPU (docs/performance.md,
    // "The chart by minute without its constant unnest aliases").
    const lastHour = { start: '2026-11-21T11:00:00.000Z', end: '' };
    const filtered = `select timestamp_trunc(t.timestamp, minute) as ts, count(case when response.status_code >= 500 then 1 end) as errors from edge_logs t cross join unnest(metadata) as m cross join unnest(m.response) as response where response.status_code >= 400 and t.timestamp > '2026-11-21T05:00:00Z' group by ts order by ts`;
    for (const sql of [chartQuery('edge_logs', lastHour, {}, studioNow), chartQuery('edge_logs', week, {}, studioNow), filtered]) {
      const { checked, arraysFree } = await translateBigQuery(sql, schema, 'duckdb');
      const first = (text: string) => text.slice(text.indexOf('FROM (SELECT CASE WHEN epoch_us'));
      const firstGroupBy = (text: string) => first(text).slice(first(text).indexOf(' GROUP BY '), first(text).indexOf(') AS "t" GROUP BY'));
      expect(first(arraysFree!)).toContain(FIRST_STEP);
      expect(firstGroupBy(arraysFree!)).toContain('"t"."text:metadata.response.status_code"');
      expect(firstGroupBy(arraysFree!)).not.toContain('"__bq_a');
      expect(arraysFree!).not.toContain('IS NULL THEN "t"."text:metadata.response.status_code"');
      expect(arraysFree!).toContain('TRY_CAST("t"."text:metadata.response.status_code" AS DOUBLE)');
      // The full text's range holds the unnested rows too: there the alias is read where it is not NULL.
      expect(firstGroupBy(checked)).toMatch(/"t"\."__bq_a\d"/);
      expect(checked).toMatch(/CASE WHEN "t"\."__bq_a\d" IS NULL THEN "t"\."text:metadata\.response\.status_code"/);
    }
    // A WHERE with a subquery, whose own range may take the same alias, keeps the alias read.
    const nested = `select timestamp_trunc(t.timestamp, minute) as ts, count(case when response.status_code >= 500 then 1 end) as errors from edge_logs t cross join unnest(metadata) as m cross join unnest(m.response) as response where t.id in (select t.id from edge_logs t) group by ts order by ts`;
    const { arraysFree } = await translateBigQuery(nested, schema, 'duckdb');
    expect(arraysFree!).toContain(FIRST_STEP);
    expect(arraysFree!).toMatch(/CASE WHEN "t"\."__bq_a\d" IS NULL THEN "t"\."text:metadata\.response\.status_code"/);
  });

  it('counts in one step what does not have the shape, or reads a field of unknown values', async () => {
    const oneStep = async (sql: string, s = schema) => {
      const text = (await translateBigQuery(sql, s, 'duckdb')).checked;
      expect(text).not.toContain(FIRST_STEP);
    };
    const counts = 'count(case when response.status_code >= 500 then 1 end) as errors';
    const from = 'from edge_logs t cross join unnest(metadata) as m cross join unnest(m.response) as response';
    // A column that is not a declared typed field (the id: one value per event).
    await oneStep(`select timestamp_trunc(t.timestamp, hour) as ts, count(case when t.id like 'a%' then 1 end) as n from edge_logs t group by ts order by ts`);
    // Grouped by something other than a time bucket.
    await oneStep(`select response.status_code as s, ${counts} ${from} group by s`);
    // HAVING, an ORDER BY that is not an output's position, DISTINCT counts, other aggregates.
    await oneStep(`select timestamp_trunc(t.timestamp, hour) as ts, ${counts} ${from} group by ts having count(*) > 0 order by ts`);
    await oneStep(`select timestamp_trunc(t.timestamp, hour) as ts, ${counts} ${from} group by ts order by count(*)`);
    await oneStep(`select timestamp_trunc(t.timestamp, hour) as ts, count(distinct response.status_code) as n ${from} group by ts`);
    await oneStep(`select timestamp_trunc(t.timestamp, hour) as ts, ${counts}, max(response.origin_time) as slowest ${from} group by ts`);
    // A plain count per bucket reads no field: nothing to count per value.
    await oneStep('select timestamp_trunc(t.timestamp, hour) as ts, count(*) as n from edge_logs t group by ts');
    // A field compaction discovered (its values unknown): read in one step.
    const discovered = bigQuerySchemaOf([withTypedPaths(edgeLogs, ['request.headers.cf_ray'])]);
    const headers = 'from edge_logs t cross join unnest(metadata) as m cross join unnest(m.request) as r cross join unnest(r.headers) as h';
    await oneStep(`select timestamp_trunc(t.timestamp, hour) as ts, count(case when h.cf_ray like 'a%' then 1 end) as n ${headers} group by ts`, discovered);
    // The same query over a declared field is counted in two steps.
    const declared = (
      await translateBigQuery(
        `select timestamp_trunc(t.timestamp, hour) as ts, count(case when r.method = 'GET' then 1 end) as n from edge_logs t cross join unnest(metadata) as m cross join unnest(m.request) as r group by ts`,
        discovered,
        'duckdb',
      )
    ).checked;
    expect(declared).toContain(FIRST_STEP);
    // ClickHouse's text is its own.
    expect((await translateBigQuery(chartQuery('edge_logs', week, {}, studioNow), schema, 'clickhouse')).sql).not.toContain('__bq_n');
  });
});

describe('the answers of a chart counted per value', () => {
  // Three hours of gateway events with statuses of every kind the conditions meet: numbers of each
  // class, a status as a string ("404"), one no number reads ("n/a"), a JSON null, none at all, and
  // events whose request or response is an array (the unnest gives a row per element).
  const statuses: unknown[] = [200, 201, 302, 404, 499, 500, 503, '404', 'n/a', null, 200.5];
  const events = Array.from({ length: 66 }, (_, i) => {
    const status = statuses[i % statuses.length];
    const extra = i % 13 === 7 ? { response: { origin_time: 3 } } : { response: { status_code: status, origin_time: i } };
    return edgeEvent({ timestamp: new Date(Date.parse(NOW) - (1 + (i % 3)) * 3_600_000 + i * 1000).toISOString(), project: 'p', extra });
  });
  const arrays = [
    edgeEvent({ timestamp: new Date(Date.parse(NOW) - 2 * 3_600_000 + 5_000).toISOString(), project: 'p', extra: { request: [{ method: 'GET' }, { method: 'PUT' }], response: { status_code: 500 } } }),
    edgeEvent({ timestamp: new Date(Date.parse(NOW) - 3 * 3_600_000 + 5_000).toISOString(), project: 'p', extra: { response: [{ status_code: 503 }, { status_code: 404 }, { status_code: 200 }] } }),
  ];
  const all = [...events, ...arrays];
  const chart = chartQuery('edge_logs', { start: '2026-11-21T08:00:00.000Z', end: '' }, {}, studioNow);
  // The same chart counted in one step: a HAVING that every bucket passes leaves the shape.
  const oneStep = chart.replace('GROUP BY\ntimestamp', 'GROUP BY\ntimestamp\nHAVING count(*) > 0');
  const options = { sandboxable: ['logs.all'], tierWindow: false, sqlDialect: 'bigquery' as const };

  async function answer(sources: Parameters<typeof endpointsAt>[0], sql: string): Promise<unknown> {
    const { ep } = await endpointsAt(sources, NOW, options);
    try {
      return (await ep.query('logs.all', { project: 'p', iso_timestamp_start: '2026-11-21T08:00:00.000Z', iso_timestamp_end: '' }, { sql })).result;
    } finally {
      await ep.close();
    }
  }

  const layouts: Array<{ name: string; typedColumns?: boolean }> = [{ name: 'typed columns', typedColumns: true }, { name: 'JSON only', typedColumns: false }, { name: 'NDJSON' }];
  let ndjson: string;
  beforeAll(() => {
    ndjson = writeLines(tmp.path('ndjson', 'all.ndjson'), all);
  });

  it.each(layouts)('are the one-step answers on $name', async (layout) => {
    let source = ndjson;
    if (layout.typedColumns !== undefined) {
      source = tmp.path(layout.name, 'dataset');
      await compactLogs({ source: 'edgeLogs', inputs: ndjson, outDir: source, typedColumns: layout.typedColumns });
    }
    const twoSteps = await answer({ edgeLogs: source }, chart);
    expect(twoSteps).toEqual(await answer({ edgeLogs: source }, oneStep));
    // Buckets by minute (a window under 12 hours); the array events' rows counted once per element.
    const rows = twoSteps as Array<{ timestamp: number; ok_count: number; error_count: number; warning_count: number }>;
    expect(rows.length).toBeGreaterThan(3);
    expect(rows.every((r) => r.ok_count + r.error_count + r.warning_count > 0)).toBe(true);
    const counted = rows.reduce((n, r) => n + r.ok_count + r.error_count + r.warning_count, 0);
    // Of 66 events, the 5 without a status and the 6 whose status reads no number ("n/a", null) count nowhere.
    const numbered = events.filter((e) => {
      const s = (e.metadata as { response: { status_code?: unknown } }).response.status_code;
      return s !== undefined && s !== null && s !== 'n/a';
    }).length;
    expect(counted).toBe(numbered + 2 + 3);
  });

  it('are the one-step answers where the text without the arrays half runs, which reads no unnest alias', async () => {
    // Compacted without the array events: every file says its flag is never true, so the engine
    // runs the text whose first step groups by the status's column alone.
    const dataset = tmp.path('arrays free', 'dataset');
    const flat = writeLines(tmp.path('arrays free', 'flat.ndjson'), events);
    await compactLogs({ source: 'edgeLogs', inputs: flat, outDir: dataset, typedColumns: true });
    const filtered = `select timestamp_trunc(t.timestamp, minute) as ts, count(case when response.status_code >= 500 then 1 end) as errors, count(response.status_code) as numbered from edge_logs t cross join unnest(metadata) as m cross join unnest(m.response) as response where response.status_code >= 404 and t.timestamp > '2026-11-21T05:00:00Z' group by ts order by ts`;
    const prepare = vi.spyOn(DuckDBConnection.prototype, 'prepare');
    try {
      for (const sql of [chart, filtered]) {
        const from = prepare.mock.calls.length;
        const twoSteps = await answer({ edgeLogs: dataset }, sql);
        const ran = prepare.mock.calls
          .slice(from)
          .map(([text]) => text)
          .filter((text) => text.includes('AS sandboxed LIMIT'));
        expect(ran).toHaveLength(1);
        expect(ran[0]).toContain(FIRST_STEP);
        expect(ran[0]).not.toContain('UNION ALL');
        expect(ran[0]).not.toMatch(/"t"\."__bq_a\d"/);
        const one = sql.replace(/group by ts|GROUP BY\ntimestamp/, (g) => `${g} HAVING count(*) > 0`);
        expect(twoSteps).toEqual(await answer({ edgeLogs: dataset }, one));
        // The same events from NDJSON, the full text (its flag computed per row).
        expect(twoSteps).toEqual(await answer({ edgeLogs: flat }, sql));
        expect((twoSteps as unknown[]).length).toBeGreaterThan(3);
      }
    } finally {
      prepare.mockRestore();
    }
  });
});
