import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerProblem, rowsProblem } from './support/supabase/compare-answer';
import { DAY, HOUR, isoMillis, microsOf } from './support/supabase/instants';
import { expectedAnswer, type Expected, type WireRow } from './support/supabase/reference';
import { ANY_ID } from './support/supabase/reference-rows';
import { analyticsLiteral, defaultQuery, whereOf } from './support/supabase/studio-sql';
import { singleLogRequest, studioRequests, type StudioRequest } from './support/supabase/studio-requests';
import { generateVectorEvents, writeVectorNdjson } from './support/supabase/vector-events';
import { keysInVectorOrder, LOG_TABLES, type LogTable, type VectorEvents } from './support/supabase/vector-sources';
import { tempDir, writeLines } from './support/log-files';

/**
 * The reference of Studio's answers (test/support/supabase/reference.ts) checked against a second,
 * independent computation: hand-written DuckDB SQL over the same events as NDJSON (json paths,
 * no translator, no src/), on a sample of the request kinds; and against counts the generator
 * states by construction. The replay tests (studio-replay*.test.ts) then trust the reference.
 */

const NOW = new Date('2026-11-21T12:00:00Z');
const A_DAY_BEFORE = isoMillis(microsOf(NOW) - DAY);
const tmp = tempDir('le-studio-ref-');
const { events: generated, census } = generateVectorEvents({ now: NOW });
/** The same events with ids of our own, so rows can be told apart on both sides. */
const events = Object.fromEntries(LOG_TABLES.map((t) => [t, generated[t].map((e, i) => ({ ...e, id: `${t}-${i}` }))])) as unknown as VectorEvents;
const requests = studioRequests(NOW);
let db: DuckDBInstance;
let duck: DuckDBConnection;

beforeAll(async () => {
  db = await DuckDBInstance.create(':memory:');
  duck = await db.connect();
  for (const table of LOG_TABLES) {
    const file = writeLines(tmp.path(`${table}.ndjson`), events[table]);
    await duck.run(
      `CREATE VIEW ${table} AS SELECT json->>'$.id' AS id, CAST(json->>'$.timestamp' AS TIMESTAMP) AS ts, json->>'$.event_message' AS msg, json->'$.metadata' AS md FROM read_ndjson_objects('${file}')`,
    );
  }
});

afterAll(() => {
  duck?.closeSync();
  tmp.cleanup();
});

function request(name: string): StudioRequest {
  const found = requests.find((r) => r.name === name);
  if (!found) throw new Error(`no request named ${name}`);
  return found;
}

/** The table's window in DuckDB: after a day before now and after the start, at or before the end. */
function win(r: StudioRequest): string {
  const parts = [`ts > TIMESTAMP '${A_DAY_BEFORE}'`];
  if (r.iso_timestamp_start) parts.push(`ts > TIMESTAMP '${r.iso_timestamp_start}'`);
  if (r.iso_timestamp_end) parts.push(`ts <= TIMESTAMP '${r.iso_timestamp_end}'`);
  return parts.join(' AND ');
}

/** Rows of a query whose one column `row` is a JSON object per row. */
async function duckRows(sql: string): Promise<WireRow[]> {
  const reader = await duck.runAndReadAll(sql);
  return reader.getRowObjectsJson().map((r) => JSON.parse(String(r.row)) as WireRow);
}

const AUTH_LEVEL = "coalesce(json_extract_string(md, '$.level'), '')";
const AUTH_STATUS = "coalesce(TRY_CAST(json_extract_string(md, '$.status') AS BIGINT), 0)";
const AUTH_ERROR = `(${AUTH_LEVEL} IN ('error', 'fatal') OR ${AUTH_STATUS} >= 500)`;
const AUTH_WARNING = `(${AUTH_LEVEL} = 'warning' OR ${AUTH_STATUS} BETWEEN 400 AND 499)`;
const STATUS = "CAST(md->'$.response.status_code' AS INTEGER)";
const EDGE_LIST =
  "json_object('id', id, 'timestamp', epoch_us(ts), 'event_message', msg, 'method', md->'$.request.method', 'path', md->'$.request.path', 'search', md->'$.request.search', 'status_code', md->'$.response.status_code')";

