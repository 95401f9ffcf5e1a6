/**
 * A caller's BigQuery SQL (Supabase Studio's, and each feature of the dialect) answered by
 * ClickHouse 18.16 (two shards, Distributed tables) and by DuckDB over the same events: the
 * ClickHouse text is printed from the tree whose DuckDB text the sandbox checks, and reads
 * `metadata` through the flattened paths the loader writes. Answers must be identical.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickhouseLoader, type ClickHouseLoader } from '../../src/clickhouse';
import { translateBigQuery } from '../../src/bigquery/translate-bigquery';
import { clickhouseSourceTables } from '../../src/query/clickhouse-source-tables';
import { querySql } from '../../src/sql/query-files';
import { connect, type Connection } from '../../src/engine/clickhouse/connection';
import { runSql } from '../../src/engine/clickhouse/run-sql';
import { formatIsoMicros } from '../../src/time/iso';
import { BigQueryHarness, SCHEMA, TABLES, type TestEvent } from '../support/bigquery-harness';
import { allStudioQueries } from '../support/studio-queries';
import { startClickHouseCluster, type ClickHouseCluster } from './support/clickhouse-cluster';

const meta = (request: unknown, response: unknown) => ({ request, response });
const EDGE: TestEvent[] = [
  {
    id: 'e1',
    timestamp: '2026-11-20T10:00:01.000001Z',
    event_message: 'GET | 200 | /rest/v1/todos',
    metadata: meta(
      { path: '/rest/v1/todos', method: 'GET', search: '?select=*', headers: { x_real_ip: '10.0.0.1' }, cf: { country: 'NZ' } },
      { status_code: 200, origin_time: 1500, headers: { cf_cache_status: 'HIT' } },
    ),
  },
  {
    id: 'e2',
    timestamp: '2026-11-20T10:01:30Z',
    event_message: 'POST | 503',
    metadata: meta(
      [
        { path: '/auth/v1/token', method: 'POST' },
        { path: '/auth/v1/user', method: 'PUT', headers: [{ x_real_ip: 'a' }, { x_real_ip: 'b' }] },
      ],
      { status_code: 503, origin_time: 20 },
    ),
  },
  { id: 'e3', timestamp: '2026-11-20T10:02:00Z', event_message: 'no metadata' },
  {
    id: 'e4',
    timestamp: '2026-11-20T11:00:00Z',
    event_message: 'line one\nline two',
    metadata: meta({ path: '/storage/v1/object/a', method: 'GET', headers: {} }, { status_code: '404', origin_time: 999.5, headers: { cf_cache_status: 'MISS' } }),
  },
  { id: 'e5', timestamp: '2026-11-20T11:30:00Z', event_message: 'empty request list', metadata: { request: [], response: null, 'a.b': { 'c[d': 'dotted' } } },
  { id: 'e6', timestamp: '2026-11-20T11:31:00Z', event_message: 'text with [ bracket', metadata: meta({ path: '/rest/v1/[x]', method: 'GET', search: 'q="é\\\\n"\u00e9' }, { status_code: 500 }) },
  {
    id: 'e7',
    timestamp: '2026-11-20T11:32:00.5Z',
    event_message: 'error 500 here',
    metadata: [meta({ path: '/graphql/v1', method: 'POST' }, { status_code: 200 }), meta({ path: '/auth/v1/x', method: 'GET' }, { status_code: 401 })],
  },
  { id: 'e8', timestamp: '2026-11-20T11:33:00Z', event_message: '{project:String}', metadata: meta({ path: null, method: 'DELETE' }, { status_code: 204, origin_time: -3 }) },
];
const FUNCTIONS: TestEvent[] = [
  {
    id: 'f1',
    timestamp: '2026-11-20T10:00:00Z',
    event_message: 'boot',
    metadata: { project_ref: 'alpha', function_id: 'fn-1', execution_time_ms: 12, request: { method: 'POST', pathname: '/hello' }, response: { status_code: 200 } },
  },
  {
    id: 'f2',
    timestamp: '2026-11-20T10:05:00Z',
    event_message: 'fail',
    metadata: { project_ref: 'alpha', function_id: 'fn-2', execution_time_ms: 40.5, request: { method: 'GET' }, response: { status_code: 502 } },
  },
];

/**
 * Log lines holding JSON (or not) for JSON_VALUE of a STRING, with BigQuery's answer for `$.a.b`
 * and `$.a` of each: a scalar's text (a string decoded), NULL when missing, null, an object, an
 * array or no JSON at all.
 */
