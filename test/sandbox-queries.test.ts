import { DuckDBInstance, VARCHAR, type DuckDBConnection } from '@duckdb/node-api';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndpoints, InvalidParameterError, InvalidSqlError, postgresLogs, type Endpoints, type Row } from '../src/index';
import { clickhouseEngine } from '../src/clickhouse';
import { createHandler } from '../src/http';
import { toNodeListener } from '../src/node';
import { Prng } from '../src/fixtures/prng';
import { callerColumns, callerRows } from '../src/engine/duckdb/caller-results';
import { shapeRows } from '../src/rows/shape-rows';
import { listen, sendRequest } from './support/http';
import { edgeEvent, endpointsAt, functionEvent, tempDir, writeLines } from './support/log-files';

const NOW = '2026-11-21T12:00:00.000000Z';
const NOW_MS = Date.parse(NOW);
const PROJECTS = ['alpha', 'beta', 'gamma'];
const TIERS: Record<string, number> = { FREE: 1, PRO: 7, PAYG: 90, ENTERPRISE: 90 };
const PATHS = ['/rest/v1/todos', '/auth/v1/token', '/storage/v1/object', '/realtime/v1/ws'];
const KEY = 'sandbox-key';

interface Event {
  id: string;
  project: string;
  /** ms since the epoch (whole milliseconds). */
  at: number;
  message: string;
  path: string;
}

/** Events of three projects over 100 days, denser in the last two; ids are unique. */
function makeEvents(): Event[] {
  const prng = new Prng(19);
  const events: Event[] = [];
  for (let i = 0; i < 900; i++) {
    const recent = prng.chance(0.7);
    const ageMs = Math.floor(prng.next() * (recent ? 2 : 100) * 86_400_000);
    const status = prng.chance(0.2) ? 500 : 200;
    const method = prng.chance(0.3) ? 'POST' : 'GET';
    const path = PATHS[prng.int(PATHS.length)]!;
    events.push({
      id: `e${String(i).padStart(4, '0')}`,
      project: PROJECTS[prng.int(PROJECTS.length)]!,
      at: NOW_MS - ageMs,
      message: `${method} | ${status} | 203.0.113.${prng.int(255)} | ${path}`,
      path,
    });
  }
  return events;
}

const iso = (ms: number) => new Date(ms).toISOString().replace('Z', '000Z');

/** The events a call may see: its project, inside its tier's window and its bounds. */
function visible(events: readonly Event[], project: string, tier: string, start?: string, end?: string): Event[] {
  const after = Math.max(NOW_MS - (TIERS[tier] ?? 1) * 86_400_000, start ? Date.parse(start) : -Infinity);
  const until = end ? Date.parse(end) : Infinity;
  return events.filter((e) => e.project === project && e.at > after && e.at <= until);
}