/** A chart over `from` in DuckDB: buckets of `unit` after the chart's own bound, counts by severity. */
function chart(r: StudioRequest, from: string, unit: string, error: string, warning: string, where = 'true'): string {
  const spec = r.spec as Extract<StudioRequest['spec'], { kind: 'chart' }>;
  return `SELECT json_object('timestamp', epoch_us(b), 'ok_count', count(*) FILTER (WHERE NOT (e OR w)), 'error_count', count(*) FILTER (WHERE e), 'warning_count', count(*) FILTER (WHERE w)) AS row
    FROM (SELECT date_trunc('${unit}', ts) AS b, ${error} AS e, ${warning} AS w FROM ${from} WHERE ${win(r)} AND ${where} AND ts > TIMESTAMP '${isoMillis(spec.startOffset)}')
    GROUP BY b ORDER BY b`;
}

/** Hand-written DuckDB SQL for a sample of Studio's requests, one per kind that differs in meaning. */
const CROSS_CHECKS: Record<string, (r: StudioRequest) => string> = {
  'API Gateway: list, last hour': (r) => `SELECT ${EDGE_LIST} AS row FROM edge_logs WHERE ${win(r)} ORDER BY ts DESC, id LIMIT 100`,
  'API Gateway: list, last hour, product database': (r) =>
    `SELECT ${EDGE_LIST} AS row FROM edge_logs WHERE ${win(r)} AND (json_extract_string(md, '$.request.path') LIKE '/rest/%' OR json_extract_string(md, '$.request.path') LIKE '/graphql/%') ORDER BY ts DESC, id LIMIT 100`,
  'API Gateway: list, last hour, search "[Ee]rror|\\\\s[45][0-9][0-9]\\\\s"': (r) =>
    `SELECT ${EDGE_LIST} AS row FROM edge_logs WHERE ${win(r)} AND regexp_matches(msg, '[Ee]rror|\\s[45][0-9][0-9]\\s') ORDER BY ts DESC, id LIMIT 100`,
  'API Gateway: list, last hour, search "\\\\\\\\x22quoted"': (r) => `SELECT ${EDGE_LIST} AS row FROM edge_logs WHERE ${win(r)} AND contains(msg, '\\x22quoted') ORDER BY ts DESC, id LIMIT 100`,
  'API Gateway: list, a bar of the chart': (r) => `SELECT ${EDGE_LIST} AS row FROM edge_logs WHERE ${win(r)} ORDER BY ts DESC, id LIMIT 100`,
  'API Gateway: list, last 3 days': (r) => `SELECT ${EDGE_LIST} AS row FROM edge_logs WHERE ${win(r)} ORDER BY ts DESC, id LIMIT 100`,
  'API Gateway: chart by minute, last hour': (r) => chart(r, 'edge_logs', 'minute', `${STATUS} >= 500`, `(${STATUS} >= 400 AND ${STATUS} < 500)`),
  'Postgres: list, last hour, severity noError': (r) =>
    `SELECT json_object('timestamp', epoch_us(ts), 'id', id, 'event_message', msg, 'error_severity', md->'$.parsed.error_severity', 'detail', md->'$.parsed.detail', 'hint', md->'$.parsed.hint') AS row
     FROM postgres_logs WHERE ${win(r)} AND NOT (json_extract_string(md, '$.parsed.error_severity') IN ('ERROR', 'FATAL', 'PANIC')) ORDER BY ts DESC, id LIMIT 100`,
  'Auth: list, last hour, severity info': (r) =>
    `SELECT json_object('id', id, 'timestamp', epoch_us(ts), 'event_message', msg, 'level', md->'$.level', 'status', md->'$.status', 'path', md->'$.path', 'msg', md->'$.msg', 'error', md->'$.error') AS row
     FROM auth_logs WHERE ${win(r)} AND NOT ${AUTH_ERROR} AND NOT ${AUTH_WARNING} ORDER BY ts DESC, id LIMIT 100`,
  'Auth: list, last hour, endpoints authentication': (r) =>
    `SELECT json_object('id', id, 'timestamp', epoch_us(ts), 'event_message', msg, 'level', md->'$.level', 'status', md->'$.status', 'path', md->'$.path', 'msg', md->'$.msg', 'error', md->'$.error') AS row
     FROM auth_logs WHERE ${win(r)} AND regexp_matches(json_extract_string(md, '$.path'), '/token|/authorize|/callback|/otp|/magiclink') ORDER BY ts DESC, id LIMIT 100`,
  'Auth: chart by hour, last 24 hours': (r) => chart(r, 'auth_logs', 'hour', AUTH_ERROR, AUTH_WARNING),
  'Cron: list, last 24 hours': (r) =>
    `SELECT json_object('id', id, 'timestamp', epoch_us(ts), 'event_message', msg, 'error_severity', md->'$.parsed.error_severity', 'query', md->'$.parsed.query') AS row
     FROM postgres_logs WHERE ${win(r)} AND (json_extract_string(md, '$.parsed.application_name') = 'pg_cron' OR msg LIKE '%cron job%') ORDER BY ts DESC, id LIMIT 100`,
  'Cron: chart by minute, last hour, filtered': (r) =>
    chart(
      r,
      'postgres_logs',
      'minute',
      "json_extract_string(md, '$.parsed.error_severity') IN ('ERROR', 'FATAL', 'PANIC')",
      'false',
      "(json_extract_string(md, '$.parsed.application_name') = 'pg_cron' OR msg LIKE '%cron job%')",
    ),
  'Function hello: Logs: list, last 24 hours, {"severity":{"error":true,"warn":true}} and search': (r) =>
    `SELECT json_object('id', id, 'timestamp', epoch_us(ts), 'event_message', msg, 'event_type', md->'$.event_type', 'function_id', md->'$.function_id', 'execution_id', md->'$.execution_id', 'level', md->'$.level') AS row
     FROM function_logs WHERE ${win(r)} AND (json_extract_string(md, '$.level') = 'error' OR json_extract_string(md, '$.level') = 'warn') AND json_extract_string(md, '$.function_id') = 'hello' AND regexp_matches(msg, 'Error') ORDER BY ts DESC, id LIMIT 100`,
  'Function hello: Invocations: list, last hour': (r) =>
    `SELECT json_object('id', id, 'timestamp', epoch_us(ts), 'event_message', msg) AS row FROM function_edge_logs WHERE ${win(r)} ORDER BY ts DESC, id LIMIT 100`,
  'Function hello: Invocations: chart by minute, last hour': (r) =>
    chart(r, 'function_edge_logs', 'minute', `${STATUS} >= 500`, `(${STATUS} >= 400 AND ${STATUS} < 500)`, "json_extract_string(md, '$.function_id') = 'hello'"),
  // Runtime lines have no response: NULL severities, counted in no column (not even ok_count).
  'Edge Functions: chart by hour, last 24 hours': (r) => chart(r, 'function_edge_logs', 'hour', `${STATUS} >= 500`, `(${STATUS} >= 400 AND ${STATUS} < 500)`),
  'Function hello: Logs: chart by hour, last 24 hours': (r) =>
    chart(
      r,
      'function_logs',
      'hour',
      "json_extract_string(md, '$.level') IN ('error', 'fatal')",
      "json_extract_string(md, '$.level') IN ('warning')",
      "json_extract_string(md, '$.function_id') = 'hello'",
    ),
  'Storage: list, last 24 hours': (r) => `SELECT json_object('id', id, 'timestamp', epoch_us(ts), 'event_message', msg) AS row FROM storage_logs WHERE ${win(r)} ORDER BY ts DESC, id LIMIT 100`,
  'Realtime: new-logs count, since a refresh 5 minutes ago, filtered': (r) =>
    `SELECT json_object('count', count(*)) AS row FROM realtime_logs WHERE ${win(r)} AND regexp_matches(msg, 'doesn''t exist')`,
  'Explorer: template Storage Egress Requests, last 24 hours': (r) =>
    `SELECT json_object('http_verb', v, 'filepath', p, 'cached', c, 'num_requests', n) AS row FROM (
       SELECT json_extract_string(md, '$.request.method') AS v, json_extract_string(md, '$.request.path') AS p, (json_extract_string(md, '$.response.headers.cf_cache_status') = 'HIT') AS c, count(*) AS n
       FROM edge_logs WHERE ${win(r)} AND (json_extract_string(md, '$.request.path') LIKE '%storage/v1/object/%' OR json_extract_string(md, '$.request.path') LIKE '%storage/v1/render/%') AND json_extract_string(md, '$.request.method') = 'GET'
       GROUP BY ALL) ORDER BY n DESC LIMIT 100`,
  'Explorer: template Error Count by User, last 24 hours': (r) =>
    `SELECT json_object('count', n, 'user_name', u, 'error_severity', s) AS row FROM (
       SELECT count(*) AS n, json_extract_string(md, '$.parsed.user_name') AS u, json_extract_string(md, '$.parsed.error_severity') AS s FROM postgres_logs
       WHERE ${win(r)} AND json_extract_string(md, '$.parsed.error_severity') IN ('ERROR', 'FATAL', 'PANIC') GROUP BY ALL) ORDER BY n DESC LIMIT 100`,
  'Explorer: template Top Paths, last hour': (r) =>
    `SELECT json_object('path', p, 'params', s, 'c', n) AS row FROM (
       SELECT json_extract_string(md, '$.request.path') AS p, json_extract_string(md, '$.request.search') AS s, count(*) AS n FROM edge_logs WHERE ${win(r)} GROUP BY ALL) ORDER BY n DESC LIMIT 100`,
  'Explorer: template Commits By User, last 24 hours': (r) =>
    `SELECT json_object('user_name', u, 'count', n) AS row FROM (
       SELECT json_extract_string(md, '$.parsed.user_name') AS u, count(*) AS n FROM postgres_logs WHERE ${win(r)} AND regexp_matches(msg, 'COMMIT') GROUP BY ALL)`,
  'Explorer: template Auth Endpoint Events, last hour': (r) =>
    `SELECT json_object('timestamp', epoch_us(ts), 'event_message', msg) AS row FROM auth_logs WHERE ${win(r)} AND regexp_matches(msg, 'level.{3}(info|warning||error|fatal)') LIMIT 100`,
  'Home: usage per hour, last 24 hours': (r) =>
    `SELECT json_object('timestamp', epoch_us(b), 'total_rest_requests', a, 'total_auth_requests', c, 'total_storage_requests', s, 'total_realtime_requests', t) AS row FROM (
       SELECT date_trunc('hour', ts) AS b,
         count_if(starts_with(json_extract_string(md, '$.request.path'), '/rest/v1')) AS a, count_if(starts_with(json_extract_string(md, '$.request.path'), '/auth/v1')) AS c,
         count_if(starts_with(json_extract_string(md, '$.request.path'), '/storage/v1')) AS s, count_if(starts_with(json_extract_string(md, '$.request.path'), '/realtime/v1')) AS t
       FROM edge_logs WHERE ${win(r)} GROUP BY b) ORDER BY b`,
};