const MESSAGES: Array<TestEvent & { ab: string | null; a: string | null }> = (
  [
    { id: 'j1', event_message: '{"a":{"b":"x\\"y\\\\z\\u00e9\\ud83d\\ude00\\n"}}', ab: 'x"y\\z\u00e9\u{1f600}\n', a: null },
    { id: 'j2', event_message: ' {"a" : { "b" : 42 , "c" : [1, {"b": 2}] } }\n', ab: '42', a: null },
    { id: 'j3', event_message: '{"x":{"b":1},"a":"top","b":2}', ab: null, a: 'top' },
    { id: 'j4', event_message: '{"a":{"x":{"b":1}},"k":{"b":3}}', ab: null, a: null },
    { id: 'j5', event_message: '{"a":[{"b":1}]}', ab: null, a: null },
    { id: 'j6', event_message: '{"a":{"b":null}}', ab: null, a: null },
    { id: 'j7', event_message: '{"a":{"b":true}}', ab: 'true', a: null },
    { id: 'j8', event_message: '{"a":{"b":{"c":1}}}', ab: null, a: null },
    { id: 'j9', event_message: '{"a":{"b":"{project:String}"}}', ab: '{project:String}', a: null },
    { id: 'j10', event_message: '{"a":1} trailing', ab: null, a: null },
    { id: 'j11', event_message: '{"a":{"b":1]}', ab: null, a: null },
    { id: 'j12', event_message: '2026/11/20 10:00:00 [POP] info - 0.0123 seconds', ab: null, a: null },
    { id: 'j13', event_message: '{"\\u0061":{"b":-7}}', ab: '-7', a: null },
    { id: 'j14', event_message: '[{"a":1}]', ab: null, a: null },
    { id: 'j15', event_message: '{"a":"x\ty"}', ab: null, a: null },
    { id: 'j16', event_message: '"top-level"', ab: null, a: null },
  ] as const
).map((m, i) => ({ ...m, timestamp: `2026-11-20T12:00:${String(i).padStart(2, '0')}Z` }));

