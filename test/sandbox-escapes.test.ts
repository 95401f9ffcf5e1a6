import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
import { neutralSqlParser } from '../src/query/sql-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndpoints, type Endpoints } from '../src/index';
import { createHandler } from '../src/http';
import { toNodeListener } from '../src/node';
import { checkBigQueryText } from '../src/query/sandboxed-check';
import { InvalidSqlError } from '../src/errors';
import { MAX_CALLER_SQL_LENGTH } from '../src/sandbox/validate-caller-sql';
import { SCHEMA, TABLES } from './support/bigquery-harness';
import { listen, sendRequest } from './support/http';
import { edgeEvent, tempDir, writeLines } from './support/log-files';

const NOW = '2026-11-21T12:00:00.000000Z';
const KEY = 'escape-key';
const MEMORY_LIMIT = '200MB';
const QUERY = '/api/endpoints/logs.all?project=alpha&project_tier=PRO';

/** Readers of files, globs, the catalog and other queries: every one a table function. */
const READERS = [
  'read_text',
  'read_blob',
  'read_csv',
  'read_csv_auto',
  'read_json',
  'read_json_auto',
  'read_json_objects',
  'read_ndjson',
  'read_ndjson_objects',
  'read_parquet',
  'parquet_scan',
  'parquet_metadata',
  'parquet_schema',
  'glob',
  'sniff_csv',
  'query_table',
];

/** Statements other than SELECT (`F` is the secret file). */
const STATEMENTS = [
  "ATTACH 'F' AS s",
  "COPY (SELECT 1) TO 'F'",
  "COPY edge_logs FROM 'F'",
  "SET memory_limit = '1GB'",
  "SET VARIABLE v = getenv('HOME')",
  'PRAGMA database_list',
  'PRAGMA show_tables',
  'INSTALL httpfs',
  'LOAD httpfs',
  'CALL pragma_version()',
  "EXPORT DATABASE 'F'",
  "IMPORT DATABASE 'F'",
  'PREPARE p AS SELECT 1',
  'EXECUTE p',
  'DETACH s',
  'CREATE TABLE t AS SELECT 1',
  'DROP TABLE edge_logs',
  'USE memory',
  'RESET memory_limit',
  'CHECKPOINT',
  'SUMMARIZE edge_logs',
  'DESCRIBE edge_logs',
  'SHOW TABLES',
  'PIVOT edge_logs ON id USING count(*)',
  "CREATE MACRO m() AS getenv('HOME')",
  'INSERT INTO edge_logs VALUES (1)',
];

/** Functions that read the environment, settings, the catalog, files or state, and our own macros. */
const FUNCTIONS = [
  "getenv('LE_SANDBOX_SECRET')",
  "current_setting('memory_limit')",
  "current_setting('home_directory')",
  "getvariable('v')",
  'version()',
  'current_database()',
  "json_serialize_sql('select 1')",
  "nextval('s')",
  "le_timestamp('1')",
  'sleep_ms(1)',
  "error('x')",
  "write_log('x')",
  'current_schemas(true)',
  "pg_catalog.current_setting('threads')",
  "main.getenv('HOME')",
  "system.main.getenv('HOME')",
  '"GETENV"(\'HOME\')',
  'random()',
  'now()',
  'txid_current()',
  "list_aggregate([1], 'getenv')",
];

/** Where a function can hide in a SELECT. */
const POSITIONS: Array<(f: string) => string> = [
  (f) => `select ${f}`,
  (f) => `select id from edge_logs where ${f} is not null`,
  (f) => `select id from edge_logs order by ${f}`,
  (f) => `with x as (select ${f} as v) select * from x`,
  (f) => `select (select ${f}) as v`,
  (f) => `select list_transform([1], x -> ${f})`,
  (f) => `select count(*) over (partition by ${f}) from edge_logs`,
  (f) => `select case when true then ${f} end`,
];