describe('the reference agrees with hand-written DuckDB SQL over the same events', () => {
  for (const [name, sql] of Object.entries(CROSS_CHECKS)) {
    it(name, async () => {
      const r = request(name);
      const expected = expectedAnswer(r, events) as Extract<Expected, { status: 200 }>;
      const rows = await duckRows(sql(r));
      expect(rowsProblem(expected, rows)).toBeNull();
    });
  }

  it('a log opened by its id: the whole metadata, objects wrapped in one-element arrays (the wire format)', async () => {
    const target = events.postgres_logs.find((e) => (e.metadata as { parsed?: { detail?: unknown } }).parsed?.detail !== undefined && Date.parse(e.timestamp as string) > NOW.getTime() - DAY / 1000)!;
    const r = singleLogRequest('postgres_logs', target.id as string, { label: 'no range', start: '', end: '' });
    const rows = await duckRows(
      `SELECT json_object('id', id, 'timestamp', epoch_us(ts), 'event_message', msg, 'metadata', md) AS row FROM postgres_logs WHERE ${win(r)} AND id = '${target.id}' LIMIT 1`,
    );
    const wrapped = rows.map((row) => ({ ...row, metadata: [recordOf(row.metadata as Record<string, unknown>)] }));
    expect(wrapped[0]!.metadata).toMatchObject([{ host: 'db-default', parsed: [{ detail: expect.any(String) }] }]);
    expect(rowsProblem(expectedAnswer(r, events) as Extract<Expected, { status: 200 }>, wrapped)).toBeNull();
  });

  it('the sample covers every kind of request and every table', () => {
    const kinds = new Set(Object.keys(CROSS_CHECKS).map((name) => request(name).spec.kind));
    expect([...kinds].sort()).toEqual(['chart', 'count', 'list', 'template', 'usage']);
    const tables = new Set(Object.keys(CROSS_CHECKS).map((name) => request(name).table));
    expect(tables.size).toBeGreaterThanOrEqual(8);
  });
});

