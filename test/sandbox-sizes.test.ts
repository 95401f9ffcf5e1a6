import { describe, expect, it } from 'vitest';
import { InvalidSqlError } from '../src/index';
import { SIZE_LIMITS } from '../src/sandbox/size-limits';
import { constantNumber } from '../src/sandbox/constant-number';
import { checkDuckDbText } from '../src/query/sandboxed-check';
import { neutralSqlParser } from '../src/query/sql-parser';

describe('the size check of callers\' SQL (docs/sandboxing.md, "Limits")', () => {
  // Text in, text out: the parser every instance checks callers' SQL with.
  const serialize = neutralSqlParser.serialize;
  /** 'ok', or the refusal's message when the rule is too_large (any other refusal fails the test). */
  const verdict = async (sql: string) => {
    try {
      await checkDuckDbText(sql, { tables: ['edge_logs'], maxRows: 1000 }, { serialize });
      return 'ok';
    } catch (error) {
      expect([sql, error instanceof InvalidSqlError && error.rule]).toEqual([sql, 'too_large']);
      return (error as Error).message;
    }
  };

  it('refuses each way a value grows past the limits, saying which', async () => {
    const refused: Array<[string, RegExp]> = [
      ['select sum(x) from (select unnest(range(1000000000)) as x)', /at most 100000 elements/],
      ['select unnest(generate_series(1, 1e8))', /at most 100000 elements/],
      ['select range(1000 * 1000 * 1000)', /at most 100000 elements/],
      ["select generate_series('2020-01-01'::timestamp, '2026-01-01'::timestamp, interval 1 minute)", /at most 100000 elements/],
      ['select range(len(id)) from edge_logs', /take constant arguments/],
      ['select equi_width_bins(0, 10, 1000000, false)', /too large/],
      ['select repeat(id, len(id)) from edge_logs', /size argument of repeat must be a constant/],
      ["select repeat('x', 1000000000)", /constants take more than/],
      ["select lpad(id, 1000000, 'y') from edge_logs", /more than 262144 bytes for one row/],
      ["select printf('%0900000000d', 1)", /constants take more than/],
      ["select printf('%*d', 900000000, 1)", /width or precision from an argument/],
      ["select format('{:>{}}', 'x', 900000000)", /width or precision from an argument/],
      ['select printf(id, 1) from edge_logs', /format of printf must be a constant/],
      ['select list_resize([1], 100000000)', /constants take more than/],
      ['select list_transform(range(10000), x -> range(10000))', /constants take more than/],
      ["select replace(event_message, 'a', metadata::varchar) from edge_logs", /square of the data/],
      ["select list_transform(str_split(event_message, ''), x -> metadata) from edge_logs", /square of the data/],
      ['select repeat(metadata::varchar, 100) from edge_logs', /times the size of an event/],
      ["with recursive t(s) as (select 'x' union all select s || s from t) select len(s) from t", /its own row more than once/],
      ["select list_reduce(['a', 'b'], (a, b) -> a || a)", /accumulator more than once/],
      ["with a as (select string_agg(id, '') s from edge_logs) select s || s || s || s || s from a", /aggregates' whole states/],
      ["select lpad(id, 9000, 'x') || lpad(id, 9000, 'y') as w from edge_logs", /row of its answer/],
      // A column is tracked by name through FROM, *, aliases and CTEs: a grown value stays counted.
      ['select repeat(w, 100) from (select *, metadata::varchar as w from edge_logs)', /times the size of an event/],
      ['select repeat(w, 100) from (select * from (select metadata::varchar as w from edge_logs))', /times the size of an event/],
      ["with t as (select list_transform(str_split(event_message, ''), x -> metadata) as l from edge_logs) select * from t", /square of the data/],
      ['select repeat(v, 100) from (select metadata::varchar as w from edge_logs) as s(v)', /times the size of an event/],
      ['select metadata::varchar as w, repeat(w, 100) from edge_logs', /times the size of an event/],
      // strftime's format may come from the data (either argument can be it): then it grows with it.
      ['select strftime(timestamp, metadata::varchar) || strftime(metadata::varchar, timestamp) as a, strftime(event_message, timestamp) as b from edge_logs', /times the size of an event/],
      ["select strftime(timestamp, '%Y' || repeat(metadata::varchar, 16)) as a from edge_logs", /times the size of an event/],
    ];
    for (const [sql, message] of refused) expect([sql, await verdict(sql)]).toEqual([sql, expect.stringMatching(message)]);
  });

  it('lets through what log analysis builds', async () => {
    const legit = [
      'select id, timestamp, event_message, metadata from edge_logs order by timestamp desc limit 100',
      "select json_extract_string(metadata, '$.response.status_code') s, list(id), string_agg(id, ',') from edge_logs group by 1",
      "select generate_series('2026-11-20'::timestamp, '2026-11-21'::timestamp, interval 1 minute)",
      "select list_transform(str_split(event_message, ' '), x -> upper(x)) from edge_logs",
      "select regexp_replace(event_message, '\\d+', 'N', 'g'), replace(id, '-', '') from edge_logs",
      "select lpad(cast(count(*) as varchar), 10, '0'), printf('%5d %s', 1, 'a'), format('{:>10}', 'b') from edge_logs",
      'select quantile_cont(len(event_message), [0.5, 0.9, 0.99]), median(len(id)) from edge_logs',
      'select [x * 2 for x in range(100) if x > 3], list_reduce([1, 2, 3], (a, b) -> a + b)',
      'with recursive t(n) as (select 1 union all select n + 1 from t where n < 10) select * from t',
      'select list(id) over (order by timestamp rows between 5 preceding and current row) from edge_logs',
      'select a.id, b.id from edge_logs a, edge_logs b limit 10',
      // The BigQuery translation's shape: one unnest per level, each level a column of its own
      // beside the row it repeats (docs/sandboxing.md, "Limits"): no value holds another's elements.
      `select json_extract_string(a2, '$.path') from (select *, unnest(json_extract(a1, '$.request[*]')) as a2
         from (select *, unnest(json_extract(metadata, '$[*]')) as a1 from edge_logs))`,
      'select cast(metadata as bigint) * 2, try_cast(event_message as timestamp) from edge_logs',
      // A constant format bounds strftime's value whatever the time is read from (16 bytes a character at most).
      `select ${Array.from({ length: 12 }, (_, i) => `strftime(e${i}."timestamp", '%Y-%m-%d %H:00') as h${i}`).join(', ')} from ${Array.from({ length: 12 }, (_, i) => `edge_logs as e${i}`).join(', ')} group by all`,
      `select strftime(edge_logs."timestamp", '%Y-%m-%d'), count(*) from edge_logs group by strftime(edge_logs."timestamp", '%Y-%m-%d')`,
    ];
    for (const sql of legit) expect([sql, await verdict(sql)]).toEqual([sql, 'ok']);
  });

  it('bounds the aggregates and list functions that can repeat a value: a count, repeated indexes, names and quantiles', async () => {
    const many = (n: number, each: (i: number) => string) => Array.from({ length: n }, (_, i) => each(i)).join(', ');
    const refused: Array<[string, RegExp]> = [
      // max(x, n) and max_by(x, y, n) keep n values: an aggregate's whole state, as list does.
      ['with a as (select max(id, 1000) m from edge_logs) select m || m || m || m || m from a', /aggregates' whole states/],
      ['with a as (select max_by(id, timestamp, 1000) m from edge_logs) select m || m || m || m || m from a', /aggregates' whole states/],
      [
        'select max(id, 1000) over () as a, max(id, 1000) over () as b, min(id, 9) over () as c, arg_min(id, timestamp, 9) over () as d, min_by(id, timestamp, 9) over () as e from edge_logs',
        /aggregates' whole states/,
      ],
      // One copy for each index, each group name, each quantile asked for.
      [`select list_select([event_message], [${many(300, () => '1')}]) from edge_logs`, /times the size of an event/],
      [`select regexp_extract(event_message, '(a)', [${many(300, (i) => `'g${i}'`)}]) from edge_logs`, /times the size of an event/],
      [`select quantile_disc(event_message, [${many(300, (i) => `${i / 300}`)}]) from edge_logs`, /times the size of an event/],
      [`select quantile_disc(event_message, [${many(300, (i) => `${i / 300}`)}]) over () from edge_logs`, /times the size of an event/],
      // Indexes that grow with the data, of a list that does too.
      ["select list_select(str_split(event_message, ''), list_transform(str_split(id, ''), x -> 1)) from edge_logs", /square of the data/],
    ];
    for (const [sql, message] of refused) expect([sql.slice(0, 80), await verdict(sql)]).toEqual([sql.slice(0, 80), expect.stringMatching(message)]);
    // The same functions without a count, or with a few names or quantiles: one value of the rows each.
    const legit = [
      'with a as (select max(id) m, max_by(id, timestamp) b, arg_min(event_message, timestamp) c from edge_logs) select m || m || m || m || m, b || b || b, c || c from a',
      "select list_select(str_split(event_message, ' '), [1, 2]), regexp_extract(event_message, '(\\w+) (\\w+)', ['a', 'b']), regexp_extract(event_message, '(\\w+)', 1) from edge_logs",
      'select quantile_disc(event_message, [0.5, 0.9]), quantile_disc(event_message, 0.5), max(id) over (), lag(id) over (order by timestamp) from edge_logs',
    ];
    for (const sql of legit) expect([sql, await verdict(sql)]).toEqual([sql, 'ok']);
  });

  it('reads constant arguments as DuckDB would: numbers, arithmetic, times and intervals (a month as 28 days)', async () => {
    const first = async (expression: string) => {
      const tree = JSON.parse(await serialize(`select ${expression}`));
      return constantNumber(tree.statements[0].node.select_list[0]);
    };
    expect(await first('1000 * 1000 * 1000')).toBe(1e9);
    expect(await first('-5')).toBe(-5);
    expect(await first('1e9')).toBe(1e9);
    expect(await first('interval 1 hour')).toBe(3.6e9);
    expect(await first("interval '90 minutes'")).toBe(5.4e9);
    expect(await first('interval 1 month')).toBe(28 * 8.64e10);
    expect(await first("'2026-11-21'::timestamp")).toBe(Date.parse('2026-11-21T00:00:00Z') * 1000);
    expect(await first('len(id)')).toBeNull();
    expect(SIZE_LIMITS.listElements).toBe(100_000);
  });
});