describe('sandboxed queries over logs.all', () => {
  const tmp = tempDir();
  const events = makeEvents();
  let ep: Endpoints;
  let plain: Endpoints;
  let reference: DuckDBInstance;
  let db: DuckDBConnection;

  beforeAll(async () => {
    writeLines(
      tmp.path('edge', 'a.ndjson'),
      events.map((e) => edgeEvent({ id: e.id, project: e.project, timestamp: iso(e.at), message: e.message, path: e.path })),
    );
    const sources = { edgeLogs: tmp.path('edge', '*.ndjson') };
    // A table per source of the instance: postgres_logs is configured and has no events.
    ({ ep } = await endpointsAt(sources, NOW, { sandboxable: ['logs.all'], sourceDefinitions: [postgresLogs] }));
    ({ ep: plain } = await endpointsAt(sources, NOW));
    reference = await DuckDBInstance.create(':memory:');
    db = await reference.connect();
    await db.run("SET TimeZone = 'UTC'");
  });
  afterAll(async () => {
    await ep.close();
    await plain.close();
    db.closeSync();
    reference.closeSync();
    tmp.cleanup();
  });

  /** The same SQL run by a plain DuckDB over tables holding exactly the visible rows, shaped alike. */
  async function plainDuckDB(sql: string, rows: readonly Event[]): Promise<{ columns: Array<{ name: string; type: string }>; rows: Row[] }> {
    const json = JSON.stringify(rows.map((e) => ({ id: e.id, at: iso(e.at), message: e.message, metadata: edgeEvent({ timestamp: 0, project: e.project, path: e.path }).metadata })));
    await db.run('CREATE OR REPLACE TABLE postgres_logs (id VARCHAR, timestamp TIMESTAMP, event_message VARCHAR, metadata JSON)');
    await db.run(
      `CREATE OR REPLACE TABLE edge_logs AS SELECT j->>'id' AS id, CAST(CAST(j->>'at' AS TIMESTAMPTZ) AS TIMESTAMP) AS timestamp,
         j->>'message' AS event_message, CAST(j->'metadata' AS JSON) AS metadata FROM (SELECT unnest(CAST($rows AS JSON[])) AS j)`,
      { rows: `[${rows.length ? json.slice(1, -1) : ''}]` },
      { rows: VARCHAR },
    );
    const reader = await db.runAndReadAll(sql);
    const columns = callerColumns(reader);
    return {
      columns,
      rows: shapeRows(
        columns.map((c) => ({ ...c, description: '' })),
        callerRows(reader, columns),
      ),
    };
  }

  it('legitimate queries answer what plain DuckDB answers over the same rows', async () => {
    const queries = [
      'select id, timestamp, event_message from edge_logs order by timestamp desc, id limit 100',
      "select id, metadata->>'$.request.path' as path from edge_logs where event_message like 'POST%' and timestamp > timestamp '2026-11-20 06:00:00' order by id",
      "select date_trunc('hour', timestamp) as hour, count(*) as n, count(distinct metadata->>'$.request.path') as paths, avg(length(event_message)) as avg_len from edge_logs group by 1 order by 1",
      'select a.id, b.id as next_id from edge_logs a join edge_logs b on b.timestamp > a.timestamp and b.timestamp <= a.timestamp + interval 10 minute order by 1, 2',
      'select e.id, p.id as pg from edge_logs e left join postgres_logs p on p.id = e.id order by e.id limit 20',
      "with paths as (select metadata->>'$.request.path' as path, timestamp from edge_logs), top as (select path, count(*) as n, max(timestamp) as last from paths group by path) select * from top order by n desc, path",
      "select id, row_number() over (partition by metadata->>'$.request.path' order by timestamp desc, id) as rn, lag(id) over (order by timestamp, id) as prev from edge_logs qualify rn <= 3 order by id",
      "select id, regexp_extract(event_message, '^(\\w+) \\| (\\d+)', 2) as status, event_message ~ '.*realtime.*' as realtime from edge_logs where regexp_matches(event_message, '\\| 5\\d\\d \\|') order by id",
      "select id from edge_logs where event_message like 'GET%' except select id from edge_logs where timestamp < timestamp '2026-11-20 12:00:00' order by id",
      'select id, timestamp from edge_logs where timestamp = (select max(timestamp) from edge_logs) order by id',
      "select list(id order by id) as ids, min(timestamp) as first, bool_and(id is not null) as all_ids, {'n': count(*)} as s from edge_logs",
    ];
    for (const tier of ['FREE', 'PRO']) {
      const rows = visible(events, 'alpha', tier);
      expect(rows.length).toBeGreaterThan(20);
      for (const sql of queries) {
        const answer = await ep.query('logs.all', { project: 'alpha', project_tier: tier }, { sql });
        const expected = await plainDuckDB(sql, rows);
        expect({ sql, columns: answer.columns?.map(({ name, type }) => ({ name, type })), rows: answer.result }).toEqual({ sql, ...expected });
      }
    }
  });

  it('a sandboxed query never returns a row of another project or outside the tier window and bounds', async () => {
    const templates: Array<(n: number) => string> = [
      () => 'select id from edge_logs',
      (n) => `select id from edge_logs order by timestamp limit ${n}`,
      () => 'with edge_logs as (select * from edge_logs) select id from edge_logs',
      () => 'select a.id from edge_logs a cross join edge_logs b where a.id = b.id',
      () => 'select id from edge_logs union select id from function_edge_logs union select id from postgres_logs',
      () => "select id from (select * from edge_logs where timestamp < timestamp '2000-01-01' or true)",
      () => 'with recursive r(id, n) as (select id, 1 from edge_logs union all select id, n + 1 from r where n < 2) select id from r',
      () => 'select unnest(list(id)) as id from edge_logs',
      (n) => `select id from edge_logs where id in (select id from edge_logs) qualify row_number() over (order by id) > ${n}`,
    ];
    const instant = fc.integer({ min: NOW_MS - 95 * 86_400_000, max: NOW_MS }).map(iso);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...PROJECTS, 'nobody', "alpha' or '1'='1"),
        fc.constantFrom(...Object.keys(TIERS), 'GOLD'),
        fc.option(instant, { nil: undefined }),
        fc.option(instant, { nil: undefined }),
        fc.integer({ min: 0, max: templates.length - 1 }),
        fc.integer({ min: 0, max: 50 }),
        async (project, tier, a, b, t, n) => {
          // A start after the end is refused (400), not queried: bounds in order.
          const [start, end] = a !== undefined && b !== undefined && a > b ? [b, a] : [a, b];
          const params = { project, project_tier: tier, iso_timestamp_start: start, iso_timestamp_end: end };
          const allowed = new Set(visible(events, project, tier, start, end).map((e) => e.id));
          const { result } = await ep.query('logs.all', params, { sql: templates[t]!(n) });
          for (const row of result) expect(allowed.has(String(row.id))).toBe(true);
          const [{ count }] = (await ep.query('logs.all', params, { sql: 'select count(*) as count from edge_logs' })).result as [{ count: number }];
          expect(count).toBe(allowed.size);
        },
      ),
      { numRuns: 60, seed: 19 },
    );
  });

  it("caps rows at the endpoint's max rows; a LIMIT of the caller's only lowers it", async () => {
    const params = { project: 'alpha', project_tier: 'PRO' };
    const cross = 'select a.id, b.id as b from edge_logs a, edge_logs b';
    expect((await ep.query('logs.all', params, { sql: cross })).result).toHaveLength(1000);
    expect((await ep.query('logs.all', params, { sql: `${cross} limit 5000` })).result).toHaveLength(1000);
    expect((await ep.query('logs.all', params, { sql: `${cross} limit 7` })).result).toHaveLength(7);
  });

  it('answers logs.all unchanged without sql, sandboxable or not', async () => {
    for (const project of PROJECTS) {
      for (const tier of Object.keys(TIERS)) {
        const params = { project, project_tier: tier };
        const answer = await ep.query('logs.all', params);
        expect(answer.result).toEqual(await plain.logsAll(params));
        expect(answer.columns).toBeUndefined();
      }
    }
  });

  it("refuses sql on an endpoint that is not sandboxable, and a caller's SQL the engine cannot run, with 400s", async () => {
    await expect(plain.query('logs.all', { project: 'alpha', project_tier: 'PRO' }, { sql: 'select 1' })).rejects.toMatchObject({
      code: 'invalid_parameter',
      status: 400,
      param: 'sql',
      message: expect.stringMatching(/not sandboxable/),
    });
    await expect(ep.query('usage.api-counts', { project: 'alpha', interval: 'daily' }, { sql: 'select 1' })).rejects.toBeInstanceOf(InvalidParameterError);
    const unknownColumn = ep.query('logs.all', { project: 'alpha', project_tier: 'PRO' }, { sql: 'select request_path from edge_logs' });
    await expect(unknownColumn).rejects.toBeInstanceOf(InvalidSqlError);
    await expect(unknownColumn).rejects.toMatchObject({ rule: 'query', message: expect.stringMatching(/column "request_path" not found/) });
    // A table the instance does not have is refused naming those it has.
    await expect(ep.query('logs.all', { project: 'alpha', project_tier: 'PRO' }, { sql: 'select count(*) from auth_logs' })).rejects.toMatchObject({
      code: 'invalid_sql',
      rule: 'table',
      message: expect.stringMatching(/edge_logs, function_edge_logs, postgres_logs/),
    });
  });

  it("blames the caller, not a log file, for an error that merely quotes the file's path", async () => {
    const path = tmp.path('edge', 'a.ndjson');
    const failed = ep.query('logs.all', { project: 'alpha', project_tier: 'PRO' }, { sql: `select cast('${path}' as int) from edge_logs` });
    await expect(failed).rejects.toMatchObject({ code: 'invalid_sql', rule: 'query' });
    expect(String(((await failed.catch((e: unknown) => e)) as Error).message)).not.toContain(tmp.dir);
    const [edge] = await ep.inspectSources();
    expect(edge!.skippedFiles).toEqual([]);
    expect(await ep.logsAll({ project: 'alpha', project_tier: 'PRO' })).toHaveLength(100);
  });

  it("over HTTP: Studio's query in the query string, a GET JSON body and a POST JSON body answer the right rows", async () => {
    const handler = createHandler(ep, { apiKeys: [KEY] });
    const server = await listen(toNodeListener(handler));
    try {
      const start = iso(NOW_MS - 36 * 3_600_000);
      const end = iso(NOW_MS - 3_600_000);
      const studio = 'select id, timestamp, event_message from edge_logs order by timestamp desc limit 100';
      const query = `project=beta&project_tier=PRO&iso_timestamp_start=${start}&iso_timestamp_end=${end}`;
      const expected = visible(events, 'beta', 'PRO', start, end)
        .sort((a, b) => b.at - a.at)
        .slice(0, 100)
        .map((e) => ({ id: e.id, timestamp: iso(e.at), event_message: e.message }));
      expect(expected.length).toBeGreaterThan(50);
      const path = `/api/endpoints/logs.all?${query}`;
      const inQuery = await send(server.port, 'GET', `${path}&sql=${encodeURIComponent(studio)}`);
      const getBody = await send(server.port, 'GET', path, JSON.stringify({ sql: studio }));
      const postBody = await send(server.port, 'POST', `/api/endpoints/query/3e715bbd-1626-41ec-8a34-3544ab01d99e?${query}`, JSON.stringify({ sql: studio }));
      for (const answer of [inQuery, getBody, postBody]) {
        expect(answer.status).toBe(200);
        expect(JSON.parse(answer.body).result).toEqual(expected);
      }
      // Without sql, the same URL is the endpoint's own answer: a GET body's answer is not memoized for it.
      expect(JSON.parse((await send(server.port, 'GET', path)).body).result[0]).toHaveProperty('metadata');
      const csv = await send(server.port, 'GET', `${path}&sql=${encodeURIComponent('select id, count(*) over () as n from edge_logs order by id limit 2')}`, undefined, 'text/csv');
      expect(csv.body.split('\r\n')[0]).toBe('id,n');
      const twice = await send(server.port, 'POST', `${path}&sql=select+1`, JSON.stringify({ sql: 'select 2' }));
      expect([twice.status, JSON.parse(twice.body).error.param]).toEqual([400, 'sql']);
      const notJson = await send(server.port, 'POST', path, 'select 1');
      expect([notJson.status, JSON.parse(notJson.body).error.code]).toEqual([400, 'invalid_body']);
      const notSandboxable = await send(server.port, 'GET', `/api/endpoints/usage.api-counts?project=a&interval=daily&sql=select+1`);
      expect([notSandboxable.status, JSON.parse(notSandboxable.body).error]).toEqual([400, expect.objectContaining({ code: 'invalid_parameter', param: 'sql' })]);
      const refused = await send(server.port, 'GET', `${path}&sql=${encodeURIComponent("select * from read_text('x')")}`);
      expect([refused.status, JSON.parse(refused.body).error]).toEqual([400, expect.objectContaining({ code: 'invalid_sql', rule: 'table_function' })]);
      const openapi = JSON.parse((await send(server.port, 'GET', '/api/openapi.json')).body);
      expect(openapi.paths['/api/endpoints/logs.all'].get.parameters.map((p: { name: string }) => p.name)).toContain('sql');
      expect(openapi.paths['/api/endpoints/logs.all'].post.requestBody.content['application/json'].schema.properties).toHaveProperty('sql');
      expect(openapi.paths['/api/endpoints/usage.api-counts']).not.toHaveProperty('post');
      const listed = JSON.parse((await send(server.port, 'GET', '/api/endpoints')).body).result;
      expect(listed.map((d: { name: string; sandboxed: boolean }) => [d.name, d.sandboxed])).toEqual([
        ['functions.invocation-stats', false],
        ['logs.all', true],
        ['usage.api-counts', false],
      ]);
    } finally {
      await server.close();
    }
  });
});