describe('sandbox escape attempts over HTTP', () => {
  const tmp = tempDir();
  const secretFile = tmp.path('secret.txt');
  const secret = `SECRET-FILE-${randomBytes(6).toString('hex')}`;
  const envSecret = `ENV-SECRET-${randomBytes(6).toString('hex')}`;
  let ep: Endpoints;
  let server: Awaited<ReturnType<typeof listen>>;
  /** Strings no answer may hold: file contents, an environment value, settings, paths. */
  let forbidden: string[];

  beforeAll(async () => {
    process.env.LE_SANDBOX_SECRET = envSecret;
    writeFileSync(secretFile, `${secret}\nroot:x:0:0:root:/root:/bin/bash\n`);
    writeFileSync(tmp.path('secret.csv'), `a,b\n${secret},1\n`);
    const events = [];
    for (let i = 0; i < 300; i++) events.push(edgeEvent({ project: i % 2 ? 'alpha' : 'beta', timestamp: new Date(Date.parse(NOW) - i * 60_000).toISOString() }));
    writeLines(tmp.path('edge', 'a.ndjson'), events);
    ep = await createEndpoints({
      sources: { edgeLogs: tmp.path('edge', '*.ndjson') },
      now: () => new Date(NOW),
      sandboxable: ['logs.all'],
      duckdb: { memoryLimit: MEMORY_LIMIT, threads: 1 },
      // Bombs run into it; far above what any refusal takes (they never reach the engine).
      limits: { queryTimeoutMs: 3000 },
    });
    server = await listen(toNodeListener(createHandler(ep, { apiKeys: [KEY] })));
    // The settings as DuckDB shows them (memory limit, temp directory), read from a twin instance.
    const twin = await DuckDBInstance.create(':memory:', { memory_limit: MEMORY_LIMIT, threads: '1' });
    const connection = await twin.connect();
    const settings = (await connection.runAndReadAll("SELECT value FROM duckdb_settings() WHERE name IN ('memory_limit', 'temp_directory') AND value <> ''")).getRows();
    connection.closeSync();
    twin.closeSync();
    forbidden = [secret, envSecret, 'root:x:0:0', tmp.dir, process.cwd(), ...settings.map((r) => String(r[0]))];
    expect(forbidden).toHaveLength(7);
  });
  afterAll(async () => {
    delete process.env.LE_SANDBOX_SECRET;
    await server.close();
    await ep.close();
    tmp.cleanup();
  });

  const attempts = (): string[] => {
    const F = secretFile;
    const out: string[] = [];
    for (const r of READERS) {
      out.push(
        `select * from ${r}('${F}')`,
        `select * from "${r}"('${F}')`,
        `SELECT * FROM ${r.toUpperCase()}('${F}')`,
        `select * from main.${r}('${F}')`,
        `select * from system.main.${r}('${F}')`,
        `select * from ${r} /* comment */ ('${F}')`,
        `select * from edge_logs, ${r}('${F}')`,
        `select (select count(*) from ${r}('${F}')) as n`,
        `with x as (select * from ${r}('${F}')) select * from x`,
        // A CTE named like the reader does not make the call a CTE.
        `with ${r} as (select 1 as x) select * from ${r}('${F}')`,
      );
    }
    out.push(
      // File names, globs and quoted identifiers as tables (DuckDB's replacement scans).
      `select * from '${F}'`,
      `select * from "${F}"`,
      `from '${F}'`,
      `select * from '${tmp.path('secret.csv')}' as t`,
      `select * from edge_logs join '${F}' on true`,
      `select * from '${tmp.dir}/edge/*.ndjson'`,
      `select * from '${tmp.dir}/**/*'`,
      `select * from U&"\\0072ead_text"('${F}')`,
      `select * from (select * from '${F}')`,
      // The catalog and system views, under every qualification.
      'select * from duckdb_settings()',
      'select * from duckdb_settings',
      'select * from "DUCKDB_SETTINGS"()',
      'select * from duckdb_tables',
      'select * from duckdb_views()',
      'select * from duckdb_extensions()',
      'select * from duckdb_secrets()',
      'select * from duckdb_databases()',
      'select * from duckdb_functions()',
      'select * from pragma_database_list',
      'select * from pragma_version()',
      "select * from which_secret('x', 's3')",
      'select * from information_schema.tables',
      'select * from "information_schema"."columns"',
      'select * from pg_catalog.pg_settings',
      'select * from sqlite_master',
      'select * from system.main.duckdb_settings',
      'select * from memory.main.edge_logs',
      // The memory tables' own database (managed storage attaches it to the engine's DuckDB).
      'select * from le_memory.edge_logs',
      'select * from le_memory.main.newest_edge_logs',
      'select * from main.edge_logs',
      'select * from temp.main.t',
      'select * from edge_logs at (version => 1)',
      // Prepared-statement tricks and queries in strings.
      'select $1',
      'select ?',
      'select * from edge_logs where id = $project',
      "select * from query('select getenv(''HOME'')')",
      "select * from query_table('edge_logs')",
      'execute p',
      "prepare p as select * from read_text('x')",
      // CTE scope tricks: a CTE seen only inside its subquery, a later sibling, itself.
      'select * from (with duckdb_tables as (select 1) select 1), duckdb_tables',
      '(with duckdb_views as (select 1) select 1) union all select * from duckdb_views',
      'with a as (select * from duckdb_settings), duckdb_settings as (select 1) select * from a',
      'with duckdb_settings as (select * from duckdb_settings) select * from duckdb_settings',
      // Types of the catalog, SQL value functions, collations.
      "select 'x'::my_type",
      'select current_user',
      'select session_user',
      'select current_schema',
      'select user',
      "select 'a' collate de_de",
      'select * from (summarize edge_logs)',
      'select * from (describe edge_logs)',
    );
    for (const s of STATEMENTS) out.push(s, `select 1; ${s}`, `${s}; select 1`);
    out.push('select 1; select 2', 'select 1;;select 2', 'select 1 /* ; */ ; select * from edge_logs');
    for (const f of FUNCTIONS) for (const position of POSITIONS.slice(0, 3)) out.push(position(f));
    for (const position of POSITIONS) out.push(position("getenv('LE_SANDBOX_SECRET')"), position("current_setting('memory_limit')"));
    out.push(`select '${'x'.repeat(MAX_CALLER_SQL_LENGTH)}'`, `select ${'1,'.repeat(60_000)}1`);
    return out;
  };

  it('answers at least 150 attempts 400 invalid_sql, with nothing of the server in any answer', async () => {
    const list = attempts();
    expect(list.length).toBeGreaterThanOrEqual(150);
    for (const sql of list) {
      const answer = await send(server.port, 'POST', QUERY, JSON.stringify({ sql }));
      expect([sql.slice(0, 120), answer.status, JSON.parse(answer.body).error?.code]).toEqual([sql.slice(0, 120), 400, 'invalid_sql']);
      expectNothingLeaked(answer, forbidden);
    }
    // The query string and a GET body go through the same rules.
    for (const sql of list.filter((s) => s.length < 2000).slice(0, 40)) {
      for (const answer of [await send(server.port, 'GET', `${QUERY}&sql=${encodeURIComponent(sql)}`), await send(server.port, 'GET', QUERY, JSON.stringify({ sql }))]) {
        expect([sql, answer.status]).toEqual([sql, 400]);
        expectNothingLeaked(answer, forbidden);
      }
    }
  });

  it('stops recursive CTE bombs and huge cross joins at the time limit (504), and goes on answering', async () => {
    const bombs = [
      'with recursive t(n) as (select 1 union all select n + 1 from t) select count(*) from t',
      'with recursive t(n) as (select 1 union all select n from t) select max(n) from t',
      'select count(*) from edge_logs a, edge_logs b, edge_logs c, edge_logs d, edge_logs e',
      'select count(distinct a.id || b.id || c.id || d.id) from edge_logs a cross join edge_logs b cross join edge_logs c cross join edge_logs d',
    ];
    for (const sql of bombs) {
      const answer = await send(server.port, 'POST', QUERY, JSON.stringify({ sql }));
      expect([sql, answer.status, JSON.parse(answer.body).error?.code]).toEqual([sql, 504, 'timeout']);
      expectNothingLeaked(answer, forbidden);
    }
    const after = await send(server.port, 'POST', QUERY, JSON.stringify({ sql: 'select count(*) as n from edge_logs' }));
    expect([after.status, JSON.parse(after.body).result]).toEqual([200, [{ n: 150 }]]);
  });

  it('names no path or secret in the errors of queries that run and fail', async () => {
    const failing = [
      'select nope from edge_logs',
      'select cast(event_message as int) from edge_logs',
      `select cast('${secretFile}' as int)`,
      "select json_extract('not json', '$.x')",
      'select 1 / 0 :: int',
      "select regexp_matches('a', '(')",
      'select [1][0:1e20::bigint]',
    ];
    for (const sql of failing) {
      const answer = await send(server.port, 'POST', QUERY, JSON.stringify({ sql }));
      expect([sql, answer.status >= 200 && answer.status < 500]).toEqual([sql, true]);
      expectNothingLeaked(answer, forbidden);
    }
  });
});