/** The wire format's record, written here again: every object field becomes a one-element array. */
function recordOf(object: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(object).map(([k, v]) => [k, v !== null && typeof v === 'object' && !Array.isArray(v) ? [recordOf(v as Record<string, unknown>)] : v]));
}

describe('the reference holds what the generator put there by construction', () => {
  const now = microsOf(NOW);
  const count = (table: LogTable, start: string) =>
    expectedAnswer({ name: 'count', table, sql: '', iso_timestamp_start: start, iso_timestamp_end: '', via: 'useLogsPreview count', spec: { kind: 'count', page: table, filters: {} } }, generated);

  it.each(LOG_TABLES)('%s: the last hour, the last day, everything (no tier window), and after now', (table) => {
    const c = census[table];
    expect(count(table, isoMillis(now - HOUR))).toMatchObject({ groups: [[{ count: c.lastHour + c.future }]] });
    expect(count(table, isoMillis(now - DAY))).toMatchObject({ groups: [[{ count: c.lastDay + c.lastHour + c.future }]] });
    expect(count(table, '')).toMatchObject({ groups: [[{ count: c.older + c.lastDay + c.lastHour + c.future }]] });
    expect(count(table, isoMillis(now))).toMatchObject({ groups: [[{ count: c.future }]] });
    expect(generated[table]).toHaveLength(c.older + c.lastDay + c.lastHour + c.future);
  });

  it("a page's list is the newest 100 of the range, ids left to the server", () => {
    const list = expectedAnswer(request('Postgres: list, last hour'), generated) as Extract<Expected, { status: 200 }>;
    const c = census.postgres_logs;
    expect(list.groups.flat()).toHaveLength(c.lastHour + c.future);
    expect(list.limit).toBe(100);
    expect(list.groups.flat().every((row) => row.id === ANY_ID)).toBe(true);
    const times = list.groups.map((g) => g[0]!.timestamp as number);
    expect(times).toEqual([...times].sort((a, b) => b - a));
  });

  it('the edges: a lower bound is exclusive, an upper bound inclusive, nanoseconds truncated', () => {
    // The gateway line at exactly now - 1 h is outside "last hour" and is the last row of the bar ending there.
    const bar = expectedAnswer(request('API Gateway: list, a bar of the chart'), generated) as Extract<Expected, { status: 200 }>;
    expect(bar.groups[0]![0]!.timestamp).toBe(now - HOUR);
    // Postgres's line at now - 1 h + 999 ns is truncated onto the bound: outside; the one 1 µs later is in.
    const pg = (expectedAnswer(request('Postgres: list, last hour'), generated) as Extract<Expected, { status: 200 }>).groups.flat();
    expect(pg.map((r) => r.timestamp)).toContain(now - HOUR + 1);
    expect(pg.map((r) => r.timestamp)).not.toContain(now - HOUR);
  });
});

