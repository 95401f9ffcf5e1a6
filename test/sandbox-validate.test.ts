import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { neutralSqlParser } from '../src/query/sql-parser';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { InvalidSqlError } from '../src/index';
import { ALLOWED_FUNCTIONS, ALLOWED_WINDOW_FUNCTIONS, FUNCTION_GROUPS, sizeRuleOf, type FunctionGroup, type SizeRule } from '../src/sandbox/allowed-functions';
import { composeSandboxedSql, splitEndpointSql } from '../src/sandbox/compose-sandboxed-sql';
import { judgeCallerSql, MAX_CALLER_SQL_LENGTH, sandboxTexts } from '../src/sandbox/validate-caller-sql';
import { checkDuckDbText } from '../src/query/sandboxed-check';

const TABLES = ['edge_logs', 'postgres_logs'];

describe("a caller's SQL checked (checkDuckDbText: the sandbox's texts, parsed, judged)", () => {
  let instance: DuckDBInstance;
  let connection: DuckDBConnection;
  // Text in, text out: the parser every instance checks callers' SQL with.
  const serialize = neutralSqlParser.serialize;
  const check = (sql: string) => checkDuckDbText(sql, { tables: TABLES, maxRows: 1000 }, { serialize });
  /** The rule a text breaks, or 'ok'. */
  const ruleOf = async (sql: string) => {
    try {
      await check(sql);
      return 'ok';
    } catch (error) {
      if (!(error instanceof InvalidSqlError)) throw error;
      expect(error.status).toBe(400);
      return error.rule;
    }
  };

  beforeAll(async () => {
    instance = await DuckDBInstance.create(':memory:');
    connection = await instance.connect();
  });
  afterAll(() => {
    connection.closeSync();
    instance.closeSync();
  });

  it('accepts what log analysis needs: projections, filters, aggregates, joins, own and recursive CTEs, windows, regex, JSON, lists', async () => {
    const legit = [
      'select id, timestamp, event_message from edge_logs order by timestamp desc limit 100',
      "SELECT count(*) AS n, date_trunc('hour', timestamp) AS h FROM edge_logs WHERE event_message ILIKE '%error%' GROUP BY ALL ORDER BY h",
      "select metadata->>'$.request.path' as path, count(*) from edge_logs group by 1 having count(*) > 1",
      "select regexp_extract(event_message, '(\\d{3})', 1) as status from edge_logs where regexp_matches(event_message, '5\\d\\d') or event_message ~ 'x.*'",
      'select e.id, p.id from edge_logs e left join postgres_logs p on p.id = e.id',
      "with recent as (select * from edge_logs where timestamp > timestamp '2026-01-01') select count(*) from recent",
      'with a as (select id from edge_logs), b as (select id from a) select * from b union all select id from a',
      'with recursive t(n) as (select 1 union all select n + 1 from t where n < 10) select * from t',
      'select id, row_number() over (partition by event_message order by timestamp desc) rn, lag(timestamp) over w from edge_logs window w as (order by timestamp) qualify rn = 1',
      "select quantile_cont(len(event_message), [0.5, 0.99]), approx_count_distinct(id), string_agg(id, ',' order by id) from edge_logs",
      "select * exclude (metadata), json_extract_string(metadata, '$.response.status_code')::int as status from edge_logs",
      "select list_filter([1, 2, 3], x -> x > 1), [x * 2 for x in [1, 2]], {'a': 1}.a, coalesce(null, 1), ifnull(null, 2), if(true, 1, 2), nullif(1, 1)",
      "select strftime(timestamp, '%Y-%m-%d'), epoch_ms(timestamp), timestamp + interval 1 hour, extract(hour from timestamp) from edge_logs",
      'select exists (select 1 from edge_logs), (select max(timestamp) from edge_logs), id in (select id from postgres_logs) from edge_logs',
      "select * from (values (1, 'a'), (2, 'b')) v(n, s)",
      'select "ID", "Timestamp" from EDGE_LOGS',
      'from edge_logs select id',
      'select id from edge_logs;',
      "select count(*) filter (where event_message like '%GET%'), sum(case when id is null then 0 else 1 end) from edge_logs",
      'select distinct on (event_message) event_message, id from edge_logs order by event_message, timestamp',
      'select upper(id) collate nocase from edge_logs using sample 10 percent (bernoulli)',
      "select * replace (upper(id) as id), columns('^event') from edge_logs",
      "select id from edge_logs where event_message similar to 'GET.*' and event_message glob 'G*' union by name select id from postgres_logs",
      "select if(id is null, 'none', id), extract(year from timestamp), [upper(x) for x in ['a']], try_cast(id as int) from edge_logs",
      'with x as materialized (select * from edge_logs), y as not materialized (select 1) select * from x limit 10% offset 2',
      'with recursive t(n) using key (n) as (select 1 union select n + 1 from t where n < 3) select * from t',
      'select count(*) from edge_logs where timestamp > $now - interval 1 hour',
    ];
    for (const sql of legit) expect([sql, await ruleOf(sql)]).toEqual([sql, 'ok']);
  });

  it('keys texts that differ in spaces, comments and keyword case alike, other texts apart', async () => {
    const a = await check('select count(*) from edge_logs');
    const b = await check('SELECT   COUNT(*)\n-- how many\nFROM edge_logs ;');
    const c = await check('select count(*) from postgres_logs');
    expect(b.key).toBe(a.key);
    expect(c.key).not.toBe(a.key);
    expect(b.sql).toBe('SELECT   COUNT(*)\n-- how many\nFROM edge_logs');
  });

  it('names the rule each refusal breaks', async () => {
    const cases: Array<[string, string]> = [
      ['', 'syntax'],
      ['selec 1', 'syntax'],
      ["select '", 'syntax'],
      ['select 1; select 2', 'one_statement'],
      ["set memory_limit = '1GB'", 'select_only'],
      ["select 1; attach 'x.db'", 'select_only'],
      ["select * from read_text('/etc/passwd')", 'table_function'],
      ['select * from other_table', 'table'],
      ['select * from main.edge_logs', 'table'],
      ["select getenv('HOME')", 'function'],
      ['select current_user', 'function'],
      ['select $1', 'parameter'],
      ['select * from edge_logs where id = ?', 'parameter'],
      // $now alone, the request's clock, is read (CURRENT_TIMESTAMP() of the BigQuery dialect): no other name, nor a second one beside it.
      ['select $max_rows', 'parameter'],
      ['select $now, $project', 'parameter'],
      ['select $NOW', 'parameter'],
      ['select 1::my_enum', 'type'],
      ['select * from (describe edge_logs)', 'construct'],
      ['select x collate de from edge_logs', 'function'],
      [`select '${'x'.repeat(MAX_CALLER_SQL_LENGTH)}'`, 'too_long'],
      [`select ${'not '.repeat(3000)}true`, 'syntax'],
      [`select * from ${'(from '.repeat(2000)}edge_logs${')'.repeat(2000)}`, 'syntax'],
    ];
    for (const [sql, rule] of cases) expect([sql.slice(0, 60), await ruleOf(sql)]).toEqual([sql.slice(0, 60), rule]);
  });

  it('sees CTE names only where DuckDB would: a CTE of a subquery, a later CTE or a CTE itself outside its recursive part are not in scope', async () => {
    // Each would make DuckDB look the name up in the catalog (a system view, or a file by replacement scan).
    const outOfScope = [
      'select * from (with duckdb_tables as (select 1) select 1), duckdb_tables',
      '(with duckdb_views as (select 1) select 1) union all select * from duckdb_views',
      'with a as (select * from duckdb_settings), duckdb_settings as (select 1) select * from a',
      'with duckdb_settings as (select * from duckdb_settings) select * from duckdb_settings',
      'with recursive duckdb_settings as (select * from duckdb_settings union all select 1) select 1',
      "select * from (select 1) where exists (with 'x.csv' as (select 1) select 1) and exists (select * from 'x.csv')",
    ];
    for (const sql of outOfScope) expect([sql, await ruleOf(sql)]).toEqual([sql, 'table']);
    // The same names in scope: CTEs, whatever their names (they shadow the catalog and files).
    const inScope = [
      'with duckdb_tables as (select 1) select * from (select * from duckdb_tables)',
      'with read_text as (select 1 as x) select * from read_text',
      'with "x.csv" as (select 1) select * from \'x.csv\'',
      'with edge_logs as (select * from edge_logs where id is not null) select count(*) from edge_logs',
    ];
    for (const sql of inScope) expect([sql, await ruleOf(sql)]).toEqual([sql, 'ok']);
  });

  it('allows only functions DuckDB has, and none that reads files, settings, the environment, the catalog or the clock', async () => {
    const known = new Set((await connection.runAndReadAll("SELECT DISTINCT lower(function_name) FROM duckdb_functions() WHERE schema_name = 'main'")).getRows().map((r) => String(r[0])));
    expect([...ALLOWED_FUNCTIONS, ...ALLOWED_WINDOW_FUNCTIONS].filter((name) => !known.has(name))).toEqual([]);
    const stateful = [
      'getenv',
      'current_setting',
      'getvariable',
      'current_database',
      'current_schema',
      'current_query',
      'version',
      'now',
      'today',
      'get_current_timestamp',
      'random',
      'setseed',
      'uuid',
      'gen_random_uuid',
      'nextval',
      'currval',
      'txid_current',
      'read_text',
      'read_blob',
      'read_csv',
      'glob',
      'json_serialize_sql',
      'json_deserialize_sql',
      'sleep_ms',
      'error',
      'write_log',
      'le_timestamp',
      'in_search_path',
      'parse_filename',
      'stats',
      'current_localtimestamp',
      'enum_range',
      'list_aggregate',
      'array_aggregate',
      'list_aggr',
      'array_aggr',
      'aggregate',
    ];
    expect(stateful.filter((name) => ALLOWED_FUNCTIONS.has(name) || ALLOWED_WINDOW_FUNCTIONS.has(name))).toEqual([]);
  });

  it('lists in docs/sandboxing.md exactly the functions it allows', () => {
    const docs = readFileSync(new URL('../docs/sandboxing.md', import.meta.url), 'utf8');
    const section = docs.slice(docs.indexOf('\n## Functions'), docs.indexOf('\n## Limits'));
    const listed = section
      .split('\n')
      .filter((l) => l.startsWith('- **'))
      .flatMap((l) => [...l.split('**: ')[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.toLowerCase()));
    expect(new Set(listed)).toEqual(new Set([...ALLOWED_FUNCTIONS, ...ALLOWED_WINDOW_FUNCTIONS]));
  });
});

describe('the sandbox judges parse trees it is handed, and calls nothing back (judgeCallerSql)', () => {
  const rules = { tables: TABLES, maxRows: 10 };
  const texts = sandboxTexts('select count(*) from edge_logs;;  ', 10);
  const tree = (statements: unknown[]) => ({ json: JSON.stringify({ error: false, statements }) });
  const ruleOf = (alone: Parameters<typeof judgeCallerSql>[1]['alone'], wrapped = alone) => {
    try {
      judgeCallerSql(texts, { alone, wrapped }, rules);
      return 'ok';
    } catch (error) {
      if (!(error instanceof InvalidSqlError)) throw error;
      return error.rule;
    }
  };

  it('says which texts to parse: as sent (trailing semicolons cut) and inside the wrapper that caps its rows', () => {
    expect(texts).toEqual({ sql: 'select count(*) from edge_logs', wrapped: 'SELECT * FROM (\nselect count(*) from edge_logs\n) AS sandboxed LIMIT 10' });
    expect(() => sandboxTexts('  ', 10)).toThrow(expect.objectContaining({ rule: 'syntax' }));
    expect(() => sandboxTexts('x'.repeat(MAX_CALLER_SQL_LENGTH + 1), 10)).toThrow(expect.objectContaining({ rule: 'too_long' }));
  });

  it('turns what the parser said into the rule broken: its failure, its refusal of a statement that is no SELECT, two statements', () => {
    expect(ruleOf({ failed: new Error('the parser went away') })).toBe('syntax');
    expect(ruleOf({ json: 'not json' })).toBe('syntax');
    expect(ruleOf({ json: JSON.stringify({ error: true, error_message: 'Parser Error: syntax error at or near "selec"' }) })).toBe('syntax');
    expect(ruleOf({ json: JSON.stringify({ error: true, error_message: 'Not implemented Error: Only SELECT statements can be serialized to json!' }) })).toBe('select_only');
    expect(ruleOf(tree([{}, {}]))).toBe('one_statement');
    expect(ruleOf(tree([{ node: {} }]), tree([]))).toBe('one_statement');
  });

  it("judges the tree of the wrapped text it is handed, with the same verdict and key as the parser's own", async () => {
    const parsed = { alone: { json: await neutralSqlParser.serialize(texts.sql) }, wrapped: { json: await neutralSqlParser.serialize(texts.wrapped) } };
    const judged = judgeCallerSql(texts, parsed, rules);
    expect(judged).toEqual(await checkDuckDbText('select count(*) from edge_logs;;  ', rules, neutralSqlParser));
  });
});

describe('composeSandboxedSql', () => {
  it("keeps the endpoint's WITH clause and puts the caller's query under the max rows, on lines of its own", () => {
    const endpoint = '-- comment\nWITH a AS (SELECT \')\' AS x, "(" FROM t WHERE p = $p), "B c"(y) AS MATERIALIZED (SELECT $$)$$ -- )\n)\nSELECT * FROM a ORDER BY 1';
    expect(splitEndpointSql(endpoint).tables).toEqual(['a', 'b c']);
    expect(composeSandboxedSql(endpoint, 'select 1 -- note', 5)).toBe(
      '-- comment\nWITH a AS (SELECT \')\' AS x, "(" FROM t WHERE p = $p), "B c"(y) AS MATERIALIZED (SELECT $$)$$ -- )\n)\nSELECT * FROM (\nselect 1 -- note\n) AS sandboxed LIMIT 5',
    );
    expect(() => splitEndpointSql('SELECT 1')).toThrow(/must start with WITH/);
  });
});

// The table's type tests: `npm test` runs `tsc --noEmit` over this file, so each `@ts-expect-error`
// below (an error that must be there) is checked by the compiler.
describe('the table of allowed functions (docs/sandboxing.md, "Functions" and "Limits")', () => {
  it('cannot allow a function without its size rule: a type error', () => {
    // @ts-expect-error a function without a size rule
    const withoutRule: FunctionGroup = { lower: undefined };
    // @ts-expect-error a rule that is not one of the size rules
    const unknownRule: FunctionGroup = { lower: 'args' };
    const ruled: FunctionGroup = { lower: { scale: 3 }, md5: 'fixed', string_agg: 'collect', max: { top: 1 } };
    expectTypeOf(FUNCTION_GROUPS.string.lower).toMatchTypeOf<SizeRule>();
    expect([withoutRule.lower, unknownRule.lower, ruled.lower]).toEqual([undefined, 'args', { scale: 3 }]);
  });

  it('gives every allowed function its own rule, declared once, and refuses a name without one', () => {
    const declared = Object.values(FUNCTION_GROUPS).flatMap((group: FunctionGroup) => Object.entries(group));
    const names = declared.map(([name]) => name);
    expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
    expect(names.filter((name) => name !== name.toLowerCase())).toEqual([]);
    expect(new Set(names)).toEqual(new Set([...ALLOWED_FUNCTIONS, ...ALLOWED_WINDOW_FUNCTIONS]));
    for (const [name, rule] of declared) expect([name, sizeRuleOf(name)]).toEqual([name, rule]);
    expect(() => sizeRuleOf('getenv')).toThrow(InvalidSqlError);
    expect(() => sizeRuleOf('getenv')).toThrow(expect.objectContaining({ code: 'invalid_sql', rule: 'function' }));
  });

  it('bounds what aggregates keep by what they keep: a whole state, one value, or one per element asked for', () => {
    // Aggregates that grow with the rows they see are never "the size of their arguments".
    for (const name of ['list', 'array_agg', 'string_agg', 'group_concat', 'listagg', 'histogram', 'json_group_array', 'json_group_object', 'approx_top_k'])
      expect([name, sizeRuleOf(name)]).toEqual([name, 'collect']);
    // One value of the rows, or a list of n given n.
    for (const name of ['min', 'max']) expect([name, sizeRuleOf(name)]).toEqual([name, { top: 1 }]);
    for (const name of ['min_by', 'max_by', 'arg_min', 'arg_max', 'argmin', 'argmax']) expect([name, sizeRuleOf(name)]).toEqual([name, { top: 2 }]);
    for (const name of ['quantile', 'quantile_disc', 'quantile_cont', 'approx_quantile', 'reservoir_quantile']) expect([name, sizeRuleOf(name)]).toEqual([name, { each: 1 }]);
  });
});
