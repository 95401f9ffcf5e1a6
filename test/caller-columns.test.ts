import { afterAll, beforeAll, describe, expect, it, vi, type MockInstance } from 'vitest';
import { DuckDBConnection } from '@duckdb/node-api';
import { mkdirSync } from 'node:fs';
import { compactLogs } from '../src/compaction/compact';
import { createEndpoints, type Endpoints } from '../src/index';
import { callerColumnsRead, sourceTablesStatement } from '../src/sandbox/source-tables';
import { querySql } from '../src/sql/query-files';
import { neutralSqlParser } from '../src/query/sql-parser';
import { mergeTableReads, tableReads } from '../src/sandbox/table-reads';
import { edgeLogs } from '../src/sources/edge-logs';
import { edgeEvent, tempDir, writeLines } from './support/log-files';

const NOW = '2026-11-21T12:00:00Z';

// The reference of the engine tests below: the same SELECTs compiled with every column, as before.
const compiling = vi.hoisted(() => ({ narrowed: true }));
vi.mock('../src/sandbox/source-tables', async (importOriginal) => {
  const original = await importOriginal<typeof import('../src/sandbox/source-tables')>();
  return { ...original, callerColumnsRead: (...args: Parameters<typeof original.callerColumnsRead>) => (compiling.narrowed ? original.callerColumnsRead(...args) : new Map()) };
});
const TEMPLATE = querySql('duckdb', 'logs.all.tables');