describe('the comparison of answers', () => {
  const row = (id: string, timestamp: number) => ({ id, timestamp, event_message: `m${id}` });
  const expected: Expected = { status: 200, groups: [[row('a', 3), row('b', 3)], [row('c', 2)], [row('d', 1), row('e', 1)]], limit: 4 };

  it('takes tied rows in any order, and any rows of the group the limit cuts', () => {
    expect(rowsProblem(expected, [row('b', 3), row('a', 3), row('c', 2), row('e', 1)])).toBeNull();
    expect(rowsProblem(expected, [row('a', 3), row('b', 3), row('c', 2), row('d', 1)])).toBeNull();
  });

  it('refuses rows out of order across groups, a wrong count, a wrong value', () => {
    expect(rowsProblem(expected, [row('c', 2), row('a', 3), row('b', 3), row('d', 1)])).toMatch(/row 0/);
    expect(rowsProblem(expected, [row('a', 3), row('b', 3), row('c', 2)])).toMatch(/3 rows, expected 4/);
    expect(rowsProblem(expected, [row('a', 3), row('b', 3), { ...row('c', 2), event_message: 'x' }, row('d', 1)])).toMatch(/row 2/);
  });

  it('matches ids the server made to ANY_ID, each once', () => {
    const any: Expected = {
      status: 200,
      groups: [
        [
          { id: ANY_ID, n: 1 },
          { id: ANY_ID, n: 2 },
        ],
      ],
      limit: 10,
    };
    expect(
      rowsProblem(any, [
        { id: 'f0e1', n: 2 },
        { id: '9c2d', n: 1 },
      ]),
    ).toBeNull();
    expect(
      rowsProblem(any, [
        { id: 'f0e1', n: 2 },
        { id: 'f0e1', n: 1 },
      ]),
    ).toMatch(/ids repeat/);
  });

  it('reads a refusal by its status and the names its message gives', () => {
    const refusal: Expected = { status: 400, mentions: ['auth_audit_logs', 'edge_logs'] };
    expect(answerProblem(refusal, 400, { error: { message: 'No table auth_audit_logs; the tables are edge_logs, ...' } })).toBeNull();
    expect(answerProblem(refusal, 400, { error: { message: 'No such table' } })).toMatch(/does not name auth_audit_logs, edge_logs/);
    expect(answerProblem(refusal, 500, {})).toMatch(/status 500/);
  });
});

