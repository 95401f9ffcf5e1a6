import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { join } from 'node:path';
import { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { arraysFreeFiles } from '../src/duckdb/arrays-free-files';
import { compactLogs } from '../src/compaction/compact';
import { readDatasetStateStable } from '../src/dataset/dataset-log';
import { sourceRelation, TIMESTAMP_MACROS } from '../src/duckdb/source-relations';
import { createEndpoints, defineSource, InvalidOptionError, SUPABASE_SOURCES, supabasePreset, type Endpoints } from '../src/index';
import { translateBigQuery } from '../src/bigquery/translate-bigquery';
import { bigQuerySchemaOf } from '../src/bigquery/schema-of-sources';
import { authLogs, postgresLogs } from '../src/sources/supabase/supabase-sources';
import { createHandler } from '../src/http';
import { toNodeListener } from '../src/node';
import { waitUntil } from './support/hang-guard';
import { listen } from './support/http';
import { edgeEvent, endpointsAt, tempDir, writeLines } from './support/log-files';
import { main } from '../src/cli/main';
import { memoryIO } from './support/cli';
import { edgeLogs } from '../src/sources/edge-logs';
import { chartQuery, defaultQuery } from './support/supabase/studio-sql';
import { studioRequests } from './support/supabase/studio-requests';
import { replay, shipLikeVector } from './support/supabase/studio-replay';
import { typedFileCounts } from './support/supabase/storage-layouts';
import { generateVectorEvents } from './support/supabase/vector-events';
import { microsOf } from './support/supabase/instants';

/**
 * Typed columns (docs/durability.md, "Typed columns"): a source's typed fields kept as columns of
 * their own beside `metadata`. A column is read only from the files whose commit records it; old
 * files and new ones together answer as the events do; a field whose type varies from event to
 * event answers the same from the columns, from `metadata` alone and from memory.
 */

const tmp = tempDir('le-typed-columns-');
afterAll(() => tmp.cleanup());

describe('the relation of a source with typed fields', () => {
  it('reads a typed column from the files whose commit records it, and computes it from metadata for the others, field by field', async () => {
    // Two files whose stored column says STORED while their metadata says LOG: only the file
    // recorded as having the column may give STORED.
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    try {
      for (const macro of TIMESTAMP_MACROS) await connection.run(macro);
      const typed = sourceRelation(postgresLogs, { ndjson: [], parquet: [], parquetTypes: new Map() });
      for (const name of ['a', 'b']) {
        const file = tmp.path('forged', `${name}.parquet`);
        await connection.run(`CREATE OR REPLACE TABLE rows AS SELECT * FROM (${typed}) LIMIT 0`);
        await connection.run(
          `INSERT INTO rows (id, timestamp, metadata, project, "text:metadata.parsed.error_severity", "arrays:metadata") VALUES ('${name}', TIMESTAMP '2026-11-21 10:00:00', '{"parsed":{"error_severity":"LOG"}}', 'default', 'STORED', false)`,
        );
        await import('node:fs').then((fs) => fs.mkdirSync(tmp.path('forged'), { recursive: true }));
        await connection.run(`COPY rows TO '${file}' (FORMAT parquet)`);
      }
      const files = [tmp.path('forged', 'a.parquet'), tmp.path('forged', 'b.parquet')];
      const types = new Map((await connection.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${files[0]}')`)).getRowObjects().map((r) => [String(r.column_name), String(r.column_type)]));
      const relation = sourceRelation(postgresLogs, { ndjson: [], parquet: files, parquetTypes: types, typedFields: new Map([[files[0]!, [...postgresLogs.typedFields]]]) });
      const rows = (await connection.runAndReadAll(`SELECT id, "text:metadata.parsed.error_severity" AS severity FROM (${relation}) ORDER BY id`)).getRowObjects();
      expect(rows).toEqual([
        { id: 'a', severity: 'STORED' },
        { id: 'b', severity: 'LOG' },
      ]);
      // A record of some of the source's fields: those are read as stored, the others computed
      // (the forged file holds a user_name column of NULLs, its metadata none either way).
      const some = sourceRelation(postgresLogs, { ndjson: [], parquet: files, parquetTypes: types, typedFields: new Map([[files[0]!, ['parsed.error_severity']]]) });
      expect((await connection.runAndReadAll(`SELECT id, "text:metadata.parsed.error_severity" AS s, "arrays:metadata" AS a FROM (${some}) ORDER BY id`)).getRowObjects()).toEqual([
        { id: 'a', s: 'STORED', a: false },
        { id: 'b', s: 'LOG', a: false },
      ]);
      // A record of no field the source has now reads none as stored: all computed.
      const other = sourceRelation(postgresLogs, { ndjson: [], parquet: files, parquetTypes: types, typedFields: new Map([[files[0]!, ['parsed.gone']]]) });
      expect((await connection.runAndReadAll(`SELECT DISTINCT "text:metadata.parsed.error_severity" AS s FROM (${other})`)).getRowObjects()).toEqual([{ s: 'LOG' }]);
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });

  it("is read by the translation of Studio's chart over Postgres's log in one scan, without parsing metadata where it holds no '['", async () => {
    const now = microsOf(new Date('2026-11-21T12:00:00Z'));
    const sql = chartQuery('postgres_logs', { start: '2026-11-20T12:00:00Z', end: '' }, {}, now);
    const { sql: duckdb } = await translateBigQuery(sql, bigQuerySchemaOf(SUPABASE_SOURCES), 'duckdb');
    expect(duckdb.match(/FROM "postgres_logs" AS "t"/g)).toHaveLength(1);
    expect(duckdb).not.toContain('UNION ALL');
    // The root alias's values only where the flag holds; elsewhere it, and every alias under it, is NULL.
    expect(duckdb).toContain(`unnest(CASE WHEN coalesce("arrays:metadata", false) THEN CASE WHEN contains("metadata", '[')`);
    expect(duckdb).toContain(`ELSE [CAST(NULL AS JSON)] END) AS "__bq_a1" FROM "postgres_logs" AS "t"`);
    expect(duckdb).toContain('"t"."text:metadata.parsed.error_severity"');
    expect(duckdb).not.toMatch(/json_extract_string\("t"\."metadata"/);
  });

  it('reads a relation of several parts once for Studio\'s chart: read twice, DuckDB materialized it whole in memory (docs/performance.md, "Studio\'s chart by minute read once")', async () => {
    // A relation of an NDJSON part and a Parquet part, as the engine reads uncompacted and compacted
    // events together: DuckDB cannot copy such a relation into each of two reads, so a query that
    // named it twice got the whole relation, every column of every row, materialized first.
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    try {
      for (const macro of TIMESTAMP_MACROS) await connection.run(macro);
      const event = (i: number, metadata: unknown) => ({ id: `p${i}`, timestamp: `2026-11-21T10:0${i}:00.000000Z`, event_message: 'select 1', metadata, project: 'default' });
      const ndjson = writeLines(tmp.path('two-parts', 'wal.ndjson'), [
        event(1, { parsed: { error_severity: 'ERROR' } }),
        event(2, [{ parsed: [{ error_severity: 'WARNING' }] }]),
        event(3, { parsed: { error_severity: 'LOG' } }),
      ]);
      const parquet = tmp.path('two-parts', 'compacted.parquet');
      const compacted = writeLines(tmp.path('two-parts', 'compacted.ndjson'), [event(4, { parsed: { error_severity: 'ERROR' } }), event(5, { parsed: { error_severity: 'LOG' } })]);
      await connection.run(`COPY (SELECT * FROM (${sourceRelation(postgresLogs, { ndjson: [compacted], parquet: [], parquetTypes: new Map() })})) TO '${parquet}' (FORMAT parquet)`);
      const types = new Map((await connection.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${parquet}')`)).getRowObjects().map((r) => [String(r.column_name), String(r.column_type)]));
      const relation = sourceRelation(postgresLogs, { ndjson: [ndjson], parquet: [parquet], parquetTypes: types, typedFields: new Map([[parquet, [...postgresLogs.typedFields]]]) });
      const now = microsOf(new Date('2026-11-21T12:00:00Z'));
      const { sql: chart } = await translateBigQuery(chartQuery('postgres_logs', { start: '2026-11-20T12:00:00Z', end: '' }, {}, now), bigQuerySchemaOf(SUPABASE_SOURCES), 'duckdb');
      const statement = `WITH postgres_logs AS (\n${relation}\n)\n${chart}`;
      const plan = (await connection.runAndReadAll(`EXPLAIN ${statement}`))
        .getRows()
        .map((row) => String(row[1]))
        .join('\n');
      expect(plan).toContain('READ_JSON_OBJECTS');
      expect(plan).not.toContain('CTE_SCAN');
      const counts = (await connection.runAndReadAll(statement)).getRowObjects().map((r) => [Number(r.ok_count), Number(r.error_count), Number(r.warning_count)]);
      // One hour: two LOGs, two ERRORs (one of each part), the WARNING inside arrays.
      expect(counts).toEqual([[2, 2, 1]]);
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });

  it('is not split after a cut of the rows before their unnests (each half would cut again, and tied rows could land in both)', async () => {
    // The gateway's list without filters: the newest 100 events are cut first, then unnested.
    const { sql: duckdb } = await translateBigQuery(defaultQuery('edge_logs', {}), bigQuerySchemaOf(SUPABASE_SOURCES), 'duckdb');
    expect(duckdb).toContain('FROM (SELECT * FROM "edge_logs" AS "edge_logs" ORDER BY "edge_logs"."timestamp" DESC NULLS LAST LIMIT 100)');
    expect(duckdb).not.toContain('UNION ALL');
  });
});

describe('files whose arrays flag is never true (docs/performance.md, "The arrays flag from the footers")', () => {
  it('are told by every row group of their footer: a maximum of false, or NULL on every row; not a file with one true row, nor one without the column', async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    try {
      await import('node:fs').then((fs) => fs.mkdirSync(tmp.path('flags'), { recursive: true }));
      const write = async (name: string, select: string) => {
        // Row groups of 100 rows: the one true row is in the third group.
        await connection.run(`COPY (${select} FROM range(300) AS r(i)) TO '${tmp.path('flags', `${name}.parquet`)}' (FORMAT parquet, ROW_GROUP_SIZE 100)`);
        return tmp.path('flags', `${name}.parquet`);
      };
      const falses = await write('falses', `SELECT i, false AS "arrays:metadata"`);
      const oneTrue = await write('one-true', `SELECT i, i = 250 AS "arrays:metadata"`);
      const nulls = await write('nulls', `SELECT i, CAST(NULL AS BOOLEAN) AS "arrays:metadata"`);
      const none = await write('none', `SELECT i`);
      expect(await arraysFreeFiles(connection, [falses, oneTrue, nulls, none])).toEqual(new Set([falses, nulls]));
      expect(await arraysFreeFiles(connection, [])).toEqual(new Set());
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });

  it("read the flag as false, so Studio's unnests plan no second read of them, and answer as the events do", async () => {
    // Two days of gateway events: one day's `request` is an array (Studio's unnest gives a row per
    // element), the other day's an object (no '[' in any event's metadata).
    const dir = tmp.path('arrays-free');
    const events = [
      ...Array.from({ length: 6 }, (_, i) => edgeEvent({ timestamp: `2026-11-20T10:0${i}:00Z`, project: 'p', path: `/rest/v1/t${i % 2}` })),
      ...Array.from({ length: 4 }, (_, i) =>
        edgeEvent({ timestamp: `2026-11-21T10:0${i}:00Z`, project: 'p', extra: { request: [{ path: `/a${i % 2}` }, { path: '/b' }], response: { status_code: 500 + i } } }),
      ),
    ];
    writeLines(join(dir, 'all.ndjson'), events);
    await compactLogs({ source: 'edgeLogs', inputs: join(dir, 'all.ndjson'), outDir: join(dir, 'dataset') });
    const options = { sandboxable: ['logs.all'], tierWindow: false, sqlDialect: 'bigquery' as const };
    const { ep: compacted } = await endpointsAt({ edgeLogs: join(dir, 'dataset') }, '2026-11-21T12:00:00Z', options);
    const { ep: ndjson } = await endpointsAt({ edgeLogs: join(dir, 'all.ndjson') }, '2026-11-21T12:00:00Z', options);
    const prepared: string[] = [];
    const original = DuckDBConnection.prototype.prepare;
    const spy = vi.spyOn(DuckDBConnection.prototype, 'prepare').mockImplementation(function (this: DuckDBConnection, text: string) {
      prepared.push(text);
      return original.call(this, text);
    });
    try {
      const topPaths = 'select r.path as path, count(timestamp) as c from edge_logs cross join unnest(metadata) as m cross join unnest(m.request) as r group by path order by c desc, path limit 100';
      const chart = chartQuery('edge_logs', { start: '2026-11-14T12:00:00Z', end: '' }, {}, microsOf(new Date('2026-11-21T12:00:00Z')));
      // The chart reads the day without arrays from its hour counts instead (docs/definitions.md,
      // "Typed fields"): a day with a row holding a '[' is read from its rows.
      for (const [sql, hourCounts] of [
        [topPaths, false],
        [chart, true],
      ] as const) {
        prepared.length = 0;
        const answer = (await compacted.query('logs.all', { project: 'p' }, { sql })).result;
        expect(answer, sql).toEqual((await ndjson.query('logs.all', { project: 'p' }, { sql })).result);
        const text = prepared.find((t) => t.includes('read_parquet'))!;
        // The day without arrays reads the constant; the day with them reads its column.
        const reads = text
          .split('read_parquet(')
          .slice(1)
          .map((r) => r.slice(0, r.indexOf(')')));
        const dataOf = (day: string) => reads.filter((r) => r.includes(`date=${day}/`) && !r.includes('/_rollups/'));
        expect(dataOf('2026-11-20')).toHaveLength(hourCounts ? 0 : 1);
        expect(reads.filter((r) => r.includes('/_rollups/edge_logs_typed_hourly/date=2026-11-20/'))).toHaveLength(hourCounts ? 1 : 0);
        expect(dataOf('2026-11-21')).toHaveLength(1);
        // The SELECT list that reads a file's rows.
        const selectOf = (read: string) => text.slice(0, text.indexOf(read)).split('SELECT ').at(-1)!;
        if (!hourCounts) expect(selectOf(dataOf('2026-11-20')[0]!)).toContain('false AS "arrays:metadata"');
        const day21 = selectOf(dataOf('2026-11-21')[0]!);
        expect(day21).not.toContain('false AS "arrays:metadata"');
        expect(day21).toContain('"arrays:metadata"');
      }
      const paths = (await compacted.query('logs.all', { project: 'p' }, { sql: topPaths })).result;
      expect(paths).toEqual(
        [
          { path: '/b', c: 4 },
          { path: '/a0', c: 2 },
          { path: '/a1', c: 2 },
          { path: '/rest/v1/t0', c: 3 },
          { path: '/rest/v1/t1', c: 3 },
        ].sort((x, y) => y.c - x.c || x.path.localeCompare(y.path)),
      );
    } finally {
      spy.mockRestore();
      await compacted.close();
      await ndjson.close();
    }
  });
});

describe('declaring typed fields', () => {
  it('refuses a path that is not dotted names and a path named twice', () => {
    const base = { name: 'myLogs', relation: 'my_logs', columns: { project: 'text' as const }, projectColumn: 'project' };
    expect(() => defineSource({ ...base, typedFields: ['request..path'] })).toThrow(InvalidOptionError);
    expect(() => defineSource({ ...base, typedFields: ['a.b', 'a.b'] })).toThrow(/twice/);
    expect(defineSource({ ...base, typedFields: ['request.path'] }).typedFields).toEqual(['request.path']);
  });

  it('refuses typed pairs of undeclared, repeated or equal fields, and a pair named twice', () => {
    const base = { name: 'myLogs', relation: 'my_logs', columns: { project: 'text' as const }, projectColumn: 'project', typedFields: ['a.b', 'c.d'] };
    expect(() => defineSource({ ...base, typedPairs: [['a.b', 'e.f']] })).toThrow(/pairs of two different typedFields/);
    expect(() => defineSource({ ...base, typedPairs: [['a.b', 'a.b']] })).toThrow(/pairs of two different typedFields/);
    expect(() =>
      defineSource({
        ...base,
        typedPairs: [
          ['a.b', 'c.d'],
          ['a.b', 'c.d'],
        ],
      }),
    ).toThrow(/pair twice/);
    const source = defineSource({ ...base, typedPairs: [['a.b', 'c.d']] });
    expect(source.typedPairs).toEqual([['a.b', 'c.d']]);
    // The pairs' counts are a stored rollup of their own beside the hour counts.
    expect(Object.keys(source.rollups)).toEqual(expect.arrayContaining(['my_logs_typed_hourly', 'my_logs_typed_pairs']));
  });
});

describe('the command line without typed columns (--no-typed-columns)', () => {
  it('compact writes the JSON-only layout with it and the typed columns without it', async () => {
    const input = writeLines(
      tmp.path('cli', 'edge.ndjson'),
      Array.from({ length: 20 }, (_, i) => edgeEvent({ id: `e${i}`, timestamp: '2026-11-21T11:00:00Z' })),
    );
    for (const [flags, recorded] of [
      [['--no-typed-columns'], []],
      [[], [...edgeLogs.typedFields]],
    ] as const) {
      const out = tmp.path('cli', flags.length ? 'plain' : 'typed');
      const { io, out: printed } = memoryIO();
      expect(await main(['compact', '--source', 'edge', '--input', input, '--out', out, ...flags], io, 'test')).toBe(0);
      expect(printed.stdout).toContain('20 events');
      expect([...readDatasetStateStable(out).files.values()].map((f) => f.typedFields ?? [])).toEqual([recorded]);
    }
  });

  it('is refused where nothing is compacted, and listed in the help of the commands that compact', async () => {
    const input = writeLines(tmp.path('cli', 'one.ndjson'), [edgeEvent({ timestamp: '2026-11-21T11:00:00Z' })]);
    for (const [argv, message] of [
      [['serve', '--edge-logs', input, '--api-key', 'k', '--no-typed-columns'], /--no-typed-columns is for the files compacted from ingested events: add --data-dir/],
      [['ingest', input, '--source', 'edge', '--url', 'http://127.0.0.1:9', '--api-key', 'k', '--no-typed-columns'], /--no-typed-columns is for --data-dir/],
      // ClickHouse's server ships segments instead of compacting them.
      [['clickhouse', 'serve', '--url', 'http://127.0.0.1:9', '--api-key', 'k', '--no-typed-columns'], /Unknown option '--no-typed-columns'/],
    ] as const) {
      const { io, out } = memoryIO();
      expect(await main([...argv], io, 'test'), argv.join(' ')).toBe(2);
      expect(out.stderr).toMatch(message);
    }
    for (const command of ['serve', 'ingest', 'compact']) {
      const { io, out } = memoryIO();
      expect(await main([command, '--help'], io, 'test')).toBe(0);
      expect(out.stdout).toMatch(/\n {2}--no-typed-columns +Compact into Parquet with metadata alone/);
    }
  });
});

describe('JSON_VALUE over metadata as text (docs/performance.md, "Typed columns")', () => {
  // metadata as an object, as a JSON string whose text is itself JSON, as a string that is not
  // JSON, and missing: only the second tells the text's parse from the typed column (a path inside
  // a string is NULL there), and it holds no '[', so no stored flag tells it apart.
  const metadatas: unknown[] = [{ status: 500 }, JSON.stringify({ status: 503 }), 'not json {', undefined];
  const events = metadatas.map((metadata, i) => ({
    id: `t${i}`,
    timestamp: `2026-11-21T11:0${i}:00Z`,
    event_message: 'x',
    project: 'default',
    ...(metadata === undefined ? {} : { metadata }),
  }));
  const queries = [
    "select id, JSON_VALUE(CAST(metadata AS STRING), '$.status') as v from auth_logs order by id",
    "select id, JSON_EXTRACT_SCALAR(CAST(metadata AS STRING), '$.status') as v from auth_logs order by id",
    // The declared path read as a field: the typed column where the file has it.
    "select id, JSON_VALUE(m, '$.status') as v from auth_logs left join unnest(metadata) as m on true order by id",
  ];

  it('parses the text on both layouts, so a JSON string holding JSON answers as in BigQuery (the typed column would say NULL)', async () => {
    writeLines(tmp.path('as-text', 'auth.ndjson'), events);
    const answers: Record<string, unknown> = {};
    for (const layout of [
      { name: 'typed columns', typedColumns: true },
      { name: 'JSON only', typedColumns: false },
      { name: 'NDJSON', typedColumns: undefined },
    ]) {
      const outDir = tmp.path('as-text', layout.name);
      if (layout.typedColumns !== undefined)
        await compactLogs({ source: 'authLogs', sourceDefinitions: SUPABASE_SOURCES, inputs: tmp.path('as-text', 'auth.ndjson'), outDir, typedColumns: layout.typedColumns });
      const ep = await createEndpoints({ ...supabasePreset, sources: { authLogs: layout.typedColumns === undefined ? tmp.path('as-text', 'auth.ndjson') : outDir }, cache: false });
      try {
        const params = { project: 'default', iso_timestamp_start: '2026-11-21T00:00:00Z', iso_timestamp_end: '2026-11-21T12:00:00Z' };
        answers[layout.name] = await Promise.all(queries.map(async (sql) => (await ep.query('logs.all', params, { sql })).result.map((r) => r.v)));
      } finally {
        await ep.close();
      }
    }
    expect(answers['typed columns']).toEqual([
      ['500', '503', null, null],
      ['500', '503', null, null],
      ['500', null, null, null],
    ]);
    expect(answers['JSON only']).toEqual(answers['typed columns']);
    expect(answers.NDJSON).toEqual(answers['typed columns']);
  });
});

describe('files compacted before typed columns and after, together', () => {
  const NOW = new Date('2026-11-21T12:00:00Z');
  const PUBLIC = 'logflare-public-access-token';
  const PRIVATE = 'logflare-private-access-token';
  const { events } = generateVectorEvents({ now: NOW });
  const dataDir = tmp.path('mixed');
  let ep: Endpoints;
  let server: Awaited<ReturnType<typeof listen>>;
  let files = { typed: 0, plain: 0 };
  const half = (all: readonly unknown[]) => Math.ceil(all.length / 2);
  const compacted = (e: Endpoints) => () => {
    const stats = e.stats().storage!;
    return stats.compactedSegments > 0 && Object.values(stats.sources).every((s) => s.lagBytes === 0);
  };

  beforeAll(async () => {
    // The first half compacted by an instance that writes metadata alone (as before typed columns)...
    const options = { ...supabasePreset, now: () => NOW, cache: false as const };
    const before = await createEndpoints({ ...options, storage: { dataDir, maxSegmentBytes: 32 * 1024, typedColumns: false } });
    const first = await listen(toNodeListener(createHandler(before, { apiKeys: [PRIVATE], ingestKeys: [PUBLIC] })));
    await shipLikeVector(first.url, PUBLIC, events, (all) => all.slice(0, half(all)));
    await waitUntil(compacted(before));
    await first.close();
    await before.close();
    // ...the second half by one that writes typed columns, on the same data dir.
    ep = await createEndpoints({ ...options, storage: { dataDir, maxSegmentBytes: 32 * 1024 } });
    server = await listen(toNodeListener(createHandler(ep, { apiKeys: [PRIVATE], ingestKeys: [PUBLIC] })));
    await shipLikeVector(server.url, PUBLIC, events, (all) => all.slice(half(all)));
    await waitUntil(compacted(ep));
    files = typedFileCounts(dataDir, SUPABASE_SOURCES);
  });

  afterAll(async () => {
    await server?.close();
    await ep?.close();
  });

  it('holds files of both layouts', () => {
    expect(files.plain).toBeGreaterThan(0);
    expect(files.typed).toBeGreaterThan(0);
  });

  it("answers every request of Studio's as the events do", async () => {
    const problems: string[] = [];
    for (const request of studioRequests(NOW)) {
      const { problem } = await replay(server.url, PRIVATE, request, events);
      if (problem) problems.push(problem);
    }
    expect(problems).toEqual([]);
  });
});

describe('a typed field whose type varies from event to event', () => {
  // GoTrue's `status` as numbers, numeric and other texts, null, an object, an array (its event's
  // metadata holds a '['), a boolean, a decimal, or missing.
  const statuses: unknown[] = [500, 200, '503', 'abc', null, { code: 500 }, [500, 404], true, 500.5, 1e21, 'é"\\', undefined];
  const events = statuses.flatMap((status, i) =>
    [0, 1].map((copy) => ({
      id: `e${i}-${copy}`,
      timestamp: `2026-11-21T11:${String(10 + i).padStart(2, '0')}:0${copy}Z`,
      event_message: `status ${JSON.stringify(status)}`,
      project: 'default',
      metadata: { level: i % 2 ? 'error' : 'info', path: `/p${i}`, ...(status === undefined ? {} : { status }) },
    })),
  );
  const queries = [
    'select metadata.status as status, count(*) as n from auth_logs cross join unnest(metadata) as metadata group by status order by n, status',
    'select id, metadata.status from auth_logs cross join unnest(metadata) as metadata order by id',
    'select id from auth_logs cross join unnest(metadata) as metadata where SAFE_CAST(metadata.status AS INT64) >= 500 order by id',
    "select id from auth_logs cross join unnest(metadata) as metadata where IFNULL(metadata.level, '') IN ('error', 'fatal') OR IFNULL(SAFE_CAST(metadata.status AS INT64), 0) >= 500 order by id",
    "select id from auth_logs cross join unnest(metadata) as metadata where metadata.status = '503' or metadata.status = 'abc' order by id",
    'select count(metadata.status) as n, countif(metadata.status is null) as missing from auth_logs cross join unnest(metadata) as metadata',
    'select id, s from auth_logs cross join unnest(metadata) as m cross join unnest(m.status) as s order by id, s',
  ];
  const answers: Record<string, unknown[]> = {};

  beforeAll(async () => {
    writeLines(tmp.path('varied', 'auth.ndjson'), events);
    for (const layout of [
      { name: 'typed columns', typedColumns: true },
      { name: 'JSON only', typedColumns: false },
    ]) {
      const outDir = tmp.path('varied', layout.name);
      await compactLogs({ source: 'authLogs', sourceDefinitions: SUPABASE_SOURCES, inputs: tmp.path('varied', 'auth.ndjson'), outDir, typedColumns: layout.typedColumns });
      const recorded = [...readDatasetStateStable(outDir).files.values()].map((f) => f.typedFields ?? []);
      expect(recorded).toEqual([layout.typedColumns ? [...authLogs.typedFields] : []]);
      answers[layout.name] = await answersOver({ authLogs: outDir });
    }
    answers.NDJSON = await answersOver({ authLogs: tmp.path('varied', 'auth.ndjson') });
  });

  async function answersOver(sources: Record<string, string>): Promise<unknown[]> {
    const ep = await createEndpoints({ ...supabasePreset, sources, now: () => new Date('2026-11-21T12:00:00Z'), cache: false });
    try {
      const out: unknown[] = [];
      for (const sql of queries) {
        out.push((await ep.query('logs.all', { project: 'default', iso_timestamp_start: '2026-11-21T00:00:00Z', iso_timestamp_end: '2026-11-21T12:00:00Z' }, { sql })).result);
      }
      return out;
    } finally {
      await ep.close();
    }
  }

  it('answers the same from the typed columns, from metadata alone and from NDJSON', () => {
    expect(answers['typed columns']).toEqual(answers.NDJSON);
    expect(answers['JSON only']).toEqual(answers.NDJSON);
  });

  it("holds in each text column what json_extract_string gives on metadata, and in each JSON column what json_extract gives (the texts are read from the values' one parse)", async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    try {
      for (const macro of TIMESTAMP_MACROS) await connection.run(macro);
      const relation = sourceRelation(authLogs, { ndjson: [tmp.path('varied', 'auth.ndjson')], parquet: [], parquetTypes: new Map() });
      const rows = (
        await connection.runAndReadAll(
          `SELECT id, "text:metadata.status" AS text, json_extract_string(metadata, '$."status"') AS text_of_metadata, CAST("json:metadata.status" AS VARCHAR) AS json, CAST(json_extract(metadata, '$."status"') AS VARCHAR) AS json_of_metadata FROM (${relation}) ORDER BY id`,
        )
      ).getRowObjectsJson();
      expect(rows).toHaveLength(events.length);
      for (const row of rows) {
        expect(row.text, String(row.id)).toBe(row.text_of_metadata);
        expect(row.json, String(row.id)).toBe(row.json_of_metadata);
      }
      expect(rows.map((r) => r.text)).toEqual(expect.arrayContaining(['500', '503', 'abc', '{"code":500}', '[500,404]', 'true', '500.5', 'é"\\', null]));
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });

  it('answers what the events hold: a missing or null status is NULL, an object or array is its JSON', () => {
    const [groups, , , , texts, counts, unnested] = answers['typed columns'] as Array<Array<Record<string, unknown>>>;
    expect(groups).toHaveLength(statuses.length - 1);
    expect(groups!.find((g) => g.status === null)).toEqual({ status: null, n: 4 });
    expect(texts!.map((r) => r.id)).toEqual(['e2-0', 'e2-1', 'e3-0', 'e3-1']);
    expect(counts).toEqual([{ n: 2 * (statuses.length - 2), missing: 4 }]);
    // The array's elements are rows of their own (its event's metadata holds a '['), the rest one row each.
    expect(unnested!.filter((r) => String(r.id).startsWith('e6-'))).toHaveLength(4);
    expect(unnested).toHaveLength(2 * statuses.length + 2);
  });
});