describe('sandbox escape attempts spelled in BigQuery', () => {
  const tmp = tempDir();
  const secretFile = tmp.path('secret.txt');
  const secret = `SECRET-FILE-${randomBytes(6).toString('hex')}`;
  // Text in, text out: the parser every instance checks callers' SQL with.
  const serialize = neutralSqlParser.serialize;

  beforeAll(() => writeFileSync(secretFile, `${secret}\n`));
  afterAll(() => tmp.cleanup());

  const attempts = (F: string): string[] => [
    // Backticks per segment: a reader in quotes, a schema in quotes, a dotted name in one pair.
    `select * from \`read_csv\`('${F}')`,
    `select * from \`read_text\`('${F}')`,
    'select * from `main`.`edge_logs`',
    'select * from `main.edge_logs`',
    'select * from `system`.`main`.`duckdb_settings`',
    'select * from `duckdb_settings`()',
    `select \`getenv\`('HOME')`,
    `select \`main\`.\`getenv\`('HOME')`,
    // UNNEST of files, globs and other table functions.
    `select x from edge_logs cross join unnest(read_text('${F}')) as x`,
    "select x from edge_logs, unnest(glob('*')) as x",
    "select x from unnest(glob('*')) as x",
    `select x from unnest(read_csv('${F}')) as x`,
    `select x from edge_logs left join unnest(read_blob('${F}')) as x on true`,
    'select x from edge_logs cross join unnest(range(10)) as x',
    `select x from edge_logs cross join unnest(split(getenv('HOME'), '/')) as x`,
    // :: casts to table functions and catalog types.
    `select '${F}'::read_text`,
    `select id from edge_logs where id = ('${F}'::read_csv)`,
    "select 'x'::my_type",
    `select cast('${F}' as read_text)`,
    // SAFE_CAST of subqueries of table functions.
    `select safe_cast((select * from read_csv('${F}')) as string)`,
    `select safe_cast((select content from read_text('${F}')) as int64)`,
    `select cast((select count(*) from glob('*')) as string)`,
    `select ifnull((select content from read_text('${F}')), 'x')`,
    // Functions outside the allowlist, BigQuery style.
    "select GETENV('HOME')",
    "select current_setting('memory_limit')",
    `select read_text('${F}')`,
    'select SESSION_USER()',
    'select CURRENT_DATE()',
    `select json_value(read_text('${F}'), '$')`,
    `select regexp_contains(event_message, read_text('${F}')) from edge_logs`,
    'select version()',
    `select countif(getenv('HOME') is null) from edge_logs`,
    `select id from edge_logs order by getenv('HOME')`,
    "select `query`('select 1')",
    // Comments hiding text.
    "select id from edge_logs -- ; select getenv('HOME')\n where getenv('HOME') is null",
    `select id from edge_logs /* */ , read_csv('${F}')`,
    "select id from edge_logs where id = '--' or getenv('x') is null",
    "select id from edge_logs # comment\n, glob('*')",
    `select id /* ' */ from edge_logs, read_text('${F}') /* ' */`,
    // Unicode look-alikes: Cyrillic letters, fullwidth letters, a zero-width space.
    'select * from \u0435dge_logs',
    `select * from re\u0430d_csv('${F}')`,
    '\u0455elect id from edge_logs',
    '\uff53\uff45\uff4c\uff45\uff43\uff54 1',
    "select \uff47\uff45\uff54\uff45\uff4e\uff56('HOME')",
    'select id from edge\u200b_logs',
    `select * from \`read\u200b_csv\`('${F}')`,
    // Statements and parameters.
    "EXECUTE IMMEDIATE 'select 1'",
    'DECLARE x INT64',
    `LOAD DATA INTO edge_logs FROM FILES (uris = ['${F}'])`,
    'select @@version',
    'select @p',
    // The Explorer's constructs (docs/supabase.md, "The Logs Explorer") around a table function.
    `select datetime(read_text('${F}'))`,
    `select cast(read_text('${F}') as string)`,
    `select format_timestamp(read_text('${F}'), timestamp) from edge_logs`,
    `select approx_quantiles(length(read_text('${F}')), 100)[offset(95)] from edge_logs`,
    `select m.parsed[safe_offset(0)] from edge_logs cross join unnest(read_json('${F}')) as m`,
    `select id from edge_logs where id in (select content from read_text('${F}'))`,
    `select id from edge_logs union all select content from read_text('${F}')`,
    `select a.id from edge_logs a left join read_csv('${F}') b on a.id = b.id`,
    "select timestamp_sub(current_timestamp(), interval (select count(*) from glob('*')) day)",
    `select json_value(event_message, read_text('${F}')) from edge_logs`,
    // The request's clock is read from the bound $now; the engine's is never.
    'select @@now',
    'select now()',
    "select current_datetime('Europe/Paris')",
  ];

  it('refuses every one with 400 invalid_sql, translated or not, and names no file content', async () => {
    const list = attempts(secretFile);
    expect(list.length).toBeGreaterThanOrEqual(50);
    for (const sql of list) {
      const error = await checkBigQueryText(sql, SCHEMA, 'duckdb', { tables: TABLES, maxRows: 1000 }, { serialize }).then(
        () => null,
        (e: unknown) => e,
      );
      expect([sql, error instanceof InvalidSqlError ? (error as InvalidSqlError).status : error]).toEqual([sql, 400]);
      expect(String((error as Error).message)).not.toContain(secret);
    }
  });
});

function expectNothingLeaked(answer: { body: string; headers: string }, forbidden: readonly string[]): void {
  const text = `${answer.headers}\n${answer.body}`;
  for (const secret of forbidden) expect(text.includes(secret) ? secret : null).toBeNull();
}

function send(port: number, method: string, path: string, body?: string) {
  return sendRequest(port, method, path, { body, headers: { 'X-API-KEY': KEY } });
}
