import { afterAll, beforeAll, describe, expect, it, vi, type MockInstance } from 'vitest';
import { DuckDBConnection } from '@duckdb/node-api';
import { compactLogs } from '../src/compaction/compact';
import { translateBigQuery } from '../src/bigquery/translate-bigquery';
import { bigQuerySchemaOf } from '../src/bigquery/schema-of-sources';
import { createEndpoints, SUPABASE_SOURCES, type Endpoints } from '../src/index';
import { CallerSqlCheck } from '../src/query/check-caller-sql';
import { AcceptCallerSql } from '../src/query/accept-caller-sql';
import { neutralSqlParser } from '../src/query/sql-parser';
import { planQuery } from '../src/definitions/plan-query';
import { compileCall } from '../src/query/compile-query';
import { logsAll } from '../src/definitions/logs-all';
import { BUILT_IN_SOURCE_SET } from '../src/sources/built-ins';
import { normalizeParams } from '../src/definitions/params';
import { edgeEvent, endpointsAt, tempDir, writeLines } from './support/log-files';
import { chartQuery, countQuery, defaultQuery } from './support/supabase/studio-sql';
import { studioRequests } from './support/supabase/studio-requests';
import { microsOf } from './support/supabase/instants';
import { serializeBatch } from '../src/ingest/serialize-events';

/**
 * The translation without the arrays half (docs/definitions.md, "Typed fields"): a caller's
 * BigQuery SELECT whose unnested ranges split by the arrays flag is checked twice, as printed and
 * without the unnested half, and the DuckDB engine runs the second where every input the query
 * reads is known to hold no `[` (Parquet files whose footers say so, the memory tables' rows of
 * groups whose parse said so), the first everywhere else (a file with an array row, NDJSON, the
 * memory tables' rows of a group with a `[`). The answers are the same either way.
 */

const tmp = tempDir('le-arrays-half-');
afterAll(() => tmp.cleanup());

const NOW = '2026-11-21T12:00:00Z';
/** The full text's range: the flag decides row by row whether the root alias reads the JSON (the rows whose metadata holds a '['). */
const UNNESTED_HALF = 'unnest(CASE WHEN coalesce("arrays:metadata", false) THEN';
/** The text without the arrays half: the rows without a '[' alone. */
const FLAT_HALF = 'WHERE NOT (coalesce("arrays:metadata", false))';

describe('the translation of a range split by the arrays flag', () => {
  const schema = bigQuerySchemaOf(SUPABASE_SOURCES);
  const chart = chartQuery('edge_logs', { start: '2026-11-21T11:00:00Z', end: '' }, {}, microsOf(new Date(NOW)));

  it('is printed a second time with the half without arrays alone, from the same tree', async () => {
    const translated = await translateBigQuery(chart, schema, 'duckdb');
    expect(translated.checked).toContain(UNNESTED_HALF);
    // One scan of the table: read twice, a relation of several parts was materialized whole (print-duckdb.ts).
    expect(translated.checked).not.toContain('UNION ALL');
    expect(translated.checked).not.toContain(FLAT_HALF);
    const free = translated.arraysFree!;
    expect(free).toContain(FLAT_HALF);
    expect(free).not.toContain(UNNESTED_HALF);
    expect(free).not.toContain('UNION ALL');
    expect(free).not.toContain('unnest(');
    // Everything outside the range is the same text.
    const outside = (text: string) => text.slice(text.lastIndexOf(' AS "t"'));
    expect(outside(free)).toBe(outside(translated.checked));
  });

  it('has no second text where nothing splits: no unnest, a cut before the unnests, or ClickHouse', async () => {
    expect((await translateBigQuery('select count(*) as n from edge_logs', schema, 'duckdb')).arraysFree).toBeUndefined();
    // Studio's list cuts its newest rows before it unnests them: never split.
    expect((await translateBigQuery(defaultQuery('edge_logs', {}), schema, 'duckdb')).arraysFree).toBeUndefined();
    expect((await translateBigQuery(chart, schema, 'clickhouse')).arraysFree).toBeUndefined();
  });

  it('is checked by the sandbox as the full text is, and kept with it in the memo of checked texts', async () => {
    const parsed: string[] = [];
    const parser = { ...neutralSqlParser, serialize: (sql: string) => (parsed.push(sql), neutralSqlParser.serialize(sql)) };
    const check = new CallerSqlCheck({ dialect: 'duckdb' }, parser, 'bigquery');
    const checks = vi.spyOn(check, 'check');
    const callers = new AcceptCallerSql(check, new Set(['logs.all']));
    const sql = countQuery('edge_logs', {});
    const first = await callers.accept(logsAll, sql, BUILT_IN_SOURCE_SET);
    const translated = await translateBigQuery(sql, bigQuerySchemaOf(BUILT_IN_SOURCE_SET.list), 'duckdb');
    expect(first.sql).toBe(translated.checked);
    expect(first.arraysFree).toBe(translated.arraysFree);
    // Each text parsed alone and inside the wrapper capping its rows, as the sandbox reads them.
    expect(parsed.filter((t) => t === first.sql || t.includes(`\n${first.sql}\n`))).toHaveLength(2);
    expect(parsed.filter((t) => t === first.arraysFree || t.includes(`\n${first.arraysFree}\n`))).toHaveLength(2);
    // Asked again: neither translated nor checked again, both texts given back.
    const again = await callers.accept(logsAll, sql, BUILT_IN_SOURCE_SET);
    expect(again).toBe(first);
    expect(checks).toHaveBeenCalledTimes(1);
    // Compiled for DuckDB, both are composed over the endpoint's statement the same way.
    const query = compileCall(logsAll, planQuery(logsAll, normalizeParams(logsAll, { project: 'p', project_tier: 'PRO' }), new Date(NOW)), { dialect: 'duckdb' }, BUILT_IN_SOURCE_SET, first);
    expect(query.callerArraysFree).toBe(query.caller!.replace(first.sql, first.arraysFree!));
  });
});

