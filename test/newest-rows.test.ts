import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { compactLogs } from '../src/compaction/compact';
import type { Endpoints } from '../src/index';
import { newestRowsOf } from '../src/query/first-rows';
import { neutralSqlParser } from '../src/query/sql-parser';
import { edgeEvent, endpointsAt, tempDir, writeLines } from './support/log-files';
import { withParquetReads } from './support/parquet-reads';
import { readDatasetStateStable } from '../src/dataset/dataset-log';
import { SUPABASE_SOURCES } from '../src/index';
import { defaultQuery } from './support/supabase/studio-sql';

const NOW = '2026-11-21T12:00:00Z';
const DAYS = ['2026-11-21', '2026-11-20', '2026-11-19'];

// A caller's SELECT that reads only each table's newest rows (`... ORDER BY timestamp DESC NULLS
// LAST LIMIT n`: what the BigQuery translation prints for Studio's list) reads the compacted files'
// heads (each project's newest rows of a file) instead of the files (docs/performance.md, "The lists
// read from the heads"); its answers are those of the events read whole.
describe("a caller's newest rows, from the files' heads", () => {
  const tmp = tempDir('le-newest-rows-');
  let compacted: { duckdb: Endpoints; bigquery: Endpoints };
  let whole: { duckdb: Endpoints; bigquery: Endpoints };
  // The Parquet files of each read the engine made ready for DuckDB while a request ran.
  let reads: string[][] = [];

  beforeAll(async () => {
    // 'p': 60 events a day (a list of 100 spans two days' files); 'rare': 3 a day.
    const events = DAYS.flatMap((day, d) =>
      Array.from({ length: 63 }, (_, i) =>
        edgeEvent({
          id: `${day}-${String(i).padStart(2, '0')}`,
          project: i % 21 === 0 ? 'rare' : 'p',
          timestamp: new Date(Date.parse(`${day}T0${d + 1}:00:00Z`) + i * 60_000).toISOString(),
          path: `/rest/v1/t${i % 4}`,
        }),
      ),
    );
    writeLines(tmp.path('ndjson', 'all.ndjson'), events);
    await compactLogs({ source: 'edgeLogs', inputs: tmp.path('ndjson', 'all.ndjson'), outDir: tmp.path('dataset') });
    const open = async (sources: string, sqlDialect: 'duckdb' | 'bigquery') => (await endpointsAt({ edgeLogs: sources }, NOW, { sandboxable: ['logs.all'], tierWindow: false, sqlDialect })).ep;
    compacted = { duckdb: await open(tmp.path('dataset'), 'duckdb'), bigquery: await open(tmp.path('dataset'), 'bigquery') };
    whole = { duckdb: await open(tmp.path('ndjson', 'all.ndjson'), 'duckdb'), bigquery: await open(tmp.path('ndjson', 'all.ndjson'), 'bigquery') };
  });
  afterAll(async () => {
    for (const ep of [compacted.duckdb, compacted.bigquery, whole.duckdb, whole.bigquery]) await ep.close();
    tmp.cleanup();
  });
  afterEach(() => vi.restoreAllMocks());

  const ask = async (ep: Endpoints, sql: string, params: { project: string; iso_timestamp_end?: string } = { project: 'p' }) => {
    const asked = await withParquetReads(() => ep.query('logs.all', params, { sql }));
    reads = asked.reads;
    return asked.result.result as Array<Record<string, unknown>>;
  };
  // What the request's statement read: the last set made ready (the first is the whole read's).
  const statementRead = () => reads.at(-1) ?? [];
  const readsHeads = () => statementRead().some((path) => path.includes('/_heads/'));
  const readsDataOf = (day: string) => statementRead().some((path) => path.includes(`/date=${day}/`) && !path.includes('/_heads/'));

  // Studio's list of the gateway log, as its templates write it (test/support/supabase/studio-sql.ts).
  const studioList = (limit: number) =>
    `select id, edge_logs.timestamp, event_message, request.method, request.path, response.status_code from edge_logs cross join unnest(metadata) as m cross join unnest(m.request) as request cross join unnest(m.response) as response order by timestamp desc limit ${limit}`;

  it("answers Studio's list from the heads as the events read whole do, for a busy project and a rare one", async () => {
    for (const project of ['p', 'rare']) {
      for (const limit of [100, 5]) {
        const rows = await ask(compacted.bigquery, studioList(limit), { project });
        expect(readsHeads()).toBe(true);
        expect(rows).toEqual(await ask(whole.bigquery, studioList(limit), { project }));
        expect(rows).toHaveLength(project === 'p' ? limit : Math.min(limit, 9));
      }
    }
  });

  it('reads a DuckDB SELECT of the newest rows from the heads too, whatever it does with them', async () => {
    const sql = 'select id, count(*) over () as n from (select * from edge_logs order by timestamp desc nulls last limit 70) as e order by id';
    const rows = await ask(compacted.duckdb, sql);
    expect(readsHeads()).toBe(true);
    expect(rows).toEqual(await ask(whole.duckdb, sql));
  });

  it("reads a day's files, not their heads, when the request's upper bound falls inside the day, and answers the same", async () => {
    const params = { project: 'p', iso_timestamp_end: '2026-11-21T01:30:00Z' };
    const rows = await ask(compacted.bigquery, studioList(100), params);
    expect(readsDataOf('2026-11-21')).toBe(true);
    expect(readsHeads()).toBe(true);
    expect(readsDataOf('2026-11-20')).toBe(false);
    expect(rows).toEqual(await ask(whole.bigquery, studioList(100), params));
    // The newest day's rows up to 01:30 (its first 31 minutes, less 'rare''s 2), then the day before's.
    expect(rows.filter((r) => String(r.id).startsWith('2026-11-21-'))).toHaveLength(29);
  });

  it('reads the files for any other SELECT: a filter, another order, an offset', async () => {
    for (const sql of [
      "select * from edge_logs where id <> '2026-11-21-01' order by timestamp desc nulls last limit 10",
      'select * from edge_logs order by timestamp asc nulls last limit 10',
      'select * from edge_logs order by timestamp desc nulls last limit 10 offset 5',
    ]) {
      const rows = await ask(compacted.duckdb, sql);
      expect(readsHeads()).toBe(false);
      expect(rows).toEqual(await ask(whole.duckdb, sql));
    }
  });

  it('is told from the parse tree: every table read as SELECT * ... ORDER BY its timestamp DESC NULLS LAST LIMIT n, and nothing else', async () => {
    const rows = async (sql: string) => newestRowsOf({ json: await neutralSqlParser.serialize(sql) });
    expect(await rows('SELECT * FROM (SELECT * FROM "edge_logs" AS "edge_logs" ORDER BY "edge_logs"."timestamp" DESC NULLS LAST LIMIT 100) AS "edge_logs" WHERE id > 1')).toBe(100);
    expect(await rows('SELECT count(*) FROM (SELECT * FROM edge_logs ORDER BY timestamp DESC NULLS LAST LIMIT 7) AS e')).toBe(7);
    expect(await rows('SELECT * FROM (SELECT * FROM a ORDER BY timestamp DESC NULLS LAST LIMIT 7) AS x, (SELECT * FROM b ORDER BY timestamp DESC NULLS LAST LIMIT 9) AS y')).toBe(9);
    for (const sql of [
      'SELECT * FROM edge_logs WHERE id = 1 ORDER BY timestamp DESC NULLS LAST LIMIT 10',
      'SELECT * FROM edge_logs ORDER BY timestamp DESC LIMIT 10',
      'SELECT * FROM edge_logs ORDER BY timestamp DESC NULLS FIRST LIMIT 10',
      'SELECT * FROM edge_logs ORDER BY timestamp ASC NULLS LAST LIMIT 10',
      'SELECT * FROM edge_logs ORDER BY id DESC NULLS LAST LIMIT 10',
      'SELECT * FROM edge_logs ORDER BY timestamp DESC NULLS LAST, id LIMIT 10',
      'SELECT * FROM edge_logs AS e ORDER BY other.timestamp DESC NULLS LAST LIMIT 10',
      'SELECT * FROM edge_logs ORDER BY timestamp DESC NULLS LAST LIMIT 10 OFFSET 1',
      'SELECT DISTINCT * FROM edge_logs ORDER BY timestamp DESC NULLS LAST LIMIT 10',
      'SELECT * FROM edge_logs ORDER BY timestamp DESC NULLS LAST LIMIT 10%',
      'SELECT * FROM edge_logs ORDER BY timestamp DESC NULLS LAST',
      'SELECT id FROM edge_logs ORDER BY timestamp DESC NULLS LAST LIMIT 10',
      'SELECT * FROM edge_logs TABLESAMPLE 10% ORDER BY timestamp DESC NULLS LAST LIMIT 10',
      'SELECT * FROM (SELECT * FROM edge_logs ORDER BY timestamp DESC NULLS LAST LIMIT 10) AS e WHERE id IN (SELECT id FROM edge_logs)',
      'SELECT * FROM (SELECT * FROM edge_logs ORDER BY timestamp DESC NULLS LAST LIMIT 10) AS e JOIN auth_logs USING (id)',
      'WITH x AS (SELECT * FROM edge_logs) SELECT * FROM x ORDER BY timestamp DESC NULLS LAST LIMIT 10',
      'SELECT 1',
    ]) {
      expect(await rows(sql), sql).toBeNull();
    }
  });
});

