import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { DuckDBConnection } from '@duckdb/node-api';
import { readdirSync } from 'node:fs';
import { compactLogs } from '../src/compaction/compact';
import { createEndpoints, defineEndpoint, type Endpoints } from '../src/index';
import { firstRowsOf, rowsAreEvents } from '../src/query/first-rows';
import { querySql } from '../src/sql/query-files';
import { neutralSqlParser } from '../src/query/sql-parser';
import { edgeEvent, endpointsAt, tempDir, writeLines } from './support/log-files';

const NOW = '2026-11-21T12:00:00Z';
const DAYS = ['2026-11-21', '2026-11-20', '2026-11-19', '2026-11-18', '2026-11-17'];

// A caller's `SELECT <columns> FROM <table> WHERE ... LIMIT n` (Studio's single log) reads the
// newest days first and stops once it has n rows (docs/performance.md, "The lists and the single
// log").
describe("a caller's first rows, newest days first", () => {
  const tmp = tempDir('le-first-rows-');
  let byDay: Endpoints;
  let whole: Endpoints;
  // The SQL texts DuckDB prepared while a test ran: each names the files it reads.
  let prepared: string[] = [];

  beforeAll(async () => {
    const events = DAYS.flatMap((day, d) =>
      Array.from({ length: 40 }, (_, i) =>
        edgeEvent({ id: `${day}-${String(i).padStart(2, '0')}`, project: i % 10 === 0 ? 'rare' : 'p', timestamp: `${day}T0${d}:${String(i).padStart(2, '0')}:00Z` }),
      ),
    );
    writeLines(tmp.path('ndjson', 'all.ndjson'), events);
    await compactLogs({ source: 'edgeLogs', inputs: tmp.path('ndjson', 'all.ndjson'), outDir: tmp.path('dataset') });
    expect(readdirSync(tmp.path('dataset')).filter((d) => d.startsWith('date='))).toHaveLength(DAYS.length);
    // No tier window: a request without bounds reads every day, as Studio's single log does.
    const options = { sandboxable: ['logs.all'], tierWindow: false };
    ({ ep: byDay } = await endpointsAt({ edgeLogs: tmp.path('dataset') }, NOW, options));
    ({ ep: whole } = await endpointsAt({ edgeLogs: tmp.path('ndjson', 'all.ndjson') }, NOW, options));
  });
  afterAll(async () => {
    await byDay.close();
    await whole.close();
    tmp.cleanup();
  });
  afterEach(() => vi.restoreAllMocks());

  /** From now until the mocks are restored, each SQL text DuckDB prepares is kept in `prepared`. */
  const recordPrepares = () => {
    prepared = [];
    const original = DuckDBConnection.prototype.prepare;
    vi.spyOn(DuckDBConnection.prototype, 'prepare').mockImplementation(function (this: DuckDBConnection, text: string) {
      prepared.push(text);
      return original.call(this, text);
    });
  };
  const ask = async (ep: Endpoints, sql: string, project = 'p') => {
    recordPrepares();
    try {
      return (await ep.query('logs.all', { project }, { sql })).result as Array<Record<string, unknown>>;
    } finally {
      vi.restoreAllMocks();
    }
  };
  const daysRead = () => DAYS.filter((day) => prepared.some((text) => text.includes(`date=${day}/`)));

  it('finds an id of the two newest days in their files alone, and one of an older day in a few more statements', async () => {
    const single = (id: string) => `select id, timestamp, event_message, metadata from edge_logs where id = '${id}' limit 1`;
    expect(await ask(byDay, single('2026-11-21-05'))).toEqual(await whole.query('logs.all', { project: 'p' }, { sql: single('2026-11-21-05') }).then((r) => r.result));
    expect(daysRead()).toEqual(['2026-11-21', '2026-11-20']);
    // The oldest day: the two newest days, the two before them, then the rest.
    const oldest = await ask(byDay, single('2026-11-17-05'));
    expect(oldest.map((r) => r.id)).toEqual(['2026-11-17-05']);
    expect(daysRead()).toEqual(DAYS);
    expect(prepared.filter((text) => text.includes('read_parquet'))).toHaveLength(3);
    expect(await ask(byDay, single('nowhere'))).toEqual([]);
  });

  it('takes rows from older days until it has as many as asked, each one passing the filter', async () => {
    // 'rare' has 4 rows a day: 10 of them take the two newest days, then the two before them.
    const rare = (await ask(byDay, 'select id from edge_logs limit 10', 'rare')).map((r) => String(r.id));
    expect(rare).toHaveLength(10);
    expect(new Set(rare).size).toBe(10);
    expect(rare.every((id) => /^2026-11-(21|20|19|18)-\d0$/.test(id))).toBe(true);
    expect(rare.filter((id) => /^2026-11-(21|20)/.test(id))).toHaveLength(8);
    expect(daysRead()).toEqual(DAYS.slice(0, 4));
    // Asked for more than there are: every row, whichever day it is in.
    const all = await ask(byDay, 'select id from edge_logs limit 1000');
    const expected = await whole.query('logs.all', { project: 'p' }, { sql: 'select id from edge_logs limit 1000' }).then((r) => r.result as Array<{ id: string }>);
    expect(all.map((r) => r.id).sort()).toEqual(expected.map((r) => r.id).sort());
    expect(all).toHaveLength(180);
  });

  it('reads every day at once for any other SELECT', async () => {
    for (const sql of [
      'select count(*) as n from edge_logs limit 1',
      'select id from edge_logs order by timestamp desc limit 1',
      "select id from edge_logs where id in (select id from edge_logs where id = '2026-11-17-01') limit 1",
    ]) {
      expect(await ask(byDay, sql), sql).toEqual(await whole.query('logs.all', { project: 'p' }, { sql }).then((r) => r.result));
      expect(daysRead(), sql).toEqual(DAYS);
      expect(
        prepared.filter((text) => text.includes('read_parquet')),
        sql,
      ).toHaveLength(1);
    }
  });

  it("reads every day over an endpoint's own CTE: its rows are not events", async () => {
    const perProject = defineEndpoint({
      name: 'per_project',
      sql: { duckdb: 'WITH counts AS (SELECT project, count(*) AS n FROM edge_logs GROUP BY project) SELECT project, n FROM counts' },
      columns: { project: 'text', n: 'integer' },
      cache: 'never',
      sandboxable: true,
    });
    const ep = await createEndpoints({ sources: { edgeLogs: tmp.path('dataset') }, endpoints: [perProject], now: () => new Date(NOW), cache: false });
    try {
      recordPrepares();
      expect((await ep.query('per_project', {}, { sql: "select n from counts where project = 'p' limit 1" })).result).toEqual([{ n: 180 }]);
      expect(daysRead()).toEqual(DAYS);
    } finally {
      vi.restoreAllMocks();
      await ep.close();
    }
  });

  it('reads every day over source tables that do not keep events as they are', async () => {
    // One row per id across days: the newest day's row of an id seen earlier is not in the table.
    const firstSeen = defineEndpoint({
      name: 'first_seen',
      sql: { duckdb: 'SELECT 1 AS one' },
      columns: { one: 'integer' },
      cache: 'never',
      sandboxable: true,
      sourceTables: { duckdb: 'SELECT * FROM source_rows QUALIFY row_number() OVER (PARTITION BY project_column ORDER BY timestamp) = 1' },
    });
    const ep = await createEndpoints({ sources: { edgeLogs: tmp.path('dataset') }, endpoints: [firstSeen], now: () => new Date(NOW), cache: false });
    try {
      recordPrepares();
      expect((await ep.query('first_seen', {}, { sql: "select id from edge_logs where project = 'p' limit 1" })).result).toEqual([{ id: '2026-11-17-01' }]);
      expect(daysRead()).toEqual(DAYS);
    } finally {
      vi.restoreAllMocks();
      await ep.close();
    }
  });

  it('tells source tables that keep events from the template: a filter of source_rows and nothing else', async () => {
    const events = async (sql: string) => rowsAreEvents({ json: await neutralSqlParser.serialize(sql) });
    expect(await events(querySql('duckdb', 'logs.all.tables'))).toBe(true);
    expect(await events('SELECT * FROM source_rows')).toBe(true);
    for (const sql of [
      'SELECT * FROM source_rows LIMIT 10',
      'SELECT id, timestamp FROM source_rows',
      'SELECT * EXCLUDE (metadata) FROM source_rows',
      'SELECT DISTINCT * FROM source_rows',
      'SELECT * FROM source_rows QUALIFY row_number() OVER (PARTITION BY id ORDER BY timestamp) = 1',
      'SELECT * FROM source_rows WHERE id IN (SELECT id FROM source_rows LIMIT 1)',
      'SELECT * FROM source_rows ORDER BY timestamp',
    ]) {
      expect(await events(sql), sql).toBe(false);
    }
  });

  it('is told from the parse tree: column references from one table, a filter without subqueries, a LIMIT and nothing else', async () => {
    const rows = async (sql: string) => firstRowsOf({ json: await neutralSqlParser.serialize(sql) });
    expect(await rows("select id, timestamp from edge_logs where id = 'a' limit 1")).toBe(1);
    expect(await rows('select e.id from edge_logs as e limit 5')).toBe(5);
    for (const sql of [
      'select id from edge_logs',
      'select count(*) from edge_logs limit 1',
      'select upper(id) from edge_logs limit 1',
      'select * from edge_logs limit 1',
      'select id from edge_logs order by id limit 1',
      'select distinct id from edge_logs limit 1',
      'select id from edge_logs limit 1 offset 1',
      'select id from edge_logs limit 0',
      'select id from edge_logs group by id limit 1',
      'select id from edge_logs where id in (select id from edge_logs) limit 1',
      'select a.id from edge_logs a join edge_logs b on a.id = b.id limit 1',
      'with t as (select id from edge_logs) select id from t limit 1',
      'select id from edge_logs using sample 10 limit 1',
      'select id from edge_logs limit 1; select 1',
    ]) {
      expect(await rows(sql), sql).toBeNull();
    }
    expect(firstRowsOf({ failed: new Error('no parse') })).toBeNull();
  });
});