describe('sandboxed answers and the cache', () => {
  const tmp = tempDir();
  let ep: Endpoints;

  beforeAll(async () => {
    const fn = [];
    for (let i = 0; i < 40; i++) fn.push(functionEvent({ project: 'alpha', timestamp: iso(NOW_MS - i * 60_000), ms: i }));
    writeLines(tmp.path('fn', 'a.ndjson'), fn);
    writeLines(tmp.path('edge', 'a.ndjson'), [edgeEvent({ project: 'alpha', timestamp: iso(NOW_MS - 1000) })]);
    ep = await createEndpoints({
      sources: { edgeLogs: tmp.path('edge', '*.ndjson'), functionEdgeLogs: tmp.path('fn', '*.ndjson') },
      now: () => new Date(NOW),
      sandboxable: ['functions.invocation-stats', 'logs.all'],
    });
  });
  afterAll(async () => {
    await ep.close();
    tmp.cleanup();
  });

  it('are cached when the endpoint is, under the normalised SQL; never for logs.all', async () => {
    const params = { project: 'alpha', interval: '1day' };
    const run = async (sql?: string) => {
      const answer = await ep.query('functions.invocation-stats', params, sql === undefined ? {} : { sql });
      return [answer.cache, answer.result] as const;
    };
    const total = [{ n: 40 }];
    expect(await run('select sum(count) as n from buckets')).toEqual(['miss', total]);
    expect(await run('SELECT sum(count) AS n\n  FROM buckets -- again\n;')).toEqual(['hit', total]);
    expect(await run('select sum(error_count) as n from buckets')).toEqual(['miss', [{ n: 0 }]]);
    expect((await run())[0]).toBe('miss');
    expect((await run())[0]).toBe('hit');
    // The engine's relation under the endpoint's CTEs (every project's invocations) is out of reach.
    await expect(run('select count(*) as n from function_edge_logs')).rejects.toMatchObject({ code: 'invalid_sql', rule: 'table' });
    const logs = await ep.query('logs.all', { project: 'alpha', project_tier: 'PRO' }, { sql: 'select count(*) as n from edge_logs' });
    expect([logs.cache, logs.result, logs.ttlRemainingSeconds]).toEqual(['bypass', [{ n: 1 }], null]);
  });

  it('refuses at start an endpoint whose SQL has no CTEs for a caller to select from', async () => {
    await expect(createEndpoints({ sources: { edgeLogs: tmp.path('edge', '*.ndjson') }, sandboxable: ['usage.api-counts'] })).rejects.toMatchObject({
      code: 'invalid_option',
      option: 'sandboxable',
    });
    await expect(createEndpoints({ sources: { edgeLogs: tmp.path('edge', '*.ndjson') }, sandboxable: ['logs.everything' as never] })).rejects.toMatchObject({
      code: 'invalid_option',
      option: 'sandboxable',
    });
  });

  it("the ClickHouse engine takes callers' SQL in the BigQuery dialect only, and refuses what the sandbox refuses before reaching its server", async () => {
    const engine = () => clickhouseEngine({ url: 'http://127.0.0.1:9', database: 'logs' });
    await expect(createEndpoints({ engine: engine(), sandboxable: ['logs.all'] })).rejects.toMatchObject({
      code: 'invalid_option',
      option: 'sandboxable',
      message: expect.stringMatching(/ClickHouse engine runs a caller's sql in the BigQuery dialect/),
    });
    const ch = await createEndpoints({ engine: engine(), sandboxable: ['logs.all'], sqlDialect: 'bigquery' });
    try {
      // Nothing listens on port 9: a refusal here was decided without the server.
      await expect(ch.query('logs.all', { project: 'alpha', project_tier: 'PRO' }, { sql: "select * from read_csv('/etc/passwd')" })).rejects.toMatchObject({
        code: 'invalid_sql',
        status: 400,
      });
      await expect(ch.query('logs.all', { project: 'alpha', project_tier: 'PRO' }, { sql: 'select count(*) from auth_logs' })).rejects.toMatchObject({
        code: 'invalid_sql',
        status: 400,
        message: expect.stringMatching(/edge_logs, function_edge_logs/),
      });
    } finally {
      await ch.close();
    }
  });
});

/** One request with the API key; GET may carry a body (fetch cannot send one). */
function send(port: number, method: string, path: string, body?: string, accept = 'application/json') {
  return sendRequest(port, method, path, { body, headers: { 'X-API-KEY': KEY, Accept: accept } });
}
