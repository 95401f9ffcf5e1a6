import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidSqlError } from '../src/errors';
import { bigQuerySchemaOf } from '../src/bigquery/schema-of-sources';
import { translateBigQuery } from '../src/bigquery/translate-bigquery';
import { SUPABASE_SOURCES } from '../src/sources/supabase/supabase-sources';
import { BigQueryHarness, type TestEvent } from './support/bigquery-harness';

// The BigQuery dialect's semantics (docs/sandboxing.md, "BigQuery dialect"): each feature's
// DuckDB text and its answers on real DuckDB over a few events.

const EDGE: TestEvent[] = [
  {
    id: 'a',
    timestamp: '2026-11-20T10:00:01.000001Z',
    event_message: 'GET | 200 | /rest/v1/todos',
    metadata: { request: { path: '/rest/v1/todos', method: 'GET', search: '?select=*', headers: { x_real_ip: '10.0.0.1' } }, response: { status_code: 200, origin_time: 1500 } },
  },
  {
    id: 'b',
    timestamp: '2026-11-20T10:01:30Z',
    event_message: 'POST | 503 | /auth/v1/token',
    metadata: {
      request: [
        { path: '/auth/v1/token', method: 'POST' },
        { path: '/auth/v1/user', method: 'PUT' },
      ],
      response: { status_code: 503, origin_time: 20 },
    },
  },
  { id: 'c', timestamp: '2026-11-20T10:02:00Z', event_message: 'no metadata' },
  {
    id: 'd',
    timestamp: '2026-11-20T11:00:00Z',
    event_message: 'line one\nline two',
    metadata: { request: { path: '/storage/v1/object/a', method: 'GET', headers: {} }, response: { status_code: '404', origin_time: 999 } },
  },
  { id: 'e', timestamp: '2026-11-20T11:30:00Z', event_message: 'empty request list', metadata: { request: [], response: null } },
];
const AUTH: TestEvent[] = [
  { id: 'x', timestamp: '2026-11-20T10:00:00Z', event_message: '{"level":"info","msg":"ok"}', metadata: { level: 'info', status: 200, path: '/token' } },
  { id: 'y', timestamp: '2026-11-20T10:00:30Z', event_message: '{"level":"error"}', metadata: { level: 'error', status: '500', path: '/signup', function_id: 'fn-1' } },
  { id: 'z', timestamp: '2026-11-20T10:05:00Z', event_message: 'warn', metadata: { level: 'warning', status: 422.6 } },
];
const POSTGRES: TestEvent[] = [
  { id: 'p1', timestamp: '2026-11-20T10:00:00Z', event_message: 'COMMIT', metadata: { parsed: { user_name: 'alice', error_severity: 'LOG', timestamp: 'x' } } },
  { id: 'p2', timestamp: '2026-11-20T10:00:01Z', event_message: 'ERROR: boom', metadata: { parsed: { user_name: 'bob', error_severity: 'ERROR' } } },
];

