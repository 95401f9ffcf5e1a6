import { groupBy, joined, type Scope } from './supabase/reference-filters';
import { compare, field, like, regexpContains, startsWith, tieGroups, wire, type TableRow, type Tri } from './supabase/reference-rows';
import { MAX_ROWS, type Expected, type WireRow } from './supabase/reference';
import { HOUR, MINUTE, type Micros } from './supabase/instants';
import type { LogTable } from './supabase/vector-sources';

/**
 * The answer each collected query (explorer-queries.ts) owes, written by hand per query in plain
 * TypeScript over the events of each table: no SQL engine, nothing of src/, no parsing of the SQL.
 * The rules are the ones docs/supabase.md and docs/sandboxing.md state (reference.ts sums them
 * up): `cross join unnest` keeps a row whose record is missing, a dotted column is named after its
 * last part and an unnamed one `f0_`, timestamps (DATETIME included) are integer microseconds,
 * objects are wrapped in one-element arrays, NULLs sort first ascending, at most 1000 rows.
 */

/** The rows of each table within the request's bounds. */
export type Tables = Record<LogTable, TableRow[]>;

/** An oracle: the expected answer over the tables. */
export type Oracle = (t: Tables) => Expected;

type Join = readonly [alias: string, value: (s: Scope) => unknown];

const m: Join = ['m', (s) => s.row.metadata];
/** `cross join unnest(metadata) as metadata`: the alias hides the column. */
const metadataAlias: Join = ['metadata', (s) => s.row.metadata];
const under = (alias: string, from: string, key: string): Join => [alias, (s) => field(s[from], key)];

const kept = (scopes: readonly Scope[], where: (s: Scope) => Tri) => scopes.filter((s) => where(s) === true);
/** Rows in no particular order (one group), cut by `limit`. */
const unordered = (rows: WireRow[], limit = MAX_ROWS): Expected => ({ status: 200, groups: rows.length ? [rows] : [], limit });
/** Rows ordered by `key` (ties in one group), cut by `limit`. */
function ordered<R>(items: readonly R[], key: (r: R) => number | string | null, direction: 'asc' | 'desc', row: (r: R) => WireRow, limit = MAX_ROWS): Expected {
  return { status: 200, groups: tieGroups(items, key, direction).map((g) => g.map(row)), limit: Math.min(limit, MAX_ROWS) };
}
const newestFirst = (scopes: readonly Scope[], row: (s: Scope) => WireRow, limit: number) => ordered(scopes, (s) => s.row.micros, 'desc', row, limit);

const hourOf = (s: Scope): Micros => Math.floor(s.row.micros / HOUR) * HOUR;
const minuteOf = (s: Scope): Micros => Math.floor(s.row.micros / MINUTE) * MINUTE;
const countWhere = (scopes: readonly Scope[], where: (s: Scope) => Tri) => scopes.filter((s) => where(s) === true).length;

/** `regexp_contains(event_message, pattern)` with JavaScript flags for what RE2 writes inline (`(?i)`). */
const messageMatches =
  (pattern: string, flags = '') =>
  (s: Scope) =>
    s.row.event_message === null ? null : new RegExp(pattern, `u${flags}`).test(s.row.event_message);

