import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { compactLogs } from '../src/compaction/compact';
import { TIMESTAMP_MACROS } from '../src/duckdb/source-relations';
import { MemoryTables } from '../src/managed/memory-tables';
import { BUILT_IN_SOURCE_SET, edgeLogs, functionEdgeLogs } from '../src/sources/built-ins';
import { createEndpoints, type Endpoints } from '../src/index';
import { waitUntil } from './support/hang-guard';
import { edgeEvent, functionEvent, tempDir, writeLines } from './support/log-files';

// The memory tables hold each rollup a query computes over the uncompacted tail beside the rows,
// per insert and in its transaction, and a query reads them instead of computing them
// (docs/definitions.md, "Stored rollups"; docs/performance.md, "Rollups held beside the memory
// tables' rows").

const HOUR = 3_600_000;
const END = Date.parse('2026-11-21T12:00:00Z');
const PATHS = ['/rest/v1/todos', '/auth/v1/token', '/storage/v1/object/a.png', '/realtime/v1/websocket', '/graphql/v1', '/rest/v1/rpc/p0_stats'];

/** Gateway events of three projects, `count` of them from `newest` back by `step` ms, URLs with and without query strings. */
function gateway(prefix: string, count: number, newest: number, step: number): object[] {
  return Array.from({ length: count }, (_, i) => {
    const project = `p${i % 3}`;
    const path = PATHS[(i * 7) % PATHS.length]!;
    const query = i % 4 === 0 ? `?id=eq.${i % 5}` : '';
    return edgeEvent({ id: `${prefix}-${i}`, project, path, url: `https://${project}.supabase.co${path}${query}`, timestamp: new Date(newest - i * step).toISOString() });
  });
}

/** Invocations of two functions of two projects, with execution times varied enough to rank. */
function invocations(prefix: string, count: number, newest: number, step: number): object[] {
  return Array.from({ length: count }, (_, i) =>
    functionEvent({
      id: `${prefix}-${i}`,
      project: `p${i % 2}`,
      functionId: `f${i % 3 === 0 ? 1 : 2}`,
      ms: 5 + ((i * 37) % 400),
      status: i % 9 === 0 ? 500 : 200,
      timestamp: new Date(newest - i * step).toISOString(),
    }),
  );
}