/** Queries of each feature over the tables ClickHouse keeps. */
const FEATURES = [
  'select id, r.path from edge_logs cross join unnest(metadata) as m cross join unnest(m.request) as r',
  'select id, h.x_real_ip from edge_logs left join unnest(metadata) as m on true left join unnest(m.request) as r on true left join unnest(r.headers) as h on true',
  'select count(*) as n from edge_logs cross join unnest(metadata) as m cross join unnest(m.request) as r cross join unnest(m.response) as s',
  "select id, path from edge_logs cross join unnest(metadata) as m cross join unnest(m.request) as r where path like '%v1%'",
  'select id, metadata.request, metadata.response.status_code from edge_logs cross join unnest(metadata) as metadata',
  'select id, m.`a.b`.`c[d` as odd, m.nothing from edge_logs cross join unnest(metadata) as m',
  'select id, r.search, upper(r.search) as up, length(r.search) as len from edge_logs cross join unnest(metadata) as m cross join unnest(m.request) as r',
  'select id from edge_logs cross join unnest(metadata) as m cross join unnest(m.response) as s where s.status_code between 500 and 599',
  'select id, s.origin_time from edge_logs cross join unnest(metadata) as m cross join unnest(m.response) as s where s.origin_time > 100',
  'select id, safe_cast(s.status_code as int64) as code, cast(s.origin_time as int64) as t, ifnull(safe_cast(s.status_code as float64), -1) as f, cast(s.status_code as string) as txt from edge_logs cross join unnest(metadata) as m cross join unnest(m.response) as s',
  "select timestamp_trunc(t.timestamp, hour) as timestamp, count(*) as n, from edge_logs t where t.timestamp > '2026-11-20T00:00:00Z' group by timestamp order by timestamp",
  'select r.method as verb, count(*) as c, countif(s.status_code >= 500) as errors, count(distinct id) as ids from edge_logs cross join unnest(metadata) as m cross join unnest(m.request) as r cross join unnest(m.response) as s group by 1 order by 2 desc, 1',
  'select id, timestamp_sub(timestamp, interval 1 hour) as a, timestamp_add(timestamp, interval 90 second) as b, unix_millis(timestamp) as ms, unix_micros(timestamp) as us, unix_seconds(timestamp) as s from edge_logs',
  "select id, format_timestamp('%F %T', timestamp) as f, extract(hour from timestamp) as h, extract(dayofweek from timestamp) as dow, timestamp_diff(timestamp, '2026-11-20T00:00:00Z', minute) as diff from edge_logs",
  "select id from edge_logs where regexp_contains(event_message, '[Ee]rror|\\\\s[45][0-9][0-9]\\\\s') or regexp_contains(event_message, 'one.line')",
  "select id from edge_logs where regexp_contains(event_message, '(?s)one.line') or event_message like '%\\\\[%'",
  "select id from edge_logs where regexp_contains(event_message, '(?i)LINE') or regexp_contains(event_message, 'x|(?i)GET')",
  "select id, regexp_extract(event_message, '([0-9]+)') as n, regexp_replace(event_message, '[aeiou]', '*') as r from edge_logs",
  "select id, starts_with(id, 'e1') as s, ends_with(id, '2') as e, strpos(event_message, '|') as p, concat(id, '-', event_message) as c, substr(event_message, 2, 3) as sub from edge_logs",
  "select id, json_value(m.request, '$.method') as verb from edge_logs cross join unnest(metadata) as m",
  "select id from edge_logs where id in (select id from edge_logs where timestamp > '2026-11-20T11:00:00Z') and event_message != '{project:String}'",
  // One exact quantile, the same position on both engines, and the whole array of them; BigQuery's text of a timestamp; the request's clock grouped by.
  'select approx_quantiles(s.origin_time, 4)[offset(1)] as q1, approx_quantiles(s.origin_time, 100)[offset(50)] as p50, approx_quantiles(s.origin_time, 100)[safe_ordinal(101)] as mx, approx_quantiles(cast(s.status_code as int64), 10)[offset(9)] as p90 from edge_logs cross join unnest(metadata) as m cross join unnest(m.response) as s',
  'select approx_quantiles(s.origin_time, 4) as q, approx_quantiles(cast(s.status_code as int64), 10) as c, approx_quantiles(s.origin_time, 2) as h from edge_logs cross join unnest(metadata) as m cross join unnest(m.response) as s',
  'select approx_quantiles(s.origin_time, 4) as q from edge_logs cross join unnest(metadata) as m cross join unnest(m.response) as s where s.origin_time is null',
  'select r.method, approx_quantiles(s.origin_time, 100) as q from edge_logs cross join unnest(metadata) as m cross join unnest(m.request) as r cross join unnest(m.response) as s group by 1',
  "select id, cast(timestamp as string) as ts, format_timestamp('%Y-%m-%d', timestamp) as d from edge_logs",
  // %M is the minute (printed without formatDateTime's %M, which current ClickHouse reads as the month's name).
  "select id, format_timestamp('%Y-%m-%d %H:%M', timestamp) as a, format_timestamp('%M', timestamp) as b, format_timestamp('%%M %M%%', timestamp) as c from edge_logs",
  // IN a subquery selecting a JSON field (compared as text, as = compares it), UNION ALL of a field and of values with a bare NULL.
  "select id from function_edge_logs where id in (select m.function_id from function_edge_logs cross join unnest(metadata) as m) or 'fn-1' in (select distinct m.function_id from function_edge_logs cross join unnest(metadata) as m)",
  'select m.function_id as v, m.execution_time_ms as t, null as n from function_edge_logs cross join unnest(metadata) as m union all select null, null, 2 from function_edge_logs',
  "with recent as (select id, timestamp from edge_logs where timestamp > '2026-11-20T11:00:00Z') select id from recent union all select id from function_edge_logs",
  'select min(timestamp) as first, max(timestamp) as last, sum(cast(s.origin_time as float64)) as total, avg(s.origin_time) as mean from edge_logs cross join unnest(metadata) as m cross join unnest(m.response) as s',
  // MIN/MAX of a JSON field of numbers (one with a fraction, one negative), overall and by group.
  'select max(s.origin_time) as mx, min(s.origin_time) as mn, max(distinct s.origin_time) as d from edge_logs cross join unnest(metadata) as m cross join unnest(m.response) as s',
  'select r.method, max(s.origin_time) as mx, min(s.origin_time) as mn from edge_logs cross join unnest(metadata) as m cross join unnest(m.request) as r cross join unnest(m.response) as s group by 1',
  // A subscript of a field: an array's element, an object as its one element, missing, null and empty arrays NULL; a second subscript deeper.
  'select id, m.request[safe_offset(0)].path as p0, m.request[safe_ordinal(2)].method as m2, metadata.request[safe_offset(1)] as r1, m.request[safe_offset(1)].headers as h from edge_logs cross join unnest(metadata) as m',
  "select id, m.request[offset(0)].method as m0 from edge_logs cross join unnest(metadata) as m where id in ('e1', 'e2', 'e3', 'e8')",
  "select sum(1) as n, max(id) as m, logical_or(id = 'e1') as any1 from edge_logs where false",
  "select id, case when s.status_code >= 500 then 'error' when s.status_code >= 400 then 'warning' else 'ok' end as level, s.status_code is null as missing from edge_logs cross join unnest(metadata) as m cross join unnest(m.response) as s",
  'select id, m.function_id, m.execution_time_ms, request.pathname from function_edge_logs cross join unnest(metadata) as m cross join unnest(m.request) as request',
  'select distinct r.method from edge_logs cross join unnest(metadata) as m cross join unnest(m.request) as r where r.method is not null',
  'select id, round(s.origin_time) as r, abs(s.origin_time) as a, safe_divide(1, s.origin_time) as d, mod(cast(s.status_code as int64), 7) as md from edge_logs cross join unnest(metadata) as m cross join unnest(m.response) as s',
  // Half away from zero, exactly: x + 0.5 is rounded itself for these two (to 1 and to 2^52 + 2).
  "select round(0.49999999999999994) as a, round(4503599627370497.0) as b, round(-2.5) as c, round(2.5) as d, round(-0.5) as e, cast(-0.49999999999999994 as int64) as f from edge_logs where id = 'e1'",
  "select id, id = 'e1' or cast(null as bool) as o, id = 'e1' and cast(null as bool) as a, not (id = 'e1' or cast(null as bool)) as n, id != 'e1' or cast(null as bool) as o2 from edge_logs",
];