// A caller's SELECT over source tables reads each table with the columns it names, and the
// source's relation with those and the ones the template's filter names: DuckDB's planner reads
// the statistics of every column a Parquet scan projects from every row group before it drops the
// unused ones (docs/performance.md, "The source tables with the columns a caller names").
describe('the columns a caller names', () => {
  const readsOf = async (sql: string) => tableReads(JSON.parse(await neutralSqlParser.serialize(sql)).statements[0], ['edge_logs']);
  const read = async (sql: string, typed = false) => callerColumnsRead(TEMPLATE, [edgeLogs], await readsOf(sql), typed).get(edgeLogs);

  it("keeps a table's named columns with timestamp, and its relation's with the template's filter", async () => {
    expect(await read("select id, event_message from edge_logs where id = 'a' limit 1")).toEqual({
      table: new Set(['timestamp', 'id', 'event_message']),
      relation: new Set(['timestamp', 'id', 'event_message', 'project']),
    });
    // A table of no named column still has one column.
    expect(await read('select count(*) from edge_logs')).toEqual({ table: new Set(['timestamp']), relation: new Set(['timestamp', 'project']) });
    // In a translated BigQuery SELECT (typed columns) a `*` is the translation's own range passing
    // rows on, or a product: a caller's own `*` is a column it may read unnamed.
    const printed = 'SELECT make_timestamp("t"."k" * 60) AS "b", count("t"."id") AS "n" FROM (SELECT *, epoch_us("t"."timestamp") AS "k" FROM "edge_logs" AS "t") AS "t" GROUP BY 1';
    expect((await read(printed, true))?.table).toEqual(new Set(['timestamp', 'id']));
    expect(await read(printed, false)).toBeUndefined();
    // A translated BigQuery SELECT names the typed columns it reads, quoted.
    expect((await read('select "edge_logs"."json:metadata.request.path" from "edge_logs" as "edge_logs"', true))?.table).toEqual(new Set(['timestamp', 'json:metadata.request.path']));
  });

  it('keeps every column where a text may read one unnamed, or the template is not the rows as they are', async () => {
    for (const sql of [
      'select * from edge_logs',
      'select e.* from edge_logs e',
      'select to_json(edge_logs) from edge_logs',
      'select count(*) from edge_logs natural join edge_logs as b',
      "select columns('.*') from edge_logs",
      'from edge_logs',
      // Column aliases rename the table's columns by position.
      'select a from edge_logs e(a)',
    ])
      expect(await read(sql), sql).toBeUndefined();
    // Its form without the arrays half is read too: what one text reads unnamed keeps every column.
    const both = mergeTableReads([await readsOf('select id from edge_logs'), await readsOf('select * from edge_logs')]);
    expect(callerColumnsRead(TEMPLATE, [edgeLogs], both, false).size).toBe(0);
    expect(callerColumnsRead('SELECT id, timestamp FROM source_rows', [edgeLogs], await readsOf('select id from edge_logs'), false).size).toBe(0);
    // A SELECT the sandbox did not read keeps every column.
    expect(callerColumnsRead(TEMPLATE, [edgeLogs], undefined, false).size).toBe(0);
  });

  it("writes each table's CTE with the kept columns alone, every column for a source without them", () => {
    const kept = new Map([[edgeLogs, new Set(['timestamp', 'id'])]]);
    expect(sourceTablesStatement(TEMPLATE, [edgeLogs], false, undefined, kept)).toMatch(/^WITH edge_logs AS \(SELECT id, timestamp FROM \(/);
    expect(sourceTablesStatement(TEMPLATE, [edgeLogs])).toMatch(/^WITH edge_logs AS \(SELECT id, timestamp, event_message, metadata, project, appname, severity FROM \(/);
  });
});

// Studio's requests over compacted days and events in memory (BigQuery dialect, as Studio sends
// them): the same answers as the same SELECTs compiled with every column, for the single log of an
// id in memory, in the newest day, in an older day, in none and held twice, and for Studio's list,
// count, chart and Top Paths, whose translations pass rows on through ranges of their own (`*`).
describe("Studio's requests read with the columns they name", () => {
  const tmp = tempDir('le-caller-columns-');
  const days = ['2026-11-21', '2026-11-20', '2026-11-19', '2026-11-18'];
  let ep: Endpoints;
  let prepare: MockInstance<DuckDBConnection['prepare']>;

  beforeAll(async () => {
    const events = days.flatMap((day, d) =>
      Array.from({ length: 30 }, (_, i) =>
        edgeEvent({ id: `${day}-${i}`, timestamp: `${day}T0${d}:${String(i).padStart(2, '0')}:00Z`, path: `/rest/v1/t${i % 3}`, extra: { response: { status_code: i % 7 ? 200 : 503 } } }),
      ),
    );
    // One id twice: in the oldest day's file and in memory.
    events.push(edgeEvent({ id: 'twice', timestamp: '2026-11-18T05:00:00Z', message: 'the older one' }));
    writeLines(tmp.path('ndjson', 'days.ndjson'), events);
    // The compacted days as the instance's own dataset; the events after them held in memory.
    mkdirSync(tmp.path('data', 'edgeLogs', 'parquet'), { recursive: true });
    await compactLogs({ source: 'edgeLogs', inputs: tmp.path('ndjson', 'days.ndjson'), outDir: tmp.path('data', 'edgeLogs', 'parquet') });
    ep = await createEndpoints({ storage: { dataDir: tmp.path('data') }, now: () => new Date(NOW), cache: false, sandboxable: ['logs.all'], sqlDialect: 'bigquery', tierWindow: false });
    await ep.ingest('cloudflare.logs.prod', [
      edgeEvent({ id: 'in-memory', timestamp: '2026-11-21T11:00:00Z' }),
      edgeEvent({ id: 'twice', timestamp: '2026-11-21T11:30:00Z', message: 'the newer one' }),
    ]);
    prepare = vi.spyOn(DuckDBConnection.prototype, 'prepare');
  });
  afterAll(async () => {
    prepare?.mockRestore();
    await ep?.close();
    tmp.cleanup();
  });

  const ask = async (sql: string, narrowed: boolean, params: Record<string, string> = {}) => {
    prepare.mockClear();
    compiling.narrowed = narrowed;
    try {
      const rows = (await ep.query('logs.all', { project: 'abc', ...params }, { sql })).result as Array<Record<string, unknown>>;
      return { rows, texts: prepare.mock.calls.map(([text]) => text).filter((text) => text.includes('read_parquet(')) };
    } finally {
      compiling.narrowed = true;
    }
  };
  // Told apart from the narrowed text so that each is compiled (and kept) its own way.
  const single = (id: string) => `select id, timestamp, event_message, metadata from edge_logs where id = '${id}' limit 1`;
  const reference = (id: string) => `select id, timestamp, event_message, metadata from edge_logs where id = '${id}' limit 1 -- every column`;
  /** The columns each Parquet scan of a statement projects. */
  const scanned = (text: string) => [...text.matchAll(/\(SELECT ([^()]*?) FROM read_parquet\(/g)].map((m) => m[1]!.split(', ').map((c) => /^"([^"]+)"/.exec(c)?.[1] ?? c));

  it('answers the single log as with every column, reading only the columns it names', async () => {
    for (const id of ['in-memory', '2026-11-21-3', '2026-11-20-29', '2026-11-18-7', 'nowhere']) {
      const narrowed = await ask(single(id), true);
      const whole = await ask(reference(id), false);
      expect(narrowed.rows, id).toEqual(whole.rows);
      expect(narrowed.rows.length, id).toBe(id === 'nowhere' ? 0 : 1);
      // Its statements' scans project the named columns and the template's project; the reference's every column.
      expect(narrowed.texts.length, id).toBeGreaterThan(0);
      for (const text of narrowed.texts) for (const columns of scanned(text)) expect(columns.sort(), id).toEqual(['event_message', 'id', 'metadata', 'project', 'timestamp']);
      expect(
        whole.texts.some((text) => scanned(text).some((columns) => columns.includes('status_code'))),
        id,
      ).toBe(true);
      // The id in memory is read from the memory tables, with the newest days' files.
      if (id === 'in-memory') expect(narrowed.texts.some((text) => text.includes('le_memory.edge_logs'))).toBe(true);
    }
  });

  it('answers an id held twice with one of its rows', async () => {
    const both = (await ask(`select id, timestamp, event_message, metadata from edge_logs where id = 'twice'`, false)).rows;
    expect(both.map((r) => r.event_message).sort()).toEqual(['the newer one', 'the older one']);
    const narrowed = (await ask(single('twice'), true)).rows;
    expect(narrowed).toHaveLength(1);
    expect(both).toContainEqual(narrowed[0]);
  });

  it("answers Studio's list, count, chart and Top Paths as with every column, reading fewer", async () => {
    // Within an hour: no whole hour the hour counts could serve, so every request reads rows.
    const range = { iso_timestamp_start: '2026-11-21T00:05:00Z', iso_timestamp_end: '2026-11-21T00:25:30Z' };
    const requests = [
      'select id, edge_logs.timestamp, event_message, request.method, request.path, response.status_code from edge_logs cross join unnest(metadata) as m cross join unnest(m.request) as request cross join unnest(m.response) as response order by timestamp desc limit 100',
      'select count(*) as count from edge_logs cross join unnest(metadata) as m cross join unnest(m.response) as response where response.status_code >= 500',
      'select timestamp_trunc(t.timestamp, hour) as timestamp, countif(response.status_code >= 500) as error_count, count(t.id) as count from edge_logs t cross join unnest(t.metadata) as m cross join unnest(m.response) as response group by timestamp order by timestamp asc',
      'select request.path as path, count(t.timestamp) as c from edge_logs t cross join unnest(t.metadata) as m cross join unnest(m.request) as request group by path order by c desc limit 100',
    ];
    for (const sql of requests) {
      const narrowed = await ask(sql, true, range);
      const whole = await ask(`${sql} -- every column`, false, range);
      expect(narrowed.rows, sql).toEqual(whole.rows);
      expect(narrowed.rows.length, sql).toBeGreaterThan(0);
      expect(narrowed.texts.length, sql).toBeGreaterThan(0);
      expect(
        narrowed.texts.every((text) => scanned(text).every((columns) => !columns.includes('status_code'))),
        sql,
      ).toBe(true);
      expect(
        whole.texts.some((text) => scanned(text).some((columns) => columns.includes('status_code'))),
        sql,
      ).toBe(true);
    }
  });
});

// A caller's own DuckDB SELECT: what it may read without naming a column keeps every column, so
// its answer is the one over the whole table (the reads are told from the tree the sandbox checked).
describe("a caller's DuckDB SELECT read with the columns it names", () => {
  const tmp = tempDir('le-caller-columns-duckdb-');
  let ep: Endpoints;

  beforeAll(async () => {
    ep = await createEndpoints({ storage: { dataDir: tmp.path('data') }, now: () => new Date(NOW), cache: false, sandboxable: ['logs.all'], tierWindow: false });
    await ep.ingest(
      'cloudflare.logs.prod',
      ['a', 'b', 'c'].map((id, i) => edgeEvent({ id, timestamp: `2026-11-21T11:0${i}:00Z`, message: `message ${id}` })),
    );
  });
  afterAll(async () => {
    await ep?.close();
    tmp.cleanup();
  });

  const ask = async (sql: string, narrowed: boolean) => {
    compiling.narrowed = narrowed;
    try {
      return (await ep.query('logs.all', { project: 'abc' }, { sql })).result;
    } finally {
      compiling.narrowed = true;
    }
  };

  it.each([
    // Column aliases rename the table's first columns: `a` is `id` whatever the SELECT names.
    ['select a from edge_logs e(a) order by a', [{ a: 'a' }, { a: 'b' }, { a: 'c' }]],
    ["select e.a as x, e.b as y from edge_logs as e(a, b) where e.a = 'b'", [{ x: 'b', y: '2026-11-21T11:01:00.000000Z' }]],
    // A quoted alias used as a value is the whole row.
    ['select "e".id, length(to_json("e")::varchar) > 0 as whole from edge_logs "e" order by 1 limit 1', [{ id: 'a', whole: true }]],
  ])('answers %s as over every column', async (sql, expected) => {
    const narrowed = await ask(sql, true);
    expect(narrowed).toEqual(await ask(`${sql} -- every column`, false));
    expect(JSON.parse(JSON.stringify(narrowed))).toEqual(expected);
  });
});
