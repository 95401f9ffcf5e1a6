import { existsSync, mkdirSync, readdirSync, truncateSync, writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { DuckDBConnection, DuckDBInstance, DuckDBPreparedStatement, DuckDBTypeId } from '@duckdb/node-api';
import { MemoryTables } from '../src/managed/memory-tables';
import { sourceRelation, TIMESTAMP_MACROS } from '../src/duckdb/source-relations';
import { withTypedPaths } from '../src/sources/typed-fields';
import { edgeLogs } from '../src/sources/edge-logs';
import { createEndpoints } from '../src/index';
import { census, CENSUS_NOW, censusEvents, idRange } from './support/census';
import { edgeEvent, tempDir, writeLines } from './support/log-files';
import { BUILT_IN_SOURCE_SET } from '../src/sources/built-ins';

const lines = (events: object[]) => Buffer.from(events.map((e) => `${JSON.stringify(e)}\n`).join(''));

/** In-memory tables attached to a DuckDB of their own, a connection to query them with, and their folder. */
async function withMemoryTables(...args: [test: Test] | [maxBytes: number, test: Test]): Promise<void> {
  const [maxBytes, test] = args.length === 1 ? [undefined, args[0]] : args;
  const instance = await DuckDBInstance.create(':memory:');
  const setup = await instance.connect();
  for (const macro of TIMESTAMP_MACROS) await setup.run(macro);
  const folder = tempDir('le-memory-tables-');
  const memory = new MemoryTables(BUILT_IN_SOURCE_SET, { folder: folder.path('tables'), maxBytes });
  memory.attach(instance);
  try {
    await test(memory, setup, folder.path('tables'));
  } finally {
    await memory.close();
    setup.closeSync();
    instance.closeSync();
    folder.cleanup();
  }
}
type Test = (memory: MemoryTables, setup: DuckDBConnection, tables: string) => Promise<void>;

describe('managed storage holds its uncompacted events in memory', () => {
  const tmp = tempDir('le-memory-');
  afterAll(() => tmp.cleanup());

  it('acknowledged events are read from memory, not from the segment files', async () => {
    const ep = await createEndpoints({ storage: { dataDir: tmp.path('data') }, now: () => new Date(CENSUS_NOW), cache: false });
    try {
      await ep.ingest('cloudflare.logs.prod', censusEvents('m', 20));
      // Emptying the segment on disk changes nothing for the queries of this process.
      truncateSync(tmp.path('data', 'edgeLogs', 'wal', '00000000000000000001.ndjson'), 0);
      expect(await census(ep)).toEqual({ total: 20, ids: idRange('m', 0, 20) });
      // inspectSources counts what queries read: the events held in memory too.
      expect((await ep.inspectSources()).find((s) => s.source === 'edgeLogs')).toMatchObject({ lines: 20, skippedLines: 0, parquetRows: 0 });
    } finally {
      await ep.close();
    }
  });

  it('a caller\'s statement kept for its text reads the rows memory holds when it runs (docs/performance.md, "Prepared statements")', async () => {
    const ep = await createEndpoints({ storage: { dataDir: tmp.path('kept') }, sandboxable: ['logs.all'], now: () => new Date(CENSUS_NOW), cache: false });
    const prepare = vi.spyOn(DuckDBConnection.prototype, 'prepare');
    try {
      const sql = 'select id as kept_id from edge_logs order by id';
      const ids = async () => (await ep.query('logs.all', { project: 'p0', project_tier: 'PAYG' }, { sql })).result.map((r) => (r as { kept_id: string }).kept_id);
      const prepares = () => prepare.mock.calls.filter(([text]) => text.includes('kept_id')).length;
      await ep.ingest('cloudflare.logs.prod', censusEvents('k', 20));
      expect(await ids()).toEqual(idRange('k', 0, 20).filter((id) => Number(id.slice(2)) % 10 === 0));
      // More events into the same segment: the same text, so the same statement, reading them too.
      await ep.ingest('cloudflare.logs.prod', censusEvents('k', 20, 20));
      expect(await ids()).toEqual(idRange('k', 0, 40).filter((id) => Number(id.slice(2)) % 10 === 0));
      expect(prepares()).toBe(1);
    } finally {
      prepare.mockRestore();
      await ep.close();
    }
  });

  it('a newest-first page reads the newest table without an upper bound, and every event with one', async () => {
    const ep = await createEndpoints({ storage: { dataDir: tmp.path('newest') }, now: () => new Date(CENSUS_NOW), cache: false });
    try {
      // More events of one project than the newest table keeps (one insert: only its 100 newest copied).
      const events = Array.from({ length: 4200 }, (_, i) => ({
        ...censusEvents('n', 1)[0],
        id: `n-${String(i).padStart(4, '0')}`,
        project: 'a',
        timestamp: new Date(Date.parse(CENSUS_NOW) - 1000 - i * 1000).toISOString(),
      }));
      await ep.ingest('cloudflare.logs.prod', events);
      const ids = (rows: Array<{ id?: string | null }>) => rows.map((r) => r.id);
      expect(ids(await ep.logsAll({ project: 'a', project_tier: 'PRO' }))).toEqual(events.slice(0, 100).map((e) => e.id));
      // A page further back holds events the newest table no longer has.
      const end = events[2000]!.timestamp as string;
      expect(ids(await ep.logsAll({ project: 'a', project_tier: 'PRO', iso_timestamp_end: end }))).toEqual(events.slice(2000, 2100).map((e) => e.id));
    } finally {
      await ep.close();
    }
  });

  it('a query racing the first insert after a start reads nothing from memory rather than a table not created yet', async () => {
    await withMemoryTables(async (memory, setup) => {
      // The insert has begun (its segment counts as held in memory) but not yet created the tables.
      const inserting = memory.insert('edgeLogs', 1, lines(censusEvents('a', 3)));
      const view = memory.view('edgeLogs');
      expect(view.mirrored(1)).toBe(true);
      const sql = view.relation(() => false)?.rows;
      if (sql !== undefined) await setup.run(`SELECT count(*) FROM (${sql})`);
      expect(sql).toBeUndefined();
      await inserting;
      expect(memory.view('edgeLogs').relation(() => false)?.rows).toMatch(/FROM le_memory\.edge_logs\b/);
    });
  });

  it('rows of a retired segment go only once every query that entered before has left', async () => {
    await withMemoryTables(async (memory, setup) => {
      await memory.insert('edgeLogs', 1, lines(censusEvents('a', 3)));
      await memory.insert('edgeLogs', 2, lines(censusEvents('b', 2)));
      const count = async () => {
        const sql = memory.view('edgeLogs').relation(() => false)!.rows;
        return Number((await setup.runAndReadAll(`SELECT count(*) AS n FROM (${sql})`)).getRowObjects()[0]!.n);
      };
      expect(await count()).toBe(5);
      const reading = memory.enter();
      memory.retire('edgeLogs', [1]);
      await memory.settled();
      // A query that entered before the retirement still finds the rows.
      expect(await count()).toBe(5);
      reading();
      await memory.settled();
      expect(await count()).toBe(2);
      // A view leaves out the segments its dataset state covers, and knows which segments it holds.
      const view = memory.view('edgeLogs');
      expect(view.mirrored(2)).toBe(true);
      expect(view.mirrored(1)).toBe(false);
      expect(view.relation(() => false)?.rows).toMatch(/WHERE le_seq IN \(2\)/);
      expect(view.relation((seq) => seq === 2)).toBeUndefined();
    });
  });

  it("gives back the memory of retired rows: DuckDB's own count falls to what the kept rows hold", async () => {
    await withMemoryTables(async (memory, setup) => {
      const held = async () => Number((await setup.runAndReadAll('SELECT sum(memory_usage_bytes) AS n FROM duckdb_memory()')).getRowObjects()[0]!.n);
      const before = await held();
      // Fewer bytes than the tables are checkpointed after as they fill (the checkpoint compresses
      // them: what they hold would then fall without a retirement).
      let bytes = 0;
      for (let seq = 1; seq <= 4; seq++) {
        const group = lines(censusEvents(`r${seq}`, 900));
        bytes += group.length;
        await memory.insert('edgeLogs', seq, group);
      }
      expect(bytes).toBeLessThan(2 * 2 ** 20);
      const full = await held();
      // Uncompressed, a row takes several times its NDJSON bytes (4.2 MB for these 1.2 MB).
      expect(full - before).toBeGreaterThan(2 * bytes);
      memory.retire('edgeLogs', [1, 2, 3, 4]);
      await memory.settled();
      // Deleted rows alone keep their row groups in DuckDB; the checkpoint frees them.
      expect(await held()).toBeLessThan(before + (full - before) / 10);
    });
  });

  it('a view reads only the segments it held when taken: a leftover loaded meanwhile is read from its file by that query, not twice', async () => {
    await withMemoryTables(async (memory, setup) => {
      await memory.insert('edgeLogs', 1, lines(censusEvents('a', 3)));
      const view = memory.view('edgeLogs');
      // A segment of the previous process goes in after the view was taken: that query reads it from its file.
      await memory.load('edgeLogs', 7, lines(censusEvents('b', 4)));
      expect(view.mirrored(7)).toBe(false);
      const count = async (sql: string) => Number((await setup.runAndReadAll(`SELECT count(*) AS n FROM (${sql})`)).getRowObjects()[0]!.n);
      expect(await count(view.relation(() => false)!.rows)).toBe(3);
      // The next query reads it from memory.
      const next = memory.view('edgeLogs');
      expect(next.mirrored(7)).toBe(true);
      expect(await count(next.relation(() => false)!.rows)).toBe(7);
    });
  });

  it("a view read without the arrays half reads a group inserted after it whole or not at all, never its rows without a '[' alone", async () => {
    await withMemoryTables(async (memory, setup) => {
      await memory.insert('edgeLogs', 1, lines(censusEvents('a', 3)), { arraysFree: true });
      const relation = memory.view('edgeLogs').relation(() => false)!;
      expect(relation.arraysFree).toBe(true);
      // A request acknowledged after the view was taken, into the same segment: one event of it
      // holds an array, so ingest gave no word for the group.
      const later = censusEvents('b', 3).map((e, i) => (i === 1 ? { ...e, metadata: { ...(e.metadata as object), tags: ['x'] } } : e));
      await memory.insert('edgeLogs', 1, lines(later));
      // What the text without the arrays half reads of the relation: its rows without a '['.
      const flat = async (sql: string) => (await setup.runAndReadAll(`SELECT id FROM (${sql}) WHERE NOT coalesce("arrays:metadata", false) ORDER BY id`)).getRows().map(([id]) => String(id));
      expect(await flat(relation.rows)).toEqual(idRange('a', 0, 3));
      expect(await flat(relation.newest!)).toEqual(idRange('a', 0, 3));
      // A view taken now runs the full text and reads every row.
      const next = memory.view('edgeLogs').relation(() => false)!;
      expect(next.arraysFree).toBeUndefined();
      expect((await setup.runAndReadAll(`SELECT id FROM (${next.rows}) ORDER BY id`)).getRows().map(([id]) => String(id))).toEqual([...idRange('a', 0, 3), ...idRange('b', 0, 3)]);
    });
  });

  it('a segment first written by an earlier process, or past the memory bound, is read from its file', async () => {
    await withMemoryTables(1000, async (memory) => {
      await memory.insert('edgeLogs', 5, lines(censusEvents('a', 1)));
      await memory.insert('edgeLogs', 4, lines(censusEvents('b', 1)));
      await memory.insert('edgeLogs', 6, lines(censusEvents('c', 30)));
      const view = memory.view('edgeLogs');
      expect([view.mirrored(4), view.mirrored(5), view.mirrored(6)]).toEqual([false, true, false]);
    });
  });
  it('groups that arrive while an insert runs go in together, one statement per segment', async () => {
    await withMemoryTables(async (memory, setup) => {
      await memory.insert('edgeLogs', 1, lines(censusEvents('w', 1)));
      // The rows' INSERTs, told from the held rollups' by the lines they bind.
      const binds = vi.spyOn(DuckDBPreparedStatement.prototype, 'bind');
      try {
        // 40 requests acknowledged at once, in two segments (a roll between them).
        await Promise.all(Array.from({ length: 40 }, (_, i) => memory.insert('edgeLogs', i < 20 ? 1 : 2, lines(censusEvents(`g${i}-`, 5)))));
        // The first group's insert starts alone; the other 39 wait for it and share one per segment.
        expect(binds.mock.calls.filter(([values]) => 'le_lines' in (values as object)).length).toBeLessThanOrEqual(3);
      } finally {
        binds.mockRestore();
      }
      const sql = memory.view('edgeLogs').relation(() => false)!.rows;
      const bySeq = (await setup.runAndReadAll(`SELECT le_seq, count(*) AS n FROM le_memory.edge_logs GROUP BY le_seq ORDER BY le_seq`)).getRowObjects();
      expect(bySeq.map((r) => [Number(r.le_seq), Number(r.n)])).toEqual([
        [1, 101],
        [2, 100],
      ]);
      expect(Number((await setup.runAndReadAll(`SELECT count(DISTINCT id) AS n FROM (${sql})`)).getRowObjects()[0]!.n)).toBe(201);
    });
  });

  it('the INSERT knows the type of each of its parameters when prepared, so DuckDB does not plan it again per group', async () => {
    await withMemoryTables(async (memory) => {
      // The types the statement was prepared with, read before the values are bound (after, DuckDB reports the bound ones).
      const prepared: Array<Record<string, string>> = [];
      const bind = DuckDBPreparedStatement.prototype.bind;
      const binds = vi.spyOn(DuckDBPreparedStatement.prototype, 'bind').mockImplementation(function (this: DuckDBPreparedStatement, ...args) {
        prepared.push(Object.fromEntries(Array.from({ length: this.parameterCount }, (_, i) => [this.parameterName(i + 1), DuckDBTypeId[this.parameterTypeId(i + 1)]])));
        return bind.apply(this, args);
      });
      try {
        await memory.insert('edgeLogs', 1, lines(censusEvents('t', 3)));
      } finally {
        binds.mockRestore();
      }
      // An untyped `$le_n` (INVALID until bound) made every execution bind and plan the whole
      // statement again: the INSERT took 15.5 ms of CPU per 1,000 gateway events in groups of
      // 1,000 and 98 in groups of 100; typed, 7.8 and 23.5 (docs/performance.md).
      // The same for the INSERT of each rollup held beside the rows (the gateway's three).
      const rollup = { le_seq: 'BIGINT', le_n: 'BIGINT', le_free: 'BOOLEAN' };
      expect(prepared).toEqual([{ le_lines: 'BLOB', le_seq: 'BIGINT', le_n: 'BIGINT', le_free: 'BOOLEAN' }, rollup, rollup, rollup]);
    });
  });

  it('a group that cannot be inserted sends its whole segment to the file, and the others of its batch keep theirs', async () => {
    await withMemoryTables(async (memory) => {
      await memory.insert('edgeLogs', 1, lines(censusEvents('w', 1)));
      const bad = Buffer.from('{"id": "x", "timestamp": \n');
      await Promise.all([memory.insert('edgeLogs', 1, lines(censusEvents('a', 2))), memory.insert('edgeLogs', 2, bad), memory.insert('edgeLogs', 3, lines(censusEvents('c', 2)))]);
      const view = memory.view('edgeLogs');
      expect([view.mirrored(1), view.mirrored(2), view.mirrored(3)]).toEqual([true, false, true]);
      // What went in of the broken segment is never read: a view names the segments it reads.
      expect(view.relation(() => false)?.rows).toMatch(/WHERE le_seq IN \(1, 3\)/);
    });
  });
  it('is bounded in NDJSON bytes: a group past the bound sends its whole segment to its file, even a segment mirrored so far', async () => {
    const group = (prefix: string) => lines(censusEvents(prefix, 4));
    const one = group('a0').length;
    await withMemoryTables(one * 2 + 10, async (memory, setup) => {
      await memory.insert('edgeLogs', 1, group('a0'));
      await memory.insert('edgeLogs', 1, group('a1'));
      expect(memory.heldBytes).toBe(one * 2);
      expect(memory.view('edgeLogs').mirrored(1)).toBe(true);
      // The third group of the same segment would pass the bound: the segment is read from its file from now on.
      await memory.insert('edgeLogs', 1, group('a2'));
      const view = memory.view('edgeLogs');
      expect(view.mirrored(1)).toBe(false);
      expect(view.relation(() => false)).toBeUndefined();
      // Nothing more went in; what it holds of segment 1 goes when a commit covers it.
      expect(memory.heldBytes).toBe(one * 2);
      expect(Number((await setup.runAndReadAll('SELECT count(*) AS n FROM le_memory.edge_logs')).getRowObjects()[0]!.n)).toBe(8);
      memory.retire('edgeLogs', [1]);
      await memory.settled();
      expect(memory.heldBytes).toBe(0);
      // With room again, the next segment is held.
      await memory.insert('edgeLogs', 2, group('b0'));
      expect(memory.view('edgeLogs').mirrored(2)).toBe(true);
    });
  });

  it('events go in as the bytes the WAL holds: text beyond ASCII reads back as sent', async () => {
    await withMemoryTables(async (memory, setup) => {
      const message = 'Zürich 東京 🚀 "quoted" \\ back';
      await memory.insert('edgeLogs', 1, lines([{ ...censusEvents('u', 1)[0], event_message: message }]));
      const sql = memory.view('edgeLogs').relation(() => false)!.rows;
      expect((await setup.runAndReadAll(`SELECT event_message FROM (${sql})`)).getRowObjects()).toEqual([{ event_message: message }]);
    });
  });

  it("keeps each segment's newest events per project apart, in both tables or neither, cut back to 100 per segment and project", async () => {
    await withMemoryTables(async (memory, setup) => {
      const one = (prefix: string, project: string, count: number, start: number) =>
        Array.from({ length: count }, (_, i) => ({
          ...censusEvents(prefix, 1)[0],
          id: `${prefix}-${i}`,
          project,
          timestamp: new Date(Date.parse(CENSUS_NOW) - (start + i) * 1000).toISOString(),
        }));
      // Segment 1: 5,000 events of project a (past the rows that trigger a cut), 30 of b; segment 2: 150 of a, newer.
      for (let i = 0; i < 50; i++) await memory.insert('edgeLogs', 1, lines(one(`a${i}`, 'a', 100, 1000 + i * 100)));
      await memory.insert('edgeLogs', 1, lines(one('b', 'b', 30, 0)));
      await memory.insert('edgeLogs', 2, lines(one('n', 'a', 150, 0)));
      // Segment 3: one insert of more rows than a cut waits for: ranked as it is copied.
      await memory.insert('edgeLogs', 3, lines(one('c', 'c', 4200, 0)));
      const newestOf = async (relation: string, project: string) =>
        (await setup.runAndReadAll(`SELECT id FROM (${relation}) WHERE project = '${project}' ORDER BY timestamp DESC, id LIMIT 100`)).getRowObjects().map((r) => r.id);
      const perSegment = async () =>
        (await setup.runAndReadAll(`SELECT le_seq, project, count(*) AS n FROM le_memory.newest_edge_logs GROUP BY ALL ORDER BY ALL`))
          .getRowObjects()
          .map((r) => [Number(r.le_seq), r.project, Number(r.n)]);
      const all = memory.view('edgeLogs').relation(() => false)!;
      expect(all.newest).toMatch(/FROM le_memory\.newest_edge_logs\b/);
      // A page read from the newest table is the page read from every event.
      for (const project of ['a', 'b', 'c']) expect(await newestOf(all.newest!, project)).toEqual(await newestOf(all.rows, project));
      // The 5,000 of segment 1 were cut back towards its 100 newest of a (the cut runs past 4,096 new rows).
      const [first, ...rest] = (await perSegment()) as Array<[number, string, number]>;
      const kept = first![2];
      expect(kept).toBeGreaterThanOrEqual(100);
      expect(kept).toBeLessThan(5000);
      // An insert of at most 4,096 rows is copied whole until a cut: segment 2's 150 of a stay 150.
      // One of more is cut as it is copied: segment 3's 4,200 of c hold their 100 newest at once.
      expect(rest).toEqual([
        [1, 'b', 30],
        [2, 'a', 150],
        [3, 'c', 100],
      ]);
      // Without segment 2 (the dataset holds it), the page is segment 1's: the newest table leaves it out too.
      const without2 = memory.view('edgeLogs').relation((seq) => seq === 2)!;
      expect(await newestOf(without2.newest!, 'a')).toEqual(await newestOf(without2.rows, 'a'));
      expect((await newestOf(without2.newest!, 'a'))[0]).toBe('a0-0');
      // Retired segments leave both tables.
      memory.retire('edgeLogs', [2, 3]);
      await memory.settled();
      expect(await perSegment()).toEqual([
        [1, 'a', kept],
        [1, 'b', 30],
      ]);
      // A group that fails goes into neither table.
      const held = async () => Number((await setup.runAndReadAll('SELECT count(*) AS n FROM le_memory.edge_logs WHERE le_seq = 1')).getRowObjects()[0]!.n);
      const before = await held();
      await memory.insert('edgeLogs', 1, Buffer.from('{"id": "x", "timestamp": \n'));
      expect(await perSegment()).toEqual([
        [1, 'a', kept],
        [1, 'b', 30],
      ]);
      expect(await held()).toBe(before);
    });
  });

  it('holds each event\'s typed columns as computed once at insert, and a read selects them as held instead of parsing metadata again (docs/performance.md, "Typed columns held in the memory tables")', async () => {
    const event = (id: string, path: string, status: unknown) => ({
      ...edgeEvent({ id, timestamp: CENSUS_NOW, path }),
      metadata: { request: { method: 'GET', path, headers: { cf_connecting_ip: '10.0.0.1' } }, response: { status_code: status } },
    });
    const events = [event('a', '/rest/v1/a', 500), event('b', '/rest/v1/b?x=[1]', '200'), { id: 'c', timestamp: CENSUS_NOW, project: 'p0', event_message: 'no metadata' }];
    const later = event('d', '/rest/v1/d', { code: 404 });
    await withMemoryTables(async (memory, setup) => {
      await memory.insert('edgeLogs', 1, lines(events));
      await memory.insert('edgeLogs', 1, lines([later]));
      const held = (await setup.runAndReadAll("SELECT column_name FROM duckdb_columns() WHERE database_name = 'le_memory' AND table_name = 'edge_logs'")).getRows().map(([name]) => String(name));
      expect(held).toEqual(expect.arrayContaining(['text:metadata.request.path', 'json:metadata.response.status_code', 'arrays:metadata']));
      const relation = memory.view('edgeLogs').relation(() => false)!;
      expect(relation.typedFields).toEqual(edgeLogs.typedFields);
      // The relation queries read is the memory's SELECT as it is: nothing parses metadata.
      const read = sourceRelation(edgeLogs, { ndjson: [], parquet: [], parquetTypes: new Map(), memory: relation });
      expect(read).toBe(`(${relation.rows})`);
      expect(read).not.toMatch(/json_extract|contains\(metadata/);
      const typed = '"text:metadata.request.path" AS path, "json:metadata.response.status_code" AS status, "arrays:metadata" AS arrays';
      // The same values as computed from the lines.
      const file = writeLines(tmp.path('typed', 'events.ndjson'), [...events, later]);
      const fromLines = sourceRelation(edgeLogs, { ndjson: [file], parquet: [], parquetTypes: new Map() });
      const rows = async (sql: string) => (await setup.runAndReadAll(`SELECT id, ${typed} FROM (${sql}) ORDER BY id`)).getRowObjectsJson();
      expect(await rows(read)).toEqual(await rows(fromLines));
      expect((await rows(read)).map((r) => [r.path, r.status, r.arrays])).toEqual([
        ['/rest/v1/a', '500', false],
        ['/rest/v1/b?x=[1]', '"200"', true],
        [null, null, null],
        ['/rest/v1/d', '{"code":404}', false],
      ]);
      // Read as held: a value forged in the table is what the relation gives.
      await setup.run(`UPDATE le_memory.edge_logs SET "text:metadata.request.path" = 'HELD' WHERE id = 'a'`);
      expect((await rows(read))[0]).toMatchObject({ id: 'a', path: 'HELD' });
      // A field discovered after the tables were made (the instance widens its source) is computed
      // from metadata; the declared ones are still read as held.
      const widened = withTypedPaths(edgeLogs, ['request.headers.cf_connecting_ip']);
      const wide = sourceRelation(widened, { ndjson: [], parquet: [], parquetTypes: new Map(), memory: relation });
      const discovered = (
        await setup.runAndReadAll(`SELECT id, "text:metadata.request.path" AS path, "text:metadata.request.headers.cf_connecting_ip" AS ip FROM (${wide}) ORDER BY id`)
      ).getRowObjectsJson();
      expect(discovered.map((r) => [r.id, r.path, r.ip])).toEqual([
        ['a', 'HELD', '10.0.0.1'],
        ['b', '/rest/v1/b?x=[1]', '10.0.0.1'],
        ['c', null, null],
        ['d', '/rest/v1/d', '10.0.0.1'],
      ]);
    });
  });

  it('a statement naming only columns memory holds reads them as held, computing no discovered field it drops (docs/performance.md, "The live path\'s statements cut to what they read")', async () => {
    const events = [
      { ...edgeEvent({ id: 'a', timestamp: CENSUS_NOW, path: '/rest/v1/a' }), metadata: { request: { path: '/rest/v1/a', headers: { cf_connecting_ip: '10.0.0.1' } } } },
      { ...edgeEvent({ id: 'b', timestamp: CENSUS_NOW, path: '/auth/v1/b' }), metadata: { request: { path: '/auth/v1/b', method: 'POST' } } },
    ];
    await withMemoryTables(async (memory, setup) => {
      await memory.insert('edgeLogs', 1, lines(events));
      const relation = memory.view('edgeLogs').relation(() => false)!;
      // The instance widened its source by a field compaction discovered: memory does not hold it.
      const widened = withTypedPaths(edgeLogs, ['request.headers.cf_connecting_ip']);
      const files = { ndjson: [], parquet: [], parquetTypes: new Map(), memory: relation };
      const held = new Set(['id', 'timestamp', 'project', 'metadata', 'request_path', 'text:metadata.request.method', 'arrays:metadata']);
      const cut = sourceRelation(widened, files, { columns: held });
      expect(cut).not.toMatch(/json_extract|contains\(metadata/);
      const names = [...held].map((n) => `"${n}"`).join(', ');
      const rows = async (sql: string) => (await setup.runAndReadAll(`SELECT ${names} FROM (${sql}) ORDER BY id`)).getRowObjectsJson();
      expect(await rows(cut)).toEqual(await rows(sourceRelation(widened, files)));
      expect((await rows(cut)).map((r) => [r.id, r.request_path, r['text:metadata.request.method']])).toEqual([
        ['a', '/rest/v1/a', null],
        ['b', '/auth/v1/b', 'POST'],
      ]);
      // One naming the discovered field computes it from metadata, as the whole relation does.
      const ip = sourceRelation(widened, files, { columns: new Set(['id', 'text:metadata.request.headers.cf_connecting_ip']) });
      expect(ip).toMatch(/json_extract/);
      const ips = (await setup.runAndReadAll(`SELECT id, "text:metadata.request.headers.cf_connecting_ip" AS ip FROM (${ip}) ORDER BY id`)).getRowObjectsJson();
      expect(ips).toEqual([
        { id: 'a', ip: '10.0.0.1' },
        { id: 'b', ip: null },
      ]);
    });
  });

  it('holds its tables in a database file of small blocks, rebuilt at every start (docs/performance.md, "The memory tables in a database file of small blocks")', async () => {
    const folder = tempDir('le-memory-file-');
    const instance = await DuckDBInstance.create(':memory:');
    const setup = await instance.connect();
    for (const macro of TIMESTAMP_MACROS) await setup.run(macro);
    // What a previous process left is not read (nor can it stop the tables from opening).
    mkdirSync(folder.path('tables'));
    writeFileSync(folder.path('tables', 'tables.duckdb'), 'left by a killed process');
    writeFileSync(folder.path('tables', 'tables.duckdb.wal'), 'and its log');
    const memory = new MemoryTables(BUILT_IN_SOURCE_SET, { folder: folder.path('tables') });
    memory.attach(instance);
    try {
      const held = async () => Number((await setup.runAndReadAll('SELECT sum(memory_usage_bytes) AS n FROM duckdb_memory()')).getRowObjects()[0]!.n);
      // Past a checkpoint a table starts a new row group, with a segment per column: a block each.
      let seq = 0;
      while (memory.heldBytes < 2.5 * 1024 * 1024) await memory.insert('edgeLogs', ++seq, lines(censusEvents(`f${seq}`, 500)));
      await memory.settled();
      await memory.insert('edgeLogs', ++seq, lines(censusEvents(`f${seq}`, 500)));
      expect(Number((await setup.runAndReadAll('SELECT count(*) AS n FROM (' + memory.view('edgeLogs').relation(() => false)!.rows + ')')).getRowObjects()[0]!.n)).toBe(seq * 500);
      // With blocks of 256 KiB (an in-memory database's) the tables held 24.8 MiB here; with 16 KiB, 3.7.
      expect(await held()).toBeLessThan(8 * 1024 * 1024);
      expect((await setup.runAndReadAll("SELECT block_size FROM pragma_database_size() WHERE database_name = 'le_memory'")).getRows()).toEqual([[16384n]]);
      expect(existsSync(folder.path('tables', 'tables.duckdb'))).toBe(true);
      // Closed, the file goes: it holds nothing the write-ahead log does not.
      await memory.close();
      expect(readdirSync(folder.path('tables'))).toEqual([]);
    } finally {
      await memory.close();
      setup.closeSync();
      instance.closeSync();
      folder.cleanup();
    }
  });

  it('writes no log of its database file: the write-ahead log is the durable copy (docs/performance.md, "The memory tables\' file without DuckDB\'s own log, again")', async () => {
    await withMemoryTables(async (memory, setup, tables) => {
      // Committed, and far below a checkpoint's worth of rows: with DuckDB's log they would be in it.
      await memory.insert('edgeLogs', 1, lines(censusEvents('nolog', 200)));
      await memory.settled();
      expect(Number((await setup.runAndReadAll('SELECT count(*) AS n FROM (' + memory.view('edgeLogs').relation(() => false)!.rows + ')')).getRowObjects()[0]!.n)).toBe(200);
      expect(readdirSync(tables)).toEqual(['tables.duckdb']);
    });
  });

  it('checkpoints its tables as they fill, so the rows held are written compressed (docs/performance.md, "The memory tables checkpointed as they fill")', async () => {
    await withMemoryTables(async (memory, setup) => {
      // Whether the gateway table's id segments are written out (persistent: compressed as DuckDB
      // chooses, held in blocks DuckDB may evict) or held as inserted, uncompressed, in memory.
      // DuckDB's choice of compression is its own (FSST or none for these ids, from run to run).
      const storage = async () =>
        (
          await setup.runAndReadAll(
            "SELECT DISTINCT CASE WHEN persistent THEN 'written' ELSE compression END FROM pragma_storage_info('le_memory.edge_logs') WHERE column_name = 'id' AND segment_type = 'VARCHAR'",
          )
        )
          .getRows()
          .map((r) => String(r[0]));
      // A first megabyte, in groups of 500 events: held as inserted.
      let seq = 0;
      const group = () => lines(censusEvents(`c${seq}`, 500));
      while (memory.heldBytes < 1024 * 1024) await memory.insert('edgeLogs', ++seq, group());
      expect(await storage()).toEqual(['Uncompressed']);
      // Past 2 MiB inserted, the tables are checkpointed: the rows held so far are compressed. The
      // checkpoint is held back here, and the insert that passed 2 MiB is answered all the same: it
      // is queued behind the batch, never awaited by a request.
      let release = () => undefined as void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let saw = () => undefined as void;
      const seen = new Promise<void>((resolve) => (saw = resolve));
      const run = DuckDBConnection.prototype.run;
      const spy = vi.spyOn(DuckDBConnection.prototype, 'run').mockImplementation(async function (this: DuckDBConnection, sql, ...rest) {
        if (sql === 'CHECKPOINT le_memory') {
          saw();
          await held;
        }
        return run.call(this, sql, ...rest);
      });
      try {
        // Each insert up to 2 MiB is answered, the last one too while the checkpoint it queued is
        // held (its answer is microtasks away: one turn of the event loop after the checkpoint
        // starts is enough for it).
        while (memory.heldBytes < 2 * 1024 * 1024) {
          let answered = false;
          const inserting = memory.insert('edgeLogs', ++seq, group()).then(() => (answered = true));
          await Promise.race([inserting, seen.then(() => new Promise((resolve) => setImmediate(resolve)))]);
          expect(answered).toBe(true);
        }
        // The checkpoint it queued has started (it is microtasks away too).
        await Promise.race([seen, new Promise((resolve) => setImmediate(resolve))]);
        expect(spy.mock.calls.filter(([sql]) => sql === 'CHECKPOINT le_memory')).toHaveLength(1);
        expect(memory.heldBytes).toBeGreaterThanOrEqual(2 * 1024 * 1024);
        expect(await storage()).toEqual(['Uncompressed']);
      } finally {
        release();
        await memory.settled();
        spy.mockRestore();
      }
      expect(await storage()).toEqual(['written']);
      // And every row is still read.
      expect(Number((await setup.runAndReadAll('SELECT count(DISTINCT id) AS n FROM le_memory.edge_logs')).getRowObjects()[0]!.n)).toBe(seq * 500);
    });
  });

  it('the function log, which has no heads, keeps no newest table', async () => {
    await withMemoryTables(async (memory) => {
      await memory.insert('functionEdgeLogs', 1, lines([{ id: 'f', timestamp: CENSUS_NOW, metadata: { project_ref: 'p' } }]));
      expect(memory.view('functionEdgeLogs').relation(() => false)).toEqual({
        rows: expect.stringMatching(/le_memory\.function_edge_logs\b/),
        typedFields: ['response.status_code'],
        oldest: expect.any(BigInt),
        rollups: {
          function_edge_logs_hourly: expect.stringMatching(/le_memory\.rollup_function_edge_logs_hourly\b/),
          function_edge_logs_summary: expect.stringMatching(/le_memory\.rollup_function_edge_logs_summary\b/),
          function_edge_logs_daily_summary: expect.stringMatching(/le_memory\.rollup_function_edge_logs_daily_summary\b/),
        },
      });
    });
  });
});