describe('the memory tables hold the rollups a query would compute over them', () => {
  const tmp = tempDir('le-memory-rollups-');
  let clock = new Date(END);
  let managed: Endpoints;
  let byHand: Endpoints;
  // Compacted before: the week up to 3 hours back. In memory: the last 3 hours, in several inserts.
  const older = { edge: gateway('old', 900, END - 3 * HOUR, 11 * 60_000), functions: invocations('fold', 400, END - 3 * HOUR, 25 * 60_000) };
  const newer = { edge: gateway('new', 600, END - 1000, 17_000), functions: invocations('fnew', 300, END - 1000, 35_000) };

  beforeAll(async () => {
    const dataDir = tmp.path('managed');
    const first = await createEndpoints({ storage: { dataDir, maxSegmentAgeMs: 1 }, now: () => clock, cache: false });
    try {
      await first.ingest('cloudflare.logs.prod', older.edge);
      await first.ingest('deno-relay-logs', older.functions);
      await waitUntil(() => first.stats().storage!.settled && first.stats().storage!.compactedEvents === 1300);
    } finally {
      await first.close();
    }
    // Segments that never close while the test runs: the newer events stay in memory.
    managed = await createEndpoints({ storage: { dataDir, maxSegmentAgeMs: 1e9, segmentQuietMs: 1e9, maxSegmentBytes: 2 ** 30 }, now: () => clock, cache: false });
    for (let i = 0; i < newer.edge.length; i += 150) await managed.ingest('cloudflare.logs.prod', newer.edge.slice(i, i + 150));
    for (let i = 0; i < newer.functions.length; i += 100) await managed.ingest('deno-relay-logs', newer.functions.slice(i, i + 100));
    writeLines(tmp.path('ndjson', 'edge.ndjson'), [...older.edge, ...newer.edge]);
    writeLines(tmp.path('ndjson', 'functions.ndjson'), [...older.functions, ...newer.functions]);
    await compactLogs({ source: 'edgeLogs', inputs: tmp.path('ndjson', 'edge.ndjson'), outDir: tmp.path('hand', 'edge') });
    await compactLogs({ source: 'functionEdgeLogs', inputs: tmp.path('ndjson', 'functions.ndjson'), outDir: tmp.path('hand', 'functions') });
    byHand = await createEndpoints({ sources: { edgeLogs: tmp.path('hand', 'edge'), functionEdgeLogs: tmp.path('hand', 'functions') }, now: () => clock, cache: false });
  });
  afterAll(async () => {
    await managed?.close();
    await byHand?.close();
    tmp.cleanup();
  });

  it('a query over events in memory reads their rollups as held, never computing one, and answers as the same events compacted', async () => {
    expect(managed.stats().storage!.compactedEvents).toBe(0);
    const prepare = vi.spyOn(DuckDBConnection.prototype, 'prepare');
    try {
      const cases: Array<[string, Record<string, string>]> = [];
      for (const project of ['p0', 'p1', 'p0(\\.|$)']) {
        for (const interval of ['hourly', '1hr', '3hr', '1day', '3day', 'daily', '7day']) cases.push(['usage.api-counts', { project, interval }]);
      }
      for (const project of ['p0', 'p1']) {
        for (const interval of ['1hr', '1day', '7day']) cases.push(['functions.invocation-stats', { project, interval }], ['functions.invocation-stats', { project, interval, function_id: 'f1' }]);
      }
      // On the hour (the hours variants) and inside one (day buckets read the raw hour before the first whole one).
      for (const at of ['2026-11-21T12:00:00Z', '2026-11-21T11:37:12Z']) {
        clock = new Date(at);
        for (const [name, params] of cases) {
          const [mine, theirs] = await Promise.all([managed.query(name as never, params as never), byHand.query(name as never, params as never)]);
          expect(mine.result, `${name} ${JSON.stringify(params)} at ${at}`).toEqual(theirs.result);
        }
      }
      const texts = prepare.mock.calls.map(([sql]) => sql);
      // The held rollups were read...
      for (const name of ['edge_logs_origin_hourly', 'edge_logs_url_hourly', 'edge_logs_url_grams', 'function_edge_logs_hourly', 'function_edge_logs_daily_summary']) {
        expect(
          texts.some((sql) => sql.includes(`le_memory.rollup_${name} WHERE`)),
          name,
        ).toBe(true);
      }
      // ... and no statement of the managed instance computed a rollup over rows: every file has
      // its rollups stored and memory holds the rest (only a rollup's columns over no events remain).
      const overRows = (sql: string, text: string) =>
        sql
          .split(text)
          .slice(0, -1)
          .filter((before) => !/LIMIT 0\s*\)\s*$/.test(before)).length;
      const mine = texts.filter((sql) => sql.includes('le_memory.'));
      expect(mine.length).toBeGreaterThan(0);
      for (const source of [edgeLogs, functionEdgeLogs]) {
        for (const [name, rollup] of Object.entries(source.rollups)) {
          expect(
            mine.reduce((n, sql) => n + overRows(sql, rollup.sql) + (rollup.rest === undefined ? 0 : overRows(sql, rollup.rest)), 0),
            name,
          ).toBe(0);
        }
      }
    } finally {
      prepare.mockRestore();
      clock = new Date(END);
    }
  });
});