describe('which text the DuckDB engine runs, and its answers', () => {
  // Two days of gateway events of every kind Studio's pages and templates group or filter by;
  // `withArrays` adds one event whose `request` is an array (Studio's unnest gives a row per element).
  const events = Array.from({ length: 40 }, (_, i) =>
    edgeEvent({
      timestamp: new Date(Date.parse(NOW) - (i % 2 ? 30 * 60_000 : 20 * 3_600_000) - i * 61_000).toISOString(),
      project: 'p',
      path: ['/rest/v1/todos', '/auth/v1/token', '/storage/v1/object/public/a.png', '/functions/v1/hello'][i % 4],
      message: `GET | ${[200, 404, 500, 201, 503][i % 5]} | 203.0.113.${i % 3} | x`,
      extra: {
        response: { status_code: [200, 404, 500, 201, 503][i % 5], origin_time: 10 + i * 37, headers: { cf_cache_status: i % 3 ? 'HIT' : 'MISS', content_length: String(i * 100) } },
        request: {
          method: i % 3 ? 'GET' : 'POST',
          path: ['/rest/v1/todos', '/auth/v1/token', '/storage/v1/object/public/a.png', '/functions/v1/hello'][i % 4],
          headers: { x_real_ip: `203.0.113.${i % 3}` },
          cf: { country: i % 2 ? 'DE' : 'US' },
        },
      },
    }),
  );
  const arrayEvent = edgeEvent({
    timestamp: new Date(Date.parse(NOW) - 21 * 3_600_000).toISOString(),
    project: 'p',
    extra: {
      request: [
        { method: 'GET', path: '/a' },
        { method: 'PUT', path: '/b' },
      ],
      response: { status_code: 500 },
    },
  });
  const withArrays = [...events, arrayEvent];
  // Studio's requests over the gateway's log: the lists, counts, charts, single logs and Explorer templates.
  const requests = studioRequests(new Date(NOW)).filter((r) => r.table === 'edge_logs');
  const options = { sandboxable: ['logs.all'], tierWindow: false, sqlDialect: 'bigquery' as const };

  let prepare: MockInstance<DuckDBConnection['prepare']>;
  beforeAll(() => {
    prepare = vi.spyOn(DuckDBConnection.prototype, 'prepare');
  });
  afterAll(() => prepare.mockRestore());

  /** Each request's answer and the caller's text DuckDB prepared for it (the one read by `read_parquet` or the memory table, when any). */
  async function ask(ep: Endpoints): Promise<Array<{ name: string; answer: unknown; texts: string[] }>> {
    const out = [];
    for (const r of requests) {
      const from = prepare.mock.calls.length;
      const answer = (await ep.query('logs.all', { project: 'p', iso_timestamp_start: r.iso_timestamp_start, iso_timestamp_end: r.iso_timestamp_end }, { sql: r.sql })).result;
      const texts = prepare.mock.calls
        .slice(from)
        .map(([sql]) => sql)
        .filter((sql) => sql.includes('AS sandboxed LIMIT'));
      out.push({ name: r.name, answer, texts });
    }
    return out;
  }

  /** The requests whose texts split a range, with whether each ran the unnested half. */
  const halves = (asked: Awaited<ReturnType<typeof ask>>) =>
    Object.fromEntries(asked.filter((a) => a.texts.some((t) => t.includes(FLAT_HALF) || t.includes(UNNESTED_HALF))).map((a) => [a.name, a.texts.some((t) => t.includes(UNNESTED_HALF))]));

  async function compacted(name: string, lines: readonly object[]): Promise<string> {
    writeLines(tmp.path(name, 'all.ndjson'), lines);
    await compactLogs({ source: 'edgeLogs', inputs: tmp.path(name, 'all.ndjson'), outDir: tmp.path(name, 'dataset') });
    return tmp.path(name, 'dataset');
  }

  async function answersOf(sources: Parameters<typeof endpointsAt>[0]): Promise<Awaited<ReturnType<typeof ask>>> {
    const { ep } = await endpointsAt(sources, NOW, options);
    try {
      return await ask(ep);
    } finally {
      await ep.close();
    }
  }

  let reference: { free: Awaited<ReturnType<typeof ask>>; mixed: Awaited<ReturnType<typeof ask>> };
  /** The events compacted: every file's footer says its flag is never true. */
  let freeDataset: string;
  beforeAll(async () => {
    freeDataset = await compacted('free', events);
    // The same events read from NDJSON: the flag computed per row, so the full text runs.
    reference = {
      free: await answersOf({ edgeLogs: writeLines(tmp.path('ndjson', 'free.ndjson'), events) }),
      mixed: await answersOf({ edgeLogs: writeLines(tmp.path('ndjson', 'mixed.ndjson'), withArrays) }),
    };
  });

  // Compared as sets of rows: rows tied on a template's ORDER BY (or of one without it) come in
  // any order from one run to the next, and no LIMIT cuts these events (the order is applied after
  // the range's halves, whichever ran).
  const answers = (asked: Awaited<ReturnType<typeof ask>>) => asked.map((a) => ({ name: a.name, answer: (a.answer as unknown[]).map((row) => JSON.stringify(row)).sort() }));

  /** The count, the charts and the templates that unnest split their range (a text prepared once serves its repeats). */
  const coversStudio = (split: Record<string, boolean>) => {
    const names = Object.keys(split);
    expect(names.length).toBeGreaterThanOrEqual(6);
    for (const kind of ['count', 'chart', 'Top Paths']) expect(names.some((n) => n.includes(kind))).toBe(true);
  };

  it('runs the full text over NDJSON, whose flag is computed from each event', () => {
    for (const asked of [reference.free, reference.mixed]) {
      coversStudio(halves(asked));
      expect(Object.values(halves(asked)).every(Boolean)).toBe(true);
    }
  });

  it('runs the text without the arrays half where every Parquet file says its flag is never true, with the same answers', async () => {
    const asked = await answersOf({ edgeLogs: freeDataset });
    expect(answers(asked)).toEqual(answers(reference.free));
    const split = halves(asked);
    coversStudio(split);
    expect(Object.values(split).some(Boolean)).toBe(false);
  });

  it('prepares the text without the arrays half once, and binds other bounds to it', async () => {
    const { ep } = await endpointsAt({ edgeLogs: freeDataset }, NOW, options);
    try {
      const count = requests.find((r) => r.name.includes('count'))!;
      const from = prepare.mock.calls.length;
      for (const start of ['2026-11-21T11:00:00.000Z', '2026-11-21T11:30:00.000Z', '2026-11-21T11:45:00.000Z']) {
        await ep.query('logs.all', { project: 'p', iso_timestamp_start: start, iso_timestamp_end: '' }, { sql: count.sql });
      }
      const texts = prepare.mock.calls
        .slice(from)
        .map(([sql]) => sql)
        .filter((sql) => sql.includes('AS sandboxed LIMIT'));
      expect(texts).toHaveLength(1);
      expect(texts[0]).toContain(FLAT_HALF);
      expect(texts[0]).not.toContain(UNNESTED_HALF);
    } finally {
      await ep.close();
    }
  });

  it('runs the full text where a file it reads holds an array row, with the same answers', async () => {
    const asked = await answersOf({ edgeLogs: await compacted('mixed', withArrays) });
    expect(answers(asked)).toEqual(answers(reference.mixed));
    const split = halves(asked);
    coversStudio(split);
    // A window that starts on the array row's day reads its file; one of the last hour does not
    // (the days before its start are not read), so its inputs are all free again.
    const start = new Map(requests.map((r) => [r.name, r.iso_timestamp_start]));
    const readsArrayDay = (name: string) => start.get(name)! === '' || start.get(name)! < '2026-11-21';
    expect(Object.entries(split).filter(([name]) => readsArrayDay(name)).length).toBeGreaterThanOrEqual(3);
    expect(Object.entries(split).filter(([name]) => !readsArrayDay(name)).length).toBeGreaterThanOrEqual(3);
    for (const [name, unnested] of Object.entries(split)) expect(unnested, name).toBe(readsArrayDay(name));
  });

  it("runs the text without the arrays half over the memory tables' rows while ingest said no metadata holds a '[', the full text once one did, with the same answers", async () => {
    const dataDir = tmp.path('managed');
    const ep = await createEndpoints({ storage: { dataDir }, now: () => new Date(NOW), cache: false, ...options });
    try {
      await ep.ingest('cloudflare.logs.prod', events);
      const free = await ask(ep);
      expect(answers(free)).toEqual(answers(reference.free));
      coversStudio(halves(free));
      expect(Object.values(halves(free)).some(Boolean)).toBe(false);
      // One event with an array: its segment's rows are read by the full text from then on.
      await ep.ingest('cloudflare.logs.prod', [arrayEvent]);
      const mixed = await ask(ep);
      expect(answers(mixed)).toEqual(answers(reference.mixed));
      coversStudio(halves(mixed));
      expect(Object.values(halves(mixed)).every(Boolean)).toBe(true);
    } finally {
      await ep.close();
    }
  });

  it("runs the full text over the memory tables' rows when a '[' is only inside a metadata string, with the same answers", async () => {
    // No array, but the flag (`contains(metadata, '[')`) is true on that row: the text without the
    // arrays half would leave it out, so ingest's word must not be "free".
    const bracketed = events.map((e, i) => (i === 3 ? { ...e, metadata: { ...(e.metadata as object), note: 'a [bracket]' } } : e));
    const ndjson = await answersOf({ edgeLogs: writeLines(tmp.path('ndjson', 'bracketed.ndjson'), bracketed) });
    const ep = await createEndpoints({ storage: { dataDir: tmp.path('managed-bracketed') }, now: () => new Date(NOW), cache: false, ...options });
    try {
      await ep.ingest('cloudflare.logs.prod', bracketed);
      const asked = await ask(ep);
      expect(answers(asked)).toEqual(answers(ndjson));
      coversStudio(halves(asked));
      expect(Object.values(halves(asked)).every(Boolean)).toBe(true);
    } finally {
      await ep.close();
    }
  });

  it('runs the full text when a free file is read beside NDJSON', async () => {
    const dataset = await compacted('beside', events.slice(0, 20));
    const ndjson = writeLines(tmp.path('beside', 'rest.ndjson'), events.slice(20));
    const asked = await answersOf({ edgeLogs: [dataset, ndjson] });
    expect(answers(asked)).toEqual(answers(reference.free));
    coversStudio(halves(asked));
    expect(Object.values(halves(asked)).every(Boolean)).toBe(true);
  });
});

describe("ingest's word that no event's metadata holds a '['", () => {
  const free = (events: unknown[]) => serializeBatch(events, '2026-11-21T12:00:00.000000Z').arraysFree;

  it("is given where no metadata holds an array, or a '[' in a key or a string, whatever else the event holds", () => {
    expect(free([{ message: '[INFO] started', metadata: { request: { path: '/a', n: 1, ok: true, none: null } } }, { message: 'no metadata' }])).toBe(true);
    expect(free([])).toBe(true);
  });

  it("is not given for an array, a '[' in a string or a key at any depth, a metadata key in other case, or past 64 levels", () => {
    expect(free([{ metadata: { a: 1 } }, { metadata: { request: [{ path: '/a' }] } }])).toBe(false);
    expect(free([{ metadata: { a: { b: 'x[1]' } } }])).toBe(false);
    expect(free([{ metadata: { a: { 'b[0]': 1 } } }])).toBe(false);
    expect(free([{ metadata: '[not json]' }])).toBe(false);
    expect(free([{ METADATA: { a: [] } }])).toBe(false);
    let deep: Record<string, unknown> = { leaf: 1 };
    for (let i = 0; i < 70; i++) deep = { d: deep };
    expect(free([{ metadata: deep }])).toBe(false);
  });
});