describe('the BigQuery dialect on DuckDB', () => {
  const h = new BigQueryHarness();
  beforeAll(() => h.open({ edge_logs: EDGE, auth_logs: AUTH, postgres_logs: POSTGRES }));
  afterAll(() => h.close());
  const ids = async (sql: string) => (await h.rows(sql)).map((r) => r.id);
  const refusal = async (sql: string) => {
    try {
      await h.rows(sql);
      return 'ok';
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidSqlError);
      return `${(error as InvalidSqlError).rule}: ${(error as Error).message}`;
    }
  };

  it('cross join unnest keeps a row whose record is missing or empty, an object gives one row, an array one per element', async () => {
    const sql = 'select id, r.path from edge_logs cross join unnest(metadata) as m cross join unnest(m.request) as r order by id, path';
    expect(await h.rows(sql)).toEqual([
      { id: 'a', path: '/rest/v1/todos' },
      { id: 'b', path: '/auth/v1/token' },
      { id: 'b', path: '/auth/v1/user' },
      { id: 'c', path: null },
      { id: 'd', path: '/storage/v1/object/a' },
      { id: 'e', path: null },
    ]);
    expect(await h.rows('select count(*) as n from edge_logs cross join unnest(metadata) as m cross join unnest(m.request) as r')).toEqual([{ n: 6 }]);
    expect(await h.rows('select count(*) as n from edge_logs cross join unnest(metadata) as m cross join unnest(m.response) as r')).toEqual([{ n: 5 }]);
  });

  it('left join unnest ... on true is the same, chains through aliases, and reads the bound path when nothing is an array', async () => {
    const sql =
      'select id, h.x_real_ip from edge_logs left join unnest(metadata) as m on true left join unnest(m.request) as r on true left join unnest(r.headers) as h on true where h.x_real_ip is not null';
    expect(await h.rows(sql)).toEqual([{ id: 'a', x_real_ip: '10.0.0.1' }]);
    const text = await h.translate(sql);
    expect(text).toContain(`json_extract_string("edge_logs"."metadata", '$."request"."headers"."x_real_ip"')`);
    expect(text).toContain(`contains("metadata", '[')`);
  });

  it('an alias equal to the column hides it (unnest(metadata) as metadata, then metadata.level)', async () => {
    expect(await h.rows("select id, metadata.level from auth_logs cross join unnest(metadata) as metadata where metadata.level = 'error'")).toEqual([{ id: 'y', level: 'error' }]);
    expect(await h.rows("select id, request.method from edge_logs cross join unnest(metadata) as metadata cross join unnest(metadata.request) as request where id = 'a'")).toEqual([
      { id: 'a', method: 'GET' },
    ]);
  });

  it("names an output column after a path's last part, and unnamed expressions f0_, f1_", async () => {
    const [row] = await h.rows(
      "select request.method, edge_logs.timestamp, upper(event_message), 1 + 1 from edge_logs cross join unnest(metadata) as m cross join unnest(m.request) as request where id = 'a'",
    );
    expect(Object.keys(row!)).toEqual(['method', 'timestamp', 'f0_', 'f1_']);
  });

  it('resolves a bare name through the unnest alias whose known fields have it; unknown and ambiguous names are refused', async () => {
    expect(await ids("select id from edge_logs cross join unnest(metadata) as m cross join unnest(m.request) as r where path like '%rest/v1%'")).toEqual(['a']);
    expect(await refusal('select nope from edge_logs cross join unnest(metadata) as m')).toMatch(/^query: Unrecognized name: nope/);
    // `status_code` is a known field of both response aliases.
    expect(await refusal('select status_code from edge_logs cross join unnest(metadata) as m cross join unnest(m.response) as r1 cross join unnest(m.response) as r2')).toMatch(
      /^query: Column name status_code is ambiguous: it could be r1\.status_code or r2\.status_code/,
    );
    // The preset's sources declare what their events carry: Postgres's parsed fields, named bare through an UNNEST with or without alias.
    const preset = bigQuerySchemaOf(SUPABASE_SOURCES);
    for (const target of ['duckdb', 'clickhouse'] as const) {
      const bare = await translateBigQuery('select error_severity, user_name from postgres_logs cross join unnest(metadata) m cross join unnest(m.parsed)', preset, target);
      const qualified = await translateBigQuery('select p.error_severity, p.user_name from postgres_logs cross join unnest(metadata) m cross join unnest(m.parsed) as p', preset, target);
      expect(bare.sql).toBe(qualified.sql);
    }
    await expect(translateBigQuery('select user_name from postgres_logs cross join unnest(metadata) m cross join unnest(m.parsed) cross join unnest(m.parsed) as q', preset, 'duckdb')).rejects.toThrow(
      'Column name user_name is ambiguous: it could be the user_name of an UNNEST without alias or q.user_name; qualify it.',
    );
    // A table column and an alias field of the same name: ambiguous, as in BigQuery.
    expect(await refusal("select id from postgres_logs cross join unnest(metadata) as m cross join unnest(m.parsed) as p where user_name = 'x' and timestamp is null")).toBe('ok');
  });

  it('reads table-qualified columns, table aliases and aliases of unnested columns (edge_logs.timestamp, t.timestamp, f.metadata)', async () => {
    expect(await ids("select t.id from postgres_logs as t where t.timestamp > '2026-11-20T10:00:00.500Z'")).toEqual(['p2']);
    expect(await ids("select f.id from edge_logs f cross join unnest(f.metadata) as m cross join unnest(m.request) as r where r.method = 'PUT'")).toEqual(['b']);
    expect(await ids("select id from edge_logs where edge_logs.timestamp >= '2026-11-20 11:00:00+00' order by edge_logs.timestamp")).toEqual(['d', 'e']);
  });

  it('takes backticks per segment, double-quoted strings, BigQuery escapes, comments, ::text, a trailing comma and a trailing semicolon', async () => {
    expect(await ids('select id, from auth_logs cross join unnest(metadata) as metadata where `metadata`.`function_id` = "fn-1"; -- trailing')).toEqual(['y']);
    // '\\s' is the regular expression \s; "level.{3}(...)" a double-quoted pattern.
    expect(await ids("select id from edge_logs where regexp_contains(event_message, '[Ee]rror|\\\\s[45][0-9][0-9]\\\\s')")).toEqual(['b']);
    expect(await ids('select t.id from auth_logs as t where regexp_contains(event_message,"level.{3}(info|warning||error|fatal)") order by id')).toEqual(['x', 'y']);
    expect(await ids("select id from edge_logs where event_message::text like '%line two' and 'it''s' = \"it's\" and 'a\\'b' = \"a'b\" and '\\x41' = 'A'")).toEqual(['d']);
    expect(await refusal("select id from edge_logs where regexp_contains(event_message, '\\s')")).toMatch(/^syntax: Illegal escape sequence/);
  });

  it('lets a SELECT alias win over a column of the same name in GROUP BY and ORDER BY, and groups by ordinals', async () => {
    const chart = "select timestamp_trunc(t.timestamp, hour) as timestamp, count(*) as n, from edge_logs t where t.timestamp > '2026-11-20T00:00:00Z' group by timestamp order by timestamp asc";
    expect(await h.rows(chart)).toEqual([
      { timestamp: '2026-11-20T10:00:00Z', n: 3 },
      { timestamp: '2026-11-20T11:00:00Z', n: 2 },
    ]);
    expect(await h.rows('select r.method as m, count(*) as c from edge_logs cross join unnest(metadata) as x cross join unnest(x.request) as r group by 1 order by 2 desc, 1 limit 2')).toEqual([
      { m: null, c: 2 },
      { m: 'GET', c: 2 },
    ]); // BigQuery sorts NULLs first when ascending
  });

  it('compares metadata values by their JSON type: numbers with numbers, strings as text; outputs keep their type', async () => {
    expect(await ids('select id from edge_logs cross join unnest(metadata) as m cross join unnest(m.response) as response where response.status_code between 500 and 599')).toEqual(['b']);
    // A JSON string holding a number compares as that number (as Logflare reads it).
    expect(await ids('select id from edge_logs cross join unnest(metadata) as m cross join unnest(m.response) as r where r.status_code >= 400 order by id')).toEqual(['b', 'd']);
    expect(await ids('select id from edge_logs cross join unnest(metadata) as m cross join unnest(m.response) as r where r.origin_time > 1000')).toEqual(['a']);
    expect(
      await h.rows("select r.status_code, r.origin_time, m.request, m.nothing from edge_logs cross join unnest(metadata) as m cross join unnest(m.response) as r where id in ('a', 'd') order by id"),
    ).toEqual([
      { status_code: 200, origin_time: 1500, request: { path: '/rest/v1/todos', method: 'GET', search: '?select=*', headers: { x_real_ip: '10.0.0.1' } }, nothing: null },
      { status_code: '404', origin_time: 999, request: { path: '/storage/v1/object/a', method: 'GET', headers: {} }, nothing: null },
    ]);
    // ORDER BY a JSON field: numbers by value.
    expect(await ids('select id from edge_logs cross join unnest(metadata) as m cross join unnest(m.response) as r where r.origin_time is not null order by r.origin_time desc')).toEqual([
      'a',
      'd',
      'b',
    ]);
  });

  it('casts: SAFE_CAST to INT64 of numbers and numeric strings, CAST AS DATETIME, STRING, FLOAT64, BOOL; IFNULL and COALESCE', async () => {
    const sql =
      "select id, IFNULL(SAFE_CAST(metadata.status AS INT64), 0) as s, cast(metadata.status as float64) as f, safe_cast(metadata.level as int64) as bad, cast(timestamp as datetime) as ts, cast(1 as string) as one, cast('true' as bool) as yes, coalesce(metadata.nothing, metadata.level) as c from auth_logs cross join unnest(metadata) as metadata order by id";
    expect(await h.rows(sql)).toEqual([
      { id: 'x', s: 200, f: 200, bad: null, ts: '2026-11-20T10:00:00Z', one: '1', yes: true, c: 'info' },
      { id: 'y', s: 500, f: 500, bad: null, ts: '2026-11-20T10:00:30Z', one: '1', yes: true, c: 'error' },
      { id: 'z', s: 423, f: 422.6, bad: null, ts: '2026-11-20T10:05:00Z', one: '1', yes: true, c: 'warning' },
    ]);
    expect(await refusal('select cast(metadata.level as int64) from auth_logs cross join unnest(metadata) as metadata')).toMatch(/^query: .*Could not convert string 'info'/);
  });

  it('regexp_contains is RE2 with BigQuery\'s meaning of "." (no newline)', async () => {
    expect(await ids("select id from edge_logs where regexp_contains(event_message, 'one.line')")).toEqual([]);
    expect(await ids("select id from edge_logs where regexp_contains(event_message, '(?s)one.line')")).toEqual(['d']);
    expect(await ids("select id from edge_logs where regexp_contains(event_message, r'^line one\\nline')")).toEqual(['d']);
  });

  it('groups by FORMAT_TIMESTAMP and CAST(timestamp AS STRING): a value of a few bytes a row, whatever the size check reads the time from', async () => {
    expect(await h.rows("select format_timestamp('%Y-%m-%d %H:00', timestamp) as hour, count(*) as n from edge_logs group by hour order by hour")).toEqual([
      { hour: '2026-11-20 10:00', n: 3 },
      { hour: '2026-11-20 11:00', n: 2 },
    ]);
    expect(await h.rows("select cast(timestamp_trunc(timestamp, hour) as string) as hour, count(*) as n from edge_logs where id in ('a', 'd') group by 1 order by 1")).toEqual([
      { hour: '2026-11-20 10:00:00+00', n: 1 },
      { hour: '2026-11-20 11:00:00+00', n: 1 },
    ]);
  });

  it('timestamp functions: timestamp_trunc, timestamp_sub/add with intervals, unix_millis, unix_micros, format_timestamp, timestamp_diff, extract', async () => {
    const sql =
      "select timestamp_trunc(timestamp, minute) as m, timestamp_trunc(timestamp, day) as d, timestamp_sub(timestamp, interval 1 hour) as sub, timestamp_add(timestamp, interval 90 second) as ad, unix_millis(timestamp) as ms, unix_micros(timestamp) as us, unix_seconds(timestamp) as s, format_timestamp('%F %T', timestamp) as f, timestamp_diff(timestamp, '2026-11-20T00:00:00Z', minute) as diff, extract(hour from timestamp) as h, extract(dayofweek from timestamp) as dow from edge_logs where id = 'a'";
    expect(await h.rows(sql)).toEqual([
      {
        m: '2026-11-20T10:00:00Z',
        d: '2026-11-20T00:00:00Z',
        sub: '2026-11-20T09:00:01.000001Z',
        ad: '2026-11-20T10:01:31.000001Z',
        ms: 1795168801000,
        us: 1795168801000001,
        s: 1795168801,
        f: '2026-11-20 10:00:01',
        diff: 600,
        h: 10,
        dow: 6,
      },
    ]);
  });

  it('aggregates: countif, count(distinct), count(case when), sum, avg, min, max; starts_with, json_value, between, in, like', async () => {
    const sql =
      'select countif(r.status_code >= 500) as errors, count(distinct r.status_code) as codes, count(case when r.origin_time > 100 then 1 end) as slow, sum(cast(r.origin_time as int64)) as total, avg(r.origin_time) as mean, min(timestamp) as first, max(id) as last from edge_logs cross join unnest(metadata) as m cross join unnest(m.response) as r';
    expect(await h.rows(sql)).toEqual([{ errors: 1, codes: 3, slow: 2, total: 2519, mean: 2519 / 3, first: '2026-11-20T10:00:01.000001Z', last: 'e' }]);
    expect(await ids("select id from auth_logs where starts_with(json_value(event_message, '$.level'), 'err') or json_value(event_message, \"$.msg\") in ('ok') order by id")).toEqual(['x', 'y']);
    expect(await ids("select id from auth_logs where id between 'x' and 'y' and id not like 'z%' and id in ('x', 'y', 'q') order by id")).toEqual(['x', 'y']);
  });

  it("JSON_VALUE of a string holding JSON: a scalar's text; an object, an array, null, a missing key and text that is no JSON are NULL", async () => {
    const text = `'{"o":{"k":1},"l":[1],"n":null,"s":"v\\u00e9"}'`;
    const sql = `select json_value(${text}, '$.o') as o, json_value(${text}, '$.l') as l, json_value(${text}, '$.n') as n, json_value(${text}, '$.s') as s, json_value(${text}, '$.o.k') as k, json_value(${text}, '$.x') as x, json_value(${text}, '$') as whole, json_value(event_message, '$.level') as level from auth_logs where id in ('x', 'z') order by id`;
    expect(await h.rows(sql)).toEqual([
      { o: null, l: null, n: null, s: 'v\u00e9', k: '1', x: null, whole: null, level: 'info' },
      { o: null, l: null, n: null, s: 'v\u00e9', k: '1', x: null, whole: null, level: null },
    ]);
  });

  it('MIN/MAX of a JSON field compare numbers (a FLOAT64); a value that is no number, even "404", fails the query naming the aggregate', async () => {
    const from = ' from edge_logs cross join unnest(metadata) as m cross join unnest(m.response) as r';
    expect(await h.rows(`select max(r.origin_time) as mx, min(r.origin_time) as mn, max(distinct r.origin_time) as d${from}`)).toEqual([{ mx: 1500, mn: 20, d: 1500 }]);
    expect(await h.rows(`select r.status_code, max(r.origin_time) as mx${from} where r.origin_time < 1000 group by 1 order by 2`)).toEqual([
      { status_code: 503, mx: 20 },
      { status_code: '404', mx: 999 },
    ]);
    expect(await refusal(`select max(r.status_code) as mx${from}`)).toMatch(/^query: .*MAX of a JSON field compares numbers: this value is no number \(for text, MAX\(CAST\(x AS STRING\)\)\)/);
    expect(await refusal('select min(m.level) from auth_logs cross join unnest(metadata) as m')).toMatch(/MIN of a JSON field compares numbers/);
    expect(await h.rows('select max(cast(m.level as string)) as top from auth_logs cross join unnest(metadata) as m')).toEqual([{ top: 'warning' }]);
  });

  it('APPROX_QUANTILES(x, n) as a whole: the n + 1 values of [OFFSET(k)], a JSON array, NULL when there is no value', async () => {
    const from = ' from edge_logs cross join unnest(metadata) as m cross join unnest(m.response) as r';
    const rows = await h.rows(`select approx_quantiles(r.origin_time, 4) as q, approx_quantiles(r.origin_time, 4)[offset(1)] as q1, approx_quantiles(cast(r.status_code as int64), 2) as s${from}`);
    expect(rows).toEqual([{ q: [20, 20, 999, 1500, 1500], q1: 20, s: [200, 404, 503] }]);
    expect(await h.rows(`select approx_quantiles(r.origin_time, 10) as q${from} where r.origin_time is null`)).toEqual([{ q: null }]);
  });

  it('a subscript of a JSON field: an array gives its element, an object is a repeated field of one element; SAFE_ is NULL out of bounds, OFFSET fails the query', async () => {
    const from = ' from edge_logs cross join unnest(metadata) as m';
    expect(
      await h.rows(`select id, m.request[safe_offset(0)].path as p0, m.request[safe_ordinal(2)].method as m2, metadata.request[ordinal(1)].method as m1${from} where id != 'e' order by id`),
    ).toEqual([
      { id: 'a', p0: '/rest/v1/todos', m2: null, m1: 'GET' },
      { id: 'b', p0: '/auth/v1/token', m2: 'PUT', m1: 'POST' },
      { id: 'c', p0: null, m2: null, m1: null },
      { id: 'd', p0: '/storage/v1/object/a', m2: null, m1: 'GET' },
    ]);
    expect(await h.rows(`select m.request[safe_offset(1)] as r, m.request[safe_offset(0)].path as p, m.request[safe_ordinal(0)] as z${from} where id in ('b', 'e') order by id`)).toEqual([
      { r: { path: '/auth/v1/user', method: 'PUT' }, p: '/auth/v1/token', z: null },
      { r: null, p: null, z: null },
    ]);
    expect(await h.rows(`select m.request[offset(1)].method as m${from} where id = 'b'`)).toEqual([{ m: 'PUT' }]);
    expect(await refusal(`select m.request[offset(1)].method${from} where id = 'a'`)).toMatch(/^query: .*Array index 1 is out of bounds of OBJECT/);
    expect(await refusal(`select m.request[offset(0)].method${from} where id = 'e'`)).toMatch(/Array index 0 is out of bounds/);
    expect(await refusal(`select m.request[ordinal(0)]${from}`)).toMatch(/^query: ORDINAL\(0\) is out of bounds/);
    expect(await refusal(`select m.request[offset(0)].headers[offset(0)]${from}`)).toMatch(/^construct: An array subscript .* once on a JSON field/);
  });

  it("subqueries, the query's own CTEs, joins of tables, UNION ALL, SELECT * EXCEPT", async () => {
    expect(
      await ids("with errs as (select id from auth_logs cross join unnest(metadata) as metadata where metadata.level = 'error') select a.id from auth_logs a join errs on a.id = errs.id"),
    ).toEqual(['y']);
    expect(
      await ids("select id from auth_logs where id in (select id from auth_logs where id > 'x') and exists (select 1 from edge_logs) and (select count(*) from edge_logs) = 5 order by id"),
    ).toEqual(['y', 'z']);
    expect(await ids("select id from auth_logs where id = 'x' union all select id from postgres_logs where id = 'p1' order by 1")).toEqual(['p1', 'x']);
    expect(Object.keys((await h.rows("select * except (metadata) from auth_logs where id = 'x'"))[0]!)).toEqual(['id', 'timestamp', 'event_message']);
  });

  it('compares a timestamp with an ISO string, and refuses a string that is no timestamp', async () => {
    expect(await ids("select id from edge_logs where timestamp > '2026-11-20T10:01:00.000Z' and timestamp <= '2026-11-20T12:00:00+01:00' order by timestamp")).toEqual(['b', 'c', 'd']);
    expect(await refusal("select id from edge_logs where timestamp > 'yesterday'")).toMatch(/^query: Could not read "yesterday" as a TIMESTAMP/);
  });
});