describe("Postgres's log, whose files have heads too", () => {
  const tmp = tempDir('le-newest-rows-postgres-');
  const severities = ['LOG', 'LOG', 'ERROR', 'WARNING'];
  // 150 lines a day over two days, of two projects.
  const events = ['2026-11-21', '2026-11-20'].flatMap((day) =>
    Array.from({ length: 150 }, (_, i) => ({
      id: `${day}-${i}`,
      timestamp: new Date(Date.parse(`${day}T02:00:00Z`) + i * 7_000).toISOString(),
      event_message: `line ${i}`,
      project: i % 5 === 0 ? 'other' : 'default',
      metadata: { host: 'db-default', parsed: { error_severity: severities[i % 4], user_name: `u${i % 3}`, detail: i % 2 ? `d${i}` : null } },
    })),
  );
  let compacted: Endpoints;
  let whole: Endpoints;

  beforeAll(async () => {
    writeLines(tmp.path('ndjson', 'postgres.ndjson'), events);
    await compactLogs({ source: 'postgresLogs', sourceDefinitions: SUPABASE_SOURCES, inputs: tmp.path('ndjson', 'postgres.ndjson'), outDir: tmp.path('dataset') });
    const open = async (sources: string) =>
      (await endpointsAt({ postgresLogs: sources }, NOW, { sourceDefinitions: SUPABASE_SOURCES, sandboxable: ['logs.all'], tierWindow: false, sqlDialect: 'bigquery' })).ep;
    compacted = await open(tmp.path('dataset'));
    whole = await open(tmp.path('ndjson', 'postgres.ndjson'));
  });
  afterAll(async () => {
    await compacted.close();
    await whole.close();
    tmp.cleanup();
  });

  it("gets a head for each compacted file, and Studio's list of it answers as the events read whole do", async () => {
    const files = [...readDatasetStateStable(tmp.path('dataset')).files.values()];
    expect(files).toHaveLength(2);
    expect(files.every((f) => f.head !== undefined)).toBe(true);
    for (const [project, rows] of [
      ['default', 100],
      ['other', 60],
    ] as const) {
      const sql = defaultQuery('postgres_logs', {});
      const { result: a, reads: read } = await withParquetReads(() => compacted.query('logs.all', { project }, { sql }));
      expect(read.at(-1)!.length).toBe(2);
      expect(read.at(-1)!.every((path) => path.includes('/_heads/'))).toBe(true);
      expect((a.result as unknown[]).length).toBe(rows);
      expect(a.result).toEqual((await whole.query('logs.all', { project }, { sql })).result);
    }
  });
});