describe('held rollups go in and out with their rows', () => {
  /** Memory tables attached to a DuckDB of their own, and a connection to read them with. */
  async function withTables(test: (memory: MemoryTables, read: (sql: string) => Promise<Array<Record<string, unknown>>>) => Promise<void>): Promise<void> {
    const instance = await DuckDBInstance.create(':memory:');
    const setup = await instance.connect();
    for (const macro of TIMESTAMP_MACROS) await setup.run(macro);
    const folder = tempDir('le-memory-rollups-tables-');
    const memory = new MemoryTables(BUILT_IN_SOURCE_SET, { folder: folder.path('tables') });
    memory.attach(instance);
    try {
      await test(memory, async (sql) => (await setup.runAndReadAll(sql)).getRowObjectsJS() as Array<Record<string, unknown>>);
    } finally {
      await memory.close();
      setup.closeSync();
      instance.closeSync();
      folder.cleanup();
    }
  }
  const lines = (events: object[]) => Buffer.from(events.map((e) => `${JSON.stringify(e)}\n`).join(''));
  const perSegment = (read: (sql: string) => Promise<Array<Record<string, unknown>>>, table: string) =>
    read(
      `SELECT le_seq::INTEGER AS le_seq, sum(rest_requests + storage_requests + auth_requests + realtime_requests)::INTEGER AS classed, count(*)::INTEGER AS n FROM le_memory.${table} GROUP BY 1 ORDER BY 1`,
    );

  it("a view's held rollups cover exactly the rows it reads, a retired segment's go with its rows, and a failed insert leaves none", async () => {
    await withTables(async (memory, read) => {
      const events = gateway('s', 30, END, 60_000);
      await memory.insert('edgeLogs', 1, lines(events.slice(0, 10)));
      await memory.insert('edgeLogs', 1, lines(events.slice(10, 20)));
      await memory.insert('edgeLogs', 2, lines(events.slice(20)));
      // A group DuckDB cannot read: its insert rolls back, rollups and all, and its segment is read from its file.
      await memory.insert('edgeLogs', 3, Buffer.from('{"id": "x", "timestamp": \n'));
      const view = memory.view('edgeLogs').relation(() => false)!;
      expect(Object.keys(view.rollups!).sort()).toEqual(['edge_logs_origin_hourly', 'edge_logs_url_grams', 'edge_logs_url_hourly']);
      // The origin rollup over the rows the view reads, computed, and as held: the same counts.
      const computed = await read(`
        WITH edge_logs AS (${view.rows})
        SELECT count(*) FILTER (WHERE contains(request_path, '/rest') OR contains(request_path, '/storage') OR contains(request_path, '/auth') OR contains(request_path, '/realtime'))::INTEGER AS classed FROM edge_logs`);
      const held = await read(`SELECT sum(rest_requests + storage_requests + auth_requests + realtime_requests)::INTEGER AS classed FROM (${view.rollups!.edge_logs_origin_hourly})`);
      expect(held).toEqual(computed);
      expect((computed[0]!.classed as number) > 0).toBe(true);
      expect((await perSegment(read, 'rollup_edge_logs_origin_hourly')).map((r) => r.le_seq)).toEqual([1, 2]);

      memory.retire('edgeLogs', [1]);
      await memory.settled();
      expect((await perSegment(read, 'rollup_edge_logs_origin_hourly')).map((r) => r.le_seq)).toEqual([2]);
      expect((await read('SELECT DISTINCT le_seq::INTEGER AS le_seq FROM le_memory.rollup_edge_logs_url_hourly')).map((r) => r.le_seq)).toEqual([2]);
      expect((await read('SELECT DISTINCT le_seq::INTEGER AS le_seq FROM le_memory.rollup_edge_logs_url_grams')).map((r) => r.le_seq)).toEqual([2]);
    });
  });

  it('holds no typed counts: a caller chart reads those from stored files only, and the rest of its hours as rows', async () => {
    await withTables(async (memory, read) => {
      await memory.insert('edgeLogs', 1, lines(gateway('t', 5, END, 60_000)));
      const tables = (await read("SELECT table_name FROM information_schema.tables WHERE table_catalog = 'le_memory' AND table_name LIKE 'rollup_%' ORDER BY 1")).map((r) => r.table_name);
      expect(tables).toEqual([
        'rollup_edge_logs_origin_hourly',
        'rollup_edge_logs_url_grams',
        'rollup_edge_logs_url_hourly',
        'rollup_function_edge_logs_daily_summary',
        'rollup_function_edge_logs_hourly',
        'rollup_function_edge_logs_summary',
      ]);
    });
  });
});
