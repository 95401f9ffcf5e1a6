import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { compactLogs } from '../src/compaction/compact';
import type { Endpoints } from '../src/index';
import { newestRowsOf } from '../src/query/first-rows';
import { neutralSqlParser } from '../src/query/sql-parser';
import { edgeEvent, endpointsAt, tempDir, writeLines } from './support/log-files';
import { withParquetReads } from './support/parquet-reads';
import { HeadTables } from '../src/engine/duckdb/head-tables';
import { readDatasetStateStable } from '../src/dataset/dataset-log';
import { SUPABASE_SOURCES } from '../src/index';
import { defaultQuery } from './support/supabase/studio-sql';
import { DuckDBConnection } from '@duckdb/node-api';
import { createEndpoints } from '../src/index';

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

  // The head files whose rows the request read from a table in memory (head-tables.ts).
  let held: string[] = [];
  const ask = async (ep: Endpoints, sql: string, params: { project: string; iso_timestamp_end?: string } = { project: 'p' }) => {
    held = [];
    const hold = HeadTables.prototype.hold;
    const spy = vi.spyOn(HeadTables.prototype, 'hold').mockImplementation(function (this: HeadTables, ...args: Parameters<HeadTables['hold']>) {
      held.push(...args[3].map((f) => f.path));
      return hold.apply(this, args);
    });
    try {
      const asked = await withParquetReads(() => ep.query('logs.all', params, { sql }));
      reads = asked.reads;
      return asked.result.result as Array<Record<string, unknown>>;
    } finally {
      spy.mockRestore();
    }
  };
  // What the request's statement read: the last set made ready (the first is the whole read's).
  const statementRead = () => reads.at(-1) ?? [];
  // Heads read from their files or from the tables in memory that hold them.
  const readsHeads = () => held.length > 0 || statementRead().some((path) => path.includes('/_heads/'));
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

  it("reads each day's heads from a table in memory, not from their files, with the same answer", async () => {
    const rows = await ask(compacted.bigquery, studioList(100));
    // The three days' heads held (head-tables.ts); the statement reads no Parquet file at all.
    expect(held.filter((path) => path.includes('/_heads/'))).toHaveLength(3);
    expect(statementRead()).toEqual([]);
    expect(rows).toEqual(await ask(whole.bigquery, studioList(100)));
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

// Managed storage's events in memory: without an upper bound, each project's newest of them (the
// memory's newest table, memory-tables.ts) are all a caller's newest rows need, as logs.all's page reads them.
describe("a caller's newest rows of the events in memory", () => {
  const tmp = tempDir('le-newest-rows-memory-');
  afterAll(() => tmp.cleanup());

  it('reads the newest table without an upper bound, every event with one, and answers as the events read whole do', async () => {
    const ep = await createEndpoints({ storage: { dataDir: tmp.path('data') }, sandboxable: ['logs.all'], now: () => new Date(NOW), cache: false });
    const prepare = vi.spyOn(DuckDBConnection.prototype, 'prepare');
    try {
      // More events of one project than the newest table keeps once cut back (one insert: cut at once).
      const events = Array.from({ length: 4200 }, (_, i) =>
        edgeEvent({ id: `n-${String(i).padStart(4, '0')}`, project: 'a', timestamp: new Date(Date.parse(NOW) - 1000 - i * 1000).toISOString(), path: `/rest/v1/t${i % 3}` }),
      );
      await ep.ingest('cloudflare.logs.prod', events);
      const sql = 'select id, event_message from (select * from edge_logs order by timestamp desc nulls last limit 70) as e order by timestamp desc';
      const ask = async (params: { project: string; iso_timestamp_end?: string }) => {
        prepare.mockClear();
        const rows = (await ep.query('logs.all', { ...params, project_tier: 'PRO' }, { sql })).result as Array<{ id: string }>;
        const texts = prepare.mock.calls.map(([text]) => text).filter((text) => text.includes('limit 70'));
        return { ids: rows.map((r) => r.id), texts };
      };
      // Asked twice: the second call's statement is the kept one, so the first's text is the one read.
      const newest = await ask({ project: 'a' });
      expect(newest.ids).toEqual(events.slice(0, 70).map((e) => e.id));
      expect(newest.texts.some((text) => /le_memory\.newest_edge_logs\b/.test(text))).toBe(true);
      // With an upper bound the newest table may not hold the page: every event in memory is read.
      const end = events[2000]!.timestamp as string;
      const older = await ask({ project: 'a', iso_timestamp_end: end });
      expect(older.ids).toEqual(events.slice(2000, 2070).map((e) => e.id));
      expect(older.texts.every((text) => !/le_memory\.newest_edge_logs\b/.test(text))).toBe(true);
    } finally {
      prepare.mockRestore();
      await ep.close();
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
      const held: string[] = [];
      const hold = HeadTables.prototype.hold;
      const spy = vi.spyOn(HeadTables.prototype, 'hold').mockImplementation(function (this: HeadTables, ...args: Parameters<HeadTables['hold']>) {
        held.push(...args[3].map((f) => f.path));
        return hold.apply(this, args);
      });
      const { result: a, reads: read } = await withParquetReads(() => compacted.query('logs.all', { project }, { sql })).finally(() => spy.mockRestore());
      // The two days' heads, each day's from its table in memory (head-tables.ts): no Parquet file read by the statement.
      expect(held).toHaveLength(2);
      expect(held.every((path) => path.includes('/_heads/'))).toBe(true);
      expect(read.at(-1)).toEqual([]);
      expect((a.result as unknown[]).length).toBe(rows);
      expect(a.result).toEqual((await whole.query('logs.all', { project }, { sql })).result);
    }
  });
});