/** `JSON_VALUE(text, '$.a.b')`: the scalar at the path of the JSON the text holds, as a string; NULL otherwise. */
function jsonValue(text: string | null, path: readonly string[]): string | null {
  if (text === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  for (const key of path) value = field(value, key);
  return value === null || typeof value === 'object' ? null : String(value);
}

/** `CAST(timestamp AS STRING)` as BigQuery writes it: `2026-11-21 11:55:32.662297+00`, fraction without trailing zeros. */
function timestampString(micros: Micros): string {
  const iso = new Date(Math.floor(micros / 1000)).toISOString();
  const fraction = String(micros % 1_000_000)
    .padStart(6, '0')
    .replace(/0+$/, '');
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${fraction ? `.${fraction}` : ''}+00`;
}

// ---- Rows of each table as the queries unnest them

const pgParsed = (t: Tables) => joined(t.postgres_logs, [m, under('parsed', 'm', 'parsed')]);
const pgParsedUnderMetadata = (t: Tables) => joined(t.postgres_logs, [metadataAlias, under('parsed', 'metadata', 'parsed')]);
/** The reports' four unnests: metadata, response, request, request.headers. */
const edgeReport = (t: Tables) => joined(t.edge_logs, [m, under('response', 'm', 'response'), under('request', 'm', 'request'), under('headers', 'request', 'headers')]);
/** diagnosing-auth-errors: `unnest(metadata) as metadata`, then `unnest(response)`, `unnest(request)` by bare name. */
const edgeBare = (t: Tables) => joined(t.edge_logs, [metadataAlias, under('response', 'metadata', 'response'), under('request', 'metadata', 'request')]);
const fnEdge = (t: Tables) => joined(t.function_edge_logs, [m, under('response', 'm', 'response'), under('request', 'm', 'request')]);

const path = (s: Scope) => field(s.request, 'path');
const status = (s: Scope) => field(s.response, 'status_code');
const isPgError = (s: Scope) => (field(s.parsed, 'error_severity') === null ? null : ['ERROR', 'FATAL', 'PANIC'].includes(field(s.parsed, 'error_severity') as string));

/** The advanced-log-filtering guide's query: rows of postgres_logs whose message matches. */
const guideRegexp =
  (pattern: string, flags = ''): Oracle =>
  (t) =>
    unordered(
      kept(
        t.postgres_logs.map((row) => ({ row })),
        messageMatches(pattern, flags),
      ).map((s) => ({ timestamp: s.row.micros, event_message: s.row.event_message, metadata: wire(s.row.metadata) })),
    );

const routeGroups = (scopes: readonly Scope[]) =>
  groupBy(scopes, (s) => [path(s), field(s.request, 'method'), field(s.request, 'search'), status(s)]).map((g) => ({
    row: { path: wire(g.keys[0]), method: wire(g.keys[1]), search: wire(g.keys[2]), status_code: wire(g.keys[3]), count: g.scopes.length },
    scopes: g.scopes,
  }));

/** Hourly buckets in ascending order, one row each. */
const hourly = (scopes: readonly Scope[], row: (hour: Micros, scopes: Scope[]) => WireRow, direction: 'asc' | 'desc' = 'asc') =>
  ordered(
    groupBy(scopes, (s) => [hourOf(s)]),
    (g) => g.keys[0] as number,
    direction,
    (g) => row(g.keys[0] as Micros, g.scopes),
  );

const AUTH_ACTIVE = ['login', 'user_signedup', 'token_refreshed', 'user_modified', 'user_recovery_requested', 'user_reauthenticate_requested'];
const authAction = (s: Scope) => jsonValue(s.row.event_message, ['auth_event', 'action']);
const authRows = (t: Tables) => t.auth_logs.map((row) => ({ row }) as Scope);

/** One oracle per query that answers, or will: `bigquery-refuses` queries have none. */
export const EXPLORER_ORACLES: Record<string, Oracle> = {
  'alf-unnest-parsed': (t) =>
    unordered(
      joined(t.postgres_logs, [metadataAlias, under('parsed', 'metadata', 'parsed')]).map((s) => ({
        event_message: s.row.event_message,
        error_severity: wire(field(s.parsed, 'error_severity')),
        user_name: wire(field(s.parsed, 'user_name')),
      })),
    ),
  'alf-regexp-is-present': guideRegexp('is present'),
  'alf-regexp-start': guideRegexp('^connection'),
  'alf-regexp-end': guideRegexp('$port=12345'),
  'alf-regexp-case': guideRegexp('COnnecTion', 'i'),
  'alf-regexp-wildcard': guideRegexp('hello.world'),
  'alf-regexp-range': guideRegexp('[1-5]'),
  'alf-regexp-repeat': guideRegexp('[0-9]{3}'),
  'alf-regexp-or': guideRegexp('started host|authenticated'),
  'alf-and-or-not': (t) => {
    const has = (s: Scope, text: string) => (s.row.event_message as string).includes(text);
    return unordered(
      t.postgres_logs
        .map((row) => ({ row }) as Scope)
        .filter((s) => (has(s, 'connection') && has(s, 'host')) || !has(s, 'received'))
        .map((s) => ({ timestamp: s.row.micros, event_message: s.row.event_message, metadata: wire(s.row.metadata) })),
    );
  },
  'alf-postgres-errors': (t) =>
    newestFirst(
      kept(pgParsedUnderMetadata(t), (s) => regexpContains(field(s.parsed, 'error_severity'), 'ERROR|FATAL|PANIC')),
      (s) => ({ timestamp: s.row.micros, error_severity: wire(field(s.parsed, 'error_severity')), user_name: wire(field(s.parsed, 'user_name')), event_message: s.row.event_message }),
      100,
    ),
  'alf-all-fields': (t) =>
    newestFirst(
      t.postgres_logs.map((row) => ({ row })),
      (s) => ({ timestamp: s.row.micros, event_message: s.row.event_message, metadata: wire(s.row.metadata) }),
      100,
    ),
  'tsaf-basic': (t) => unordered(t.postgres_logs.map((r) => ({ timestamp: r.micros, event_message: r.event_message, metadata: wire(r.metadata) }))),
  'tsaf-event-message': (t) => unordered(t.postgres_logs.map((r) => ({ event_message: r.event_message }))),
  'tsaf-bare-fields': (t) =>
    unordered(
      pgParsedUnderMetadata(t).map((s) => ({
        event_message: s.row.event_message,
        error_severity: wire(field(s.parsed, 'error_severity')),
        user_name: wire(field(s.parsed, 'user_name')),
      })),
    ),
  'tsaf-storage-admin-errors': (t) =>
    newestFirst(
      kept(pgParsedUnderMetadata(t), (s) =>
        regexpContains(field(s.parsed, 'error_severity'), 'ERROR|FATAL|PANIC') === true ? compare(field(s.parsed, 'user_name'), '=', 'supabase_storage_admin') : false,
      ),
      (s) => ({ timestamp: s.row.micros, error_severity: wire(field(s.parsed, 'error_severity')), user_name: wire(field(s.parsed, 'user_name')), event_message: s.row.event_message }),
      100,
    ),

  'logs-no-joins': (t) => unordered(t.edge_logs.map((r) => ({ timestamp: r.micros, metadata: wire(r.metadata) }))),
  'logs-header-country': (t) =>
    unordered(
      joined(t.edge_logs, [metadataAlias, under('request', 'metadata', 'request'), under('header', 'request', 'headers')]).map((s) => ({
        timestamp: s.row.micros,
        method: wire(field(s.request, 'method')),
        cf_ipcountry: wire(field(s.header, 'cf_ipcountry')),
      })),
    ),
  'logs-avoid-whole-m': (t) => unordered(joined(t.edge_logs, [m]).map((s) => ({ f0_: s.row.micros, metadata: wire(s.m) }))),
  'logs-select-only-needed': (t) => unordered(joined(t.edge_logs, [m, under('r', 'm', 'request')]).map((s) => ({ f0_: s.row.micros, method: wire(field(s.r, 'method')) }))),
  'logs-real-ip': (t) =>
    unordered(
      kept(joined(t.edge_logs, [m, under('r', 'm', 'request'), under('h', 'r', 'headers')]), (s) => (field(s.h, 'x_real_ip') === null ? false : compare(field(s.r, 'method'), '=', 'GET'))).map(
        (s) => ({ f0_: s.row.micros, x_real_ip: wire(field(s.h, 'x_real_ip')) }),
      ),
    ),

  'dae-postgres-auth-admin': (t) =>
    newestFirst(
      kept(pgParsedUnderMetadata(t), (s) =>
        regexpContains(field(s.parsed, 'error_severity'), 'ERROR|FATAL|PANIC') === true ? regexpContains(field(s.parsed, 'user_name'), 'supabase_auth_admin') : false,
      ),
      (s) => ({
        timestamp: s.row.micros,
        event_message: s.row.event_message,
        ...Object.fromEntries(['error_severity', 'user_name', 'query', 'detail', 'hint', 'sql_state_code', 'backend_type'].map((k) => [k, wire(field(s.parsed, k))])),
      }),
      100,
    ),
  'dae-edge-auth-errors': (t) =>
    unordered(
      kept(edgeBare(t), (s) => (compare(status(s), '>=', 400) === true ? regexpContains(path(s), '^/auth/v1/') : false)).map((s) => ({
        timestamp: s.row.micros,
        status_code: wire(status(s)),
        event_message: s.row.event_message,
        path: wire(path(s)),
      })),
    ),
  'dae-429-per-path': (t) => {
    const rows = groupBy(
      kept(edgeBare(t), (s) => (compare(status(s), '=', 429) === true ? regexpContains(path(s), '^/auth/v1/') : false)),
      (s) => [path(s), status(s)],
    ).map((g) => ({ status_code: wire(g.keys[1]), path: wire(g.keys[0]), reoccurrence_per_path: g.scopes.filter((s) => path(s) !== null).length }));
    return ordered(
      rows,
      (r) => r.reoccurrence_per_path,
      'asc',
      (r) => r,
    );
  },

  'reports-api-total-requests': (t) => hourly(edgeReport(t), (hour, scopes) => ({ timestamp: hour, count: scopes.length })),
  'reports-api-top-routes': (t) =>
    ordered(
      routeGroups(edgeReport(t)),
      (g) => g.row.count,
      'desc',
      (g) => g.row,
      10,
    ),
  'reports-api-error-counts': (t) =>
    hourly(
      kept(edgeReport(t), (s) => compare(status(s), '>=', 400)),
      (hour, scopes) => ({ timestamp: hour, count: scopes.length }),
    ),
  'reports-api-top-error-routes': (t) =>
    ordered(
      routeGroups(kept(edgeReport(t), (s) => compare(status(s), '>=', 400))),
      (g) => g.row.count,
      'desc',
      (g) => g.row,
      10,
    ),
  // Self-hosted Kong sends no origin_time: every average is NULL.
  'reports-api-response-speed': (t) => hourly(edgeReport(t), (hour) => ({ timestamp: hour, avg: null })),
  'reports-api-top-slow-routes': (t) =>
    ordered(
      routeGroups(edgeReport(t)),
      () => null,
      'desc',
      (g) => ({ ...g.row, avg: null }),
      10,
    ),
  // No content_length header anywhere: coalesce(..., "0") sums to 0, and 0 / 1e6 is 0.
  'reports-api-network-traffic': (t) => hourly(edgeReport(t), (hour) => ({ timestamp: hour, ingress_mb: 0, egress_mb: 0 })),
  // No cf_cache_status: both counts are 0 in every bucket of GET /storage/v1/object requests.
  'reports-storage-cache-hit-rate': (t) =>
    hourly(
      kept(edgeReport(t), (s) => (startsWith(path(s), '/storage/v1/object') === true ? compare(field(s.request, 'method'), '=', 'GET') : false)),
      (hour) => ({ timestamp: hour, hit_count: 0, miss_count: 0 }),
      'desc',
    ),
  'reports-storage-top-cache-misses': () => unordered([]),
  'reports-api-response-speed-quantiles': (t) => hourly(edgeReport(t), (hour) => ({ timestamp: hour, avg: null, quantiles: null })),

  'template-requests-by-geography': (t) => {
    const rows = groupBy(joined(t.edge_logs, [m, under('r', 'm', 'request'), under('cf', 'r', 'cf')]), (s) => [field(s.cf, 'country')]).map((g) => ({
      country: wire(g.keys[0]),
      count: g.scopes.length,
    }));
    return ordered(
      rows,
      (r) => r.count,
      'desc',
      (r) => r,
    );
  },
  'template-500-request-codes': (t) =>
    newestFirst(
      kept(joined(t.edge_logs, [m, under('r', 'm', 'response')]), (s) => compare(field(s.r, 'status_code'), '>=', 500)),
      (s) => ({ timestamp: s.row.micros, event_message: s.row.event_message, status_code: wire(field(s.r, 'status_code')) }),
      100,
    ),
  'template-rest-requests': (t) =>
    newestFirst(
      kept(joined(t.edge_logs, [m, under('r', 'm', 'request')]), (s) => like(field(s.r, 'path'), '%rest/v1%')),
      (s) => ({ timestamp: s.row.micros, event_message: s.row.event_message }),
      100,
    ),
  'template-errors': (t) =>
    newestFirst(kept(pgParsed(t), isPgError), (s) => ({ timestamp: s.row.micros, error_severity: wire(field(s.parsed, 'error_severity')), event_message: s.row.event_message }), 100),

  'auth-report-active-users': (t) =>
    hourly(
      authRows(t).filter((s) => AUTH_ACTIVE.includes(authAction(s) as string)),
      (hour, scopes) => ({ timestamp: hour, count: new Set(scopes.map((s) => jsonValue(s.row.event_message, ['auth_event', 'actor_id'])).filter((v) => v !== null)).size }),
      'desc',
    ),
  // Self-hosted GoTrue's lines have no top-level `action` (nor `metering`): no row.
  'auth-report-sign-in-attempts': (t) => {
    const rows = authRows(t).filter((s) => jsonValue(s.row.event_message, ['action']) === 'login' && jsonValue(s.row.event_message, ['metering']) === 'true');
    if (rows.length) throw new Error('the fixtures were expected to have no login action at the top level');
    return unordered([]);
  },
  'auth-report-password-resets': (t) =>
    hourly(
      authRows(t).filter((s) => authAction(s) === 'user_recovery_requested'),
      (hour, scopes) => ({ timestamp: hour, count: scopes.length }),
      'desc',
    ),
  // Audit lines carry no duration: every aggregate of it is NULL, quantiles included.
  'auth-report-sign-in-latency': (t) =>
    hourly(
      authRows(t).filter((s) => authAction(s) === 'login'),
      (hour, scopes) => ({
        timestamp: hour,
        count: scopes.length,
        avg_latency_ms: null,
        min_latency_ms: null,
        max_latency_ms: null,
        p50_latency_ms: null,
        p95_latency_ms: null,
        p99_latency_ms: null,
      }),
      'desc',
    ),
  'auth-report-errors-by-status': (t) => {
    const scopes = kept(joined(t.edge_logs, [m, under('request', 'm', 'request'), under('response', 'm', 'response')]), (s) =>
      like(path(s), '%auth/v1%') === true ? compare(status(s), '>=', 400) === true && compare(status(s), '<=', 599) === true : false,
    );
    const rows = groupBy(scopes, (s) => [hourOf(s), status(s)]).map((g) => ({ timestamp: g.keys[0] as number, count: g.scopes.length, status_code: wire(g.keys[1]) }));
    return ordered(
      rows,
      (r) => r.timestamp,
      'desc',
      (r) => r,
    );
  },
  'auth-overview-combined': (t) => {
    const actions = authRows(t).map((s) => ({ action: authAction(s), actor: jsonValue(s.row.event_message, ['auth_event', 'actor_id']) }));
    const edge = kept(joined(t.edge_logs, [m, under('request', 'm', 'request'), under('response', 'm', 'response'), under('h', 'response', 'headers')]), (s) => like(path(s), '%auth/v1%'));
    const apiError = (s: Scope) => compare(status(s), '>=', 400) === true && compare(status(s), '<=', 599) === true;
    return unordered([
      { metric: 'activeUsers', value: new Set(actions.filter((a) => AUTH_ACTIVE.includes(a.action as string) && a.actor !== null).map((a) => a.actor)).size },
      { metric: 'passwordResetRequests', value: actions.filter((a) => a.action === 'user_recovery_requested').length },
      { metric: 'signUpCount', value: actions.filter((a) => a.action === 'user_signedup').length },
      { metric: 'apiTotalRequests', value: edge.length },
      { metric: 'apiErrorRequests', value: edge.filter(apiError).length },
      { metric: 'authErrorRequests', value: edge.filter((s) => apiError(s) && field(s.h, 'x_sb_error_code') !== null).length },
    ]);
  },

  'monitor-function-5xx': (t) =>
    newestFirst(
      kept(fnEdge(t), (s) => compare(status(s), '>=', 500)),
      (s) => ({ ts: timestampString(s.row.micros), event_message: s.row.event_message }),
      20,
    ),
  'monitor-auth-errors': (t) =>
    newestFirst(
      authRows(t).filter((s) => like(s.row.event_message, '%"level":"error"%') === true),
      (s) => ({ ts: timestampString(s.row.micros), event_message: s.row.event_message }),
      20,
    ),
  // Logflare's schema holds parsed as a repeated record: its element 0 is Vector's object.
  // m.parsed[SAFE_OFFSET(0)]: Postgres's parsed is an object, a repeated field of one element, so its one unnested row.
  'monitor-postgres-errors': (t) =>
    newestFirst(
      kept(pgParsed(t), (s) => (field(s.parsed, 'error_severity') === null ? null : ['ERROR', 'FATAL'].includes(field(s.parsed, 'error_severity') as string))),
      (s) => ({ ts: timestampString(s.row.micros), event_message: s.row.event_message }),
      20,
    ),
  // Self-hosted Kong sends no origin_time: its count, quantiles and max are 0 and NULL.
  'saude-window': (t) => {
    const scopes = joined(t.edge_logs, [m, under('response', 'm', 'response')]);
    return unordered([
      {
        n: scopes.length,
        e504: countWhere(scopes, (s) => compare(status(s), '=', 504)),
        e5xx: countWhere(scopes, (s) => compare(status(s), '>=', 500)),
        e401: countWhere(scopes, (s) => compare(status(s), '=', 401)),
        lentas: 0,
        p95: null,
        pior: null,
      },
    ]);
  },
  'saude-per-minute': (t) =>
    unordered(
      groupBy(joined(t.edge_logs, [m, under('response', 'm', 'response')]), (s) => [minuteOf(s)]).map((g) => ({
        minuto: g.keys[0] as number,
        n: g.scopes.length,
        e504: countWhere(g.scopes, (s) => compare(status(s), '=', 504)),
        e5xx: countWhere(g.scopes, (s) => compare(status(s), '>=', 500)),
        e401: countWhere(g.scopes, (s) => compare(status(s), '=', 401)),
        lentas: 0,
        p50: null,
        p95: null,
        pior: null,
      })),
    ),
  'fn-runtime-logs': (t) =>
    newestFirst(
      kept(joined(t.function_logs, [m]), (s) => compare(field(s.m, 'event_type'), '=', 'Log')),
      (s) => ({
        time: s.row.micros,
        event_message: s.row.event_message,
        function_id: wire(field(s.m, 'function_id')),
        level: wire(field(s.m, 'level')),
        execution_id: wire(field(s.m, 'execution_id')),
      }),
      100,
    ),
  // Self-hosted pathnames are `/<name>`: the subquery (and the LIKE below) finds none.
  'fn-runtime-logs-of-function': (t) => {
    if (fnEdge(t).some((s) => field(s.request, 'pathname') === '/functions/v1/hello')) throw new Error('the fixtures were expected to have no /functions/v1/ pathname');
    return unordered([]);
  },
  'fn-edge-logs': (t) => {
    if (fnEdge(t).some((s) => like(field(s.request, 'pathname'), '/functions/v1/%') === true)) throw new Error('the fixtures were expected to have no /functions/v1/ pathname');
    return unordered([]);
  },
  'edge-fn-last-20': (t) =>
    newestFirst(
      fnEdge(t),
      (s) => ({
        id: s.row.id,
        ts: s.row.micros,
        event_message: s.row.event_message,
        status_code: wire(status(s)),
        method: wire(field(s.request, 'method')),
        function_id: wire(field(s.m, 'function_id')),
        execution_time_ms: wire(field(s.m, 'execution_time_ms')),
        version: wire(field(s.m, 'version')),
      }),
      20,
    ),
  'edge-fn-raw': (t) =>
    newestFirst(
      t.function_edge_logs.map((row) => ({ row })),
      (s) => ({ id: s.row.id, timestamp: s.row.micros, event_message: s.row.event_message, metadata: wire(s.row.metadata) }),
      20,
    ),
  'mcp-edge-function-500': (t) =>
    newestFirst(
      kept(fnEdge(t), (s) => (compare(status(s), '>=', 500) === true ? compare(status(s), '<=', 599) : false)),
      (s) => ({
        id: s.row.id,
        timestamp: s.row.micros,
        event_message: s.row.event_message,
        status_code: wire(status(s)),
        method: wire(field(s.request, 'method')),
        ...Object.fromEntries(['function_id', 'execution_time_ms', 'deployment_id', 'version'].map((k) => [k, wire(field(s.m, k))])),
      }),
      100,
    ),
  'functions-union': (t) =>
    ordered(
      [...t.function_logs.map((r) => ({ r, source: 'function_logs' })), ...t.function_edge_logs.map((r) => ({ r, source: 'function_edge_logs' }))],
      (x) => x.r.micros,
      'desc',
      (x) => ({ timestamp: x.r.micros, event_message: x.r.event_message, source: x.source }),
      200,
    ),
  'marker-count': (t) => unordered([{ c: t.postgres_logs.filter((r) => /checkpoint/.test(r.event_message ?? '')).length }]),
  'deletions-basic': (t) =>
    newestFirst(
      t.postgres_logs.map((row) => ({ row }) as Scope).filter((s) => like(s.row.event_message, '%DELETE%transactions%') === true),
      (s) => ({ timestamp: s.row.micros, event_message: s.row.event_message }),
      100,
    ),
  ...Object.fromEntries(
    (['edge_logs', 'auth_logs', 'storage_logs', 'realtime_logs'] as const).map((table) => [
      `log-queries-${table.replace('_logs', '')}`,
      (t: Tables) =>
        newestFirst(
          t[table].map((row) => ({ row })),
          (s) => ({ id: s.row.id, timestamp: s.row.micros, event_message: s.row.event_message, metadata: wire(s.row.metadata) }),
          1000,
        ),
    ]),
  ),
  // Every event is of 2026: none is at or before 2025-10-31.
  'deletions-window': () => unordered([]),
};
