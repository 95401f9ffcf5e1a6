import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidSqlError } from '../src/errors';
import { BigQueryHarness } from './support/bigquery-harness';

// What the BigQuery dialect refuses: each a 400 invalid_sql with its rule and a message naming
// the construct, before anything runs (docs/sandboxing.md, "BigQuery dialect").

const U = 'edge_logs cross join unnest(metadata) as m cross join unnest(m.request) as r';

const REFUSALS: Array<[sql: string, rule: string, message: RegExp]> = [
  ['select array_agg(id) from edge_logs', 'function', /BigQuery's ARRAY_AGG is not supported here \(it builds arrays\)/],
  ["select string_agg(id, ',') from edge_logs", 'function', /BigQuery's STRING_AGG is not supported/],
  ['select approx_quantiles(1, 3)[offset(1)] from edge_logs', 'function', /APPROX_QUANTILES\(x, 3\)\[OFFSET\(1\)\] is not supported here: the quantile 1\/3 is no exact decimal/],
  [
    'select m.parsed[safe_offset(0)].x[offset(0)] from postgres_logs cross join unnest(metadata) as m',
    'construct',
    /An array subscript \(\[OFFSET\(n\)\], \[SAFE_OFFSET\(n\)\], \[ORDINAL\(n\)\]\) is supported here on APPROX_QUANTILES\(x, n\) and once on a JSON field/,
  ],
  ['select approx_quantiles(timestamp, 100) from edge_logs', 'function', /APPROX_QUANTILES of this type is not supported here: numbers \(a timestamp: read one quantile/],
  ['select current_date() from edge_logs', 'function', /CURRENT_DATE is not supported here \(DATE values are not supported/],
  ['select rand() from edge_logs', 'function', /RAND is not supported/],
  ['select generate_uuid()', 'function', /GENERATE_UUID/],
  ['select net.host(id) from edge_logs', 'function', /BigQuery's NET\.HOST is not supported/],
  ['select safe.substr(id, 1) from edge_logs', 'syntax', /The SQL does not parse/],
  ["select getenv('HOME')", 'function', /GETENV is not supported/],
  ["select read_text('/etc/passwd')", 'function', /READ_TEXT is not supported/],
  ["select `getenv`('HOME')", 'function', /GETENV is not supported/],
  ['select timestamp_trunc(timestamp, week) from edge_logs', 'function', /TIMESTAMP_TRUNC supports MICROSECOND/],
  ['select timestamp_trunc(timestamp) from edge_logs', 'function', /TIMESTAMP_TRUNC takes 2 arguments/],
  ['select timestamp_add(timestamp, 1) from edge_logs', 'function', /TIMESTAMP_ADD takes a TIMESTAMP and an INTERVAL/],
  ['select timestamp_sub(timestamp, interval 1 month) from edge_logs', 'construct', /Only INTERVAL n MICROSECOND\|MILLISECOND\|SECOND\|MINUTE\|HOUR\|DAY/],
  ["select format_timestamp('%A', timestamp) from edge_logs", 'function', /FORMAT_TIMESTAMP: the element %A is not supported/],
  ["select format_timestamp('%Y', timestamp, 'America/New_York') from edge_logs", 'function', /FORMAT_TIMESTAMP is supported in UTC only/],
  ["select json_value(event_message, '$.a[0]') from edge_logs", 'function', /no array subscripts/],
  ['select json_value(event_message, id) from edge_logs', 'function', /JSONPath as a string literal/],
  ['select any_value(r.path) from ' + U, 'function', /ANY_VALUE of a JSON field: cast it first/],
  ["select max(json_query(event_message, '$.a')) from " + U, 'function', /MAX of a JSON field: cast it first/],
  ['select greatest(r.a, r.b) from ' + U, 'function', /GREATEST of JSON values/],
  ["select regexp_extract(id, '(a)(b)') from edge_logs", 'function', /at most one capturing group/],
  ['select count(*) over () from edge_logs', 'construct', /Window functions \(OVER\) are not supported/],
  ['select * from edge_logs cross join unnest(metadata) as m', 'construct', /SELECT \* with UNNEST is not supported here: name the columns/],
  ['select id from edge_logs cross join unnest(metadata) as m with offset', 'construct', /WITH OFFSET/],
  ['select id from edge_logs, unnest([1, 2]) as x', 'construct', /UNNEST of this expression is not supported here/],
  ['select id from edge_logs left join unnest(metadata) as m on m.x = 1', 'construct', /An UNNEST joins by CROSS JOIN, a comma or LEFT JOIN \.\.\. ON TRUE/],
  ['select id from edge_logs cross join unnest(id) as m', 'construct', /UNNEST reads a JSON column or field/],
  ['select x from unnest(metadata) as x', 'query', /Unrecognized name: metadata/],
  ['select id from auth_audit_logs', 'table', /Table auth_audit_logs is not there: the tables are edge_logs, postgres_logs/],
  ['select id from `main`.`edge_logs`', 'table', /Only these tables can be read, by their bare names/],
  ['select id from myproject.logs.edge_logs', 'table', /bare names/],
  ["select * from `read_csv`('/etc/passwd')", 'table_function', /Table functions/],
  ["select * from edge_logs, glob('*')", 'table_function', /Table functions/],
  ['select id from edge_logs a join edge_logs b using (id)', 'construct', /JOIN \.\.\. USING is not supported here: write JOIN \.\.\. ON/],
  ['select id from edge_logs a, edge_logs a', 'query', /Duplicate alias a in FROM/],
  ['select edge_logs from edge_logs', 'construct', /A whole row \(edge_logs\) cannot be used as a value/],
  ['select nothing from edge_logs', 'query', /Unrecognized name: nothing \(a field of metadata is read through an unnest alias: cross join unnest\(metadata\) as m, then m\.nothing\)\./],
  [
    "select count(*) from auth_logs where status::INT >= 400 and path = '/signup'",
    'query',
    /Unrecognized name: status \(a field of metadata is read through an unnest alias: cross join unnest\(metadata\) as m, then m\.status\)/,
  ],
  ['select count(*) from auth_logs cross join unnest(metadata) as md where nope::INT >= 400', 'query', /Unrecognized name: nope \(a JSON field is read through its unnest alias: md\.nope\)/],
  [
    "select count(*) from edge_logs where timestamp > '2026-11-20'::timestamptz",
    'type',
    /CAST to TIMESTAMP WITH TIME ZONE \(::timestamptz\) is not supported here: BigQuery's TIMESTAMP is already an instant in UTC, write CAST\(x AS TIMESTAMP\)/,
  ],
  ['select cast(1 as numeric) from edge_logs', 'type', /CAST to NUMERIC is not supported here: cast to INT64, FLOAT64, BOOL, STRING, TIMESTAMP or DATETIME/],
  ['select edge_logs.nothing from edge_logs', 'query', /Name nothing not found inside edge_logs/],
  ['select id.x from edge_logs', 'query', /Cannot access field x on a value of edge_logs\.id, which is not JSON/],
  ['select id from edge_logs where id = 5', 'query', /Operator =: STRING and INT64 cannot be compared or combined/],
  ["select id from edge_logs where timestamp > 'soon'", 'query', /Could not read "soon" as a TIMESTAMP/],
  ['select id from edge_logs where timestamp + 1 > 0', 'query', /Operator \+ on a TIMESTAMP: use TIMESTAMP_ADD/],
  ['select cast(id as date) from edge_logs', 'type', /CAST to DATE is not supported here/],
  ['select cast(id as numeric) from edge_logs', 'type', /CAST to .* is not supported here/],
  ['select cast(timestamp as bool) from edge_logs', 'type', /CAST of a TIMESTAMP to this type is not supported here: cast it to STRING/],
  ['select cast(1 as timestamp)', 'type', /Only a STRING can be cast to a TIMESTAMP/],
  ["select id from edge_logs where event_message ilike '%x%'", 'construct', /BigQuery has no ILIKE/],
  ["select id from edge_logs where id like any ('a', 'b')", 'construct', /LIKE ANY/],
  ["select id from edge_logs where id in unnest(['a'])", 'construct', /IN UNNEST is not supported here/],
  ['select [1, 2]', 'construct', /ARRAY is not supported here/],
  ['select struct(1 as a)', 'construct', /is not supported here/],
  ["select date '2026-01-01'", 'construct', /DATE|literals are not supported/],
  ['with recursive t as (select 1 as n union all select n + 1 from t) select * from t', 'construct', /WITH RECURSIVE is not supported/],
  ['select id from edge_logs union select id from edge_logs', 'construct', /UNION needs ALL or DISTINCT, as in BigQuery/],
  ['select id from edge_logs except all select id from edge_logs', 'construct', /EXCEPT ALL is not supported/],
  ['select id from edge_logs union all select id, id from edge_logs', 'query', /different numbers of columns/],
  ['select id from edge_logs group by rollup(id)', 'construct', /ROLLUP/],
  ['select id from edge_logs group by 3', 'query', /GROUP BY position 3 is not in the select list \(1 to 1\)/],
  ['select id from edge_logs order by 0', 'query', /ORDER BY position 0 is not in the select list/],
  ['select id from edge_logs limit id', 'construct', /LIMIT and OFFSET take whole numbers/],
  ['select count(*) from edge_logs group by count(*)', 'construct', /Aggregate function COUNT is not allowed here/],
  ['select id from edge_logs where count(*) > 1', 'construct', /Aggregate function COUNT is not allowed here/],
  ['select sum(count(*)) from edge_logs', 'construct', /Aggregate function COUNT is not allowed here/],
  ["select id from edge_logs qualify id = 'a'", 'construct', /QUALIFY in a SELECT is not supported/],
  ['select distinct on (id) id from edge_logs', 'construct', /DISTINCT ON/],
  ['select id from edge_logs tablesample system (10 percent)', 'construct', /samples/],
  ['select id from (select id from edge_logs) as s, lateral (select 1) as l', 'construct', /LATERAL|not supported/],
  ['select id from edge_logs where exists (select 1 from nowhere)', 'table', /Table nowhere is not there/],
  ['select (select id, event_message from edge_logs)', 'query', /scalar subquery must select exactly one column/],
  ['select timestamp in (select r.path from ' + U + ') from edge_logs', 'query', /IN: expected TIMESTAMP, found JSON/],
  ["select id from edge_logs where regexp_contains(id, '\\d')", 'syntax', /Illegal escape sequence in a string literal \(\\d\)/],
  ["select 'abc", 'syntax', /The SQL does not parse/],
  ['select 1; select 2', 'one_statement', /exactly one SELECT/],
  ["insert into edge_logs (id) values ('x')", 'select_only', /Only a SELECT statement/],
  ['delete from edge_logs where true', 'select_only', /Only a SELECT statement/],
  ['select @p', 'parameter', /Query parameters \(@name\) cannot be used/],
  ['select 99999999999999999999', 'query', /out of range for INT64/],
  ['select r.`a"b` from ' + U, 'query', /cannot be read \(no quotes, backslashes or control characters\)/],
];

describe('what the BigQuery dialect refuses', () => {
  const h = new BigQueryHarness();
  beforeAll(() => h.open({}));
  afterAll(() => h.close());

  it(`refuses at least 50 constructs, each with its rule and a message naming it`, async () => {
    expect(REFUSALS.length).toBeGreaterThanOrEqual(50);
    for (const [sql, rule, message] of REFUSALS) {
      const error = await h.rows(sql).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error, sql).toBeInstanceOf(InvalidSqlError);
      const e = error as InvalidSqlError;
      expect([sql, e.status, e.code, e.rule]).toEqual([sql, 400, 'invalid_sql', rule]);
      expect(e.message, sql).toMatch(message);
    }
  });
});