describe('the BigQuery dialect on ClickHouse 18.16 (2 shards) versus DuckDB', () => {
  let cluster: ClickHouseCluster;
  let loader: ClickHouseLoader;
  let connection: Connection;
  const duckdb = new BigQueryHarness();
  const database = 'bq';
  let tables: Record<string, string>;

  beforeAll(async () => {
    cluster = await startClickHouseCluster();
    // Every shard gets its tables (no ON CLUSTER without ZooKeeper), then rows go through the Distributed ones.
    for (const shard of cluster.shards) {
      const init = clickhouseLoader({ url: shard.url, database, cluster: cluster.name });
      await init.init();
      await init.close();
    }
    loader = clickhouseLoader({ url: cluster.url, database, cluster: cluster.name });
    const project = (p: string) => (e: TestEvent) => ({ ...e, project: p });
    await loader.insertEvents('edgeLogs', [
      ...[...EDGE, ...MESSAGES.map(({ ab: _ab, a: _a, ...event }) => event)].map(project('alpha')),
      ...EDGE.slice(0, 3).map((e) => ({ ...project('beta')(e), id: `beta-${e.id}` })),
    ]);
    await loader.insertEvents('functionEdgeLogs', FUNCTIONS);
    await duckdb.open({ edge_logs: [...EDGE, ...MESSAGES.map(({ ab: _ab, a: _a, ...event }) => event)], function_edge_logs: FUNCTIONS });
    connection = await connect({ url: cluster.url, database });
    tables = clickhouseSourceTables(
      querySql('clickhouse', 'logs.all.tables'),
      TABLES.map((relation) => ({
        relation,
        table: relation === 'edge_logs' ? `${database}.edge_logs` : relation === 'function_edge_logs' ? `${database}.function_edge_logs` : null,
        projectColumn: relation === 'edge_logs' ? 'project' : 'project_ref',
      })),
    );
  });
  afterAll(async () => {
    duckdb.close();
    await connection?.close();
    await loader?.close();
    await cluster?.stop();
  });

  /** ClickHouse's rows, shaped as the harness shapes DuckDB's. */
  const clickhouseRows = async (sql: string) => {
    const translated = await translateBigQuery(sql, SCHEMA, 'clickhouse', tables);
    const { data } = await runSql(connection.client, connection.features, { sql: translated.sql, params: { project: 'alpha', after: { timestamp: 0n }, until: null } });
    return data.map((row) => Object.fromEntries(translated.columns.map((c) => [c.name, shape(row[c.name], c.kind)])));
  };
  const sorted = (rows: Array<Record<string, unknown>>) => rows.map((r) => JSON.stringify(r)).sort();

  /** The queries whose answers differ (rows compared as sets: ties in ORDER BY may come in any order). */
  const differences = async (queries: ReadonlyArray<{ name: string; sql: string }>) => {
    const out: unknown[] = [];
    for (const { name, sql } of queries) {
      const expected = sorted(await duckdb.rows(sql));
      const actual = sorted(await clickhouseRows(sql).catch((error: Error) => [{ error: error.message.slice(0, 400) }]));
      if (JSON.stringify(actual) !== JSON.stringify(expected)) out.push({ name, expected, actual });
    }
    return out;
  };

  it('answers each feature as DuckDB does', async () => {
    expect(await differences(FEATURES.map((sql) => ({ name: sql, sql })))).toEqual([]);
  });

  it('reads JSON_VALUE of a string holding JSON as BigQuery does, on both engines', async () => {
    const sql = "select id, json_value(event_message, '$.a.b') as ab, json_extract_scalar(event_message, '$.a') as a from edge_logs where starts_with(id, 'j')";
    const expected = sorted(MESSAGES.map(({ id, ab, a }) => ({ id, ab, a })));
    expect(sorted(await clickhouseRows(sql))).toEqual(expected);
    expect(sorted(await duckdb.rows(sql))).toEqual(expected);
    const whole = "select id, json_value(event_message, '$') as v from edge_logs where id in ('j1', 'j12', 'j16')";
    const top = sorted([
      { id: 'j1', v: null },
      { id: 'j12', v: null },
      { id: 'j16', v: 'top-level' },
    ]);
    expect(sorted(await clickhouseRows(whole))).toEqual(top);
    expect(sorted(await duckdb.rows(whole))).toEqual(top);
  });

  it('fails JSON_VALUE of a string nested deeper than 62 levels on ClickHouse, rather than answer it wrongly', async () => {
    const nested = (depth: number) => `select json_value('${'['.repeat(depth)}${']'.repeat(depth)}', '$') as v from edge_logs where id = 'e1'`;
    expect(await clickhouseRows(nested(62))).toEqual([{ v: null }]);
    await expect(clickhouseRows(nested(63))).rejects.toThrow('JSON nested deeper than 62 levels');
  });

  it('fails MAX of a JSON field holding a string ("404") on both engines, as DuckDB fails it', async () => {
    const sql = 'select max(s.status_code) as mx from edge_logs cross join unnest(metadata) as m cross join unnest(m.response) as s';
    await expect(duckdb.rows(sql)).rejects.toThrow('MAX of a JSON field compares numbers');
    await expect(clickhouseRows(sql)).rejects.toThrow();
    expect(await clickhouseRows(`${sql} where s.status_code != '404'`)).toEqual(await duckdb.rows(`${sql} where s.status_code != '404'`));
  });

  it("fails OFFSET past a field's elements on both engines (an object has one, an empty array none), as DuckDB fails it", async () => {
    for (const sql of [
      "select m.request[offset(1)].path from edge_logs cross join unnest(metadata) as m where id = 'e1'",
      "select m.request[offset(0)] from edge_logs cross join unnest(metadata) as m where id = 'e5'",
    ]) {
      await expect(duckdb.rows(sql)).rejects.toThrow('out of bounds');
      await expect(clickhouseRows(sql)).rejects.toThrow();
    }
  });

  it('answers every query of Supabase Studio as DuckDB does', async () => {
    const queries = allStudioQueries();
    expect(queries.length).toBeGreaterThan(150);
    expect(await differences(queries)).toEqual([]);
  });
});

function shape(value: unknown, kind: string): unknown {
  if (value === null || value === undefined) return null;
  if (kind === 'json') return JSON.parse(String(value));
  if (kind === 'timestamp')
    return formatIsoMicros(BigInt(String(value)))
      .replace(/\.000000Z$/, 'Z')
      .replace(/(\.\d*?)0+Z$/, '$1Z');
  if (kind === 'boolean') return Number(value) === 1;
  if (kind === 'integer' || kind === 'float') return Number(value);
  return value;
}