describe("Studio's SQL as its functions compose it", () => {
  it('quotes values as analyticsLiteral does: quotes and backslashes doubled', () => {
    expect(analyticsLiteral("it's a \\d")).toBe("'it''s a \\\\d'");
  });

  it('joins a group with or, roots with and, the search last, an override as a quoted path', () => {
    const filters = { status_code: { error: true, warning: false, success: true }, search_query: "can't" };
    expect(whereOf('edge_logs', filters)).toBe("where (response.status_code between 500 and 599 or response.status_code between 200 and 299) and (regexp_contains(event_message, 'can''t'))");
    expect(whereOf('function_logs', { 'metadata.function_id': 'hello', search_query: '' })).toBe("where (`metadata`.`function_id` = 'hello')");
    expect(defaultQuery('postgrest_logs', {})).toBe('select id, postgrest_logs.timestamp, event_message from postgrest_logs\n  \n  order by timestamp desc\n  limit 100\n  ');
  });

  it('names every request once', () => {
    expect(new Set(requests.map((r) => r.name)).size).toBe(requests.length);
  });
});

describe('the generator', () => {
  it('makes the same events from the same seed, and others from another', () => {
    expect(generateVectorEvents({ now: NOW }).events).toEqual(generated);
    expect(generateVectorEvents({ now: NOW, seed: 2 }).events.edge_logs).not.toEqual(generated.edge_logs);
  });

  it("writes every object's keys in byte order, as Vector's JSON codec does", () => {
    for (const table of LOG_TABLES)
      expect(
        generated[table].filter((e) => !keysInVectorOrder(e)),
        table,
      ).toEqual([]);
    expect(keysInVectorOrder({ b: 1, a: 2 })).toBe(false);
    expect(keysInVectorOrder({ a: [{ d: 1, c: 2 }] })).toBe(false);
  });

  it('streams the same events as NDJSON, one file per feed', async () => {
    const files = await writeVectorNdjson({ now: NOW, outDir: tmp.path('ndjson'), tables: ['auth_logs', 'storage_logs'] });
    const { readFileSync } = await import('node:fs');
    const lines = readFileSync(files.auth_logs, 'utf8').trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l))).toEqual(generated.auth_logs);
  });
});
