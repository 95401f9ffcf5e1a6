/**
 * The BigQuery SQL self-hosted Supabase Studio sends to `logs.all` (Logflare's schema), written out
 * as test data: the Logs Explorer's templates, each logs page's list query with its filters, the
 * count and chart queries, and the single-log query. They follow Studio's
 * apps/studio/components/interfaces/Settings/Logs/Logs.constants.ts (TEMPLATES, SQL_FILTER_TEMPLATES)
 * and Logs.utils.ts (genDefaultQuery, genCountQuery, genChartQuery, genSingleLogQuery,
 * genCrossJoinUnnests; the branches taken when not on the platform), with literals quoted as its
 * safe-analytics-sql quotes them (quotes and backslashes doubled).
 */

/** Each logs page's unnests, as Studio writes them after FROM. */
const UNNESTS: Record<string, string> = {
  edge_logs: 'cross join unnest(metadata) as m\n  cross join unnest(m.request) as request\n  cross join unnest(m.response) as response',
  postgres_logs: 'cross join unnest(metadata) as m\n  cross join unnest(m.parsed) as parsed',
  function_logs: 'cross join unnest(metadata) as metadata',
  auth_logs: 'cross join unnest(metadata) as metadata',
  function_edge_logs: 'cross join unnest(metadata) as m\n  cross join unnest(m.response) as response\n  cross join unnest(m.request) as request',
  supavisor_logs: 'cross join unnest(metadata) as m',
};

const AUTH_ERROR = "IFNULL(metadata.level, '') IN ('error', 'fatal') OR IFNULL(SAFE_CAST(metadata.status AS INT64), 0) >= 500";
const AUTH_WARNING = "IFNULL(metadata.level, '') = 'warning' OR IFNULL(SAFE_CAST(metadata.status AS INT64), 0) BETWEEN 400 AND 499";

/** Filter conditions by table, as Studio's filter menus write them (search_query with a regex). */
export const STUDIO_FILTERS: Record<string, string[]> = {
  edge_logs: [
    "regexp_contains(event_message, '[Ee]rror|\\\\s[45][0-9][0-9]\\\\s')",
    'response.status_code between 500 and 599',
    'response.status_code between 200 and 299',
    'response.status_code between 400 and 499',
    "request.path like '/rest/%' or request.path like '/graphql/%'",
    "request.path like '/storage/%'",
    "request.path like '/auth/%'",
    "request.path like '/realtime/%'",
    "request.method = 'GET'",
    "request.method = 'POST'",
    "request.method = 'PUT'",
    "request.method = 'PATCH'",
    "request.method = 'DELETE'",
    "request.method = 'OPTIONS'",
  ],
  postgres_logs: [
    "regexp_contains(event_message, 'it''s')",
    "parsed.error_severity in ('ERROR', 'FATAL', 'PANIC')",
    "parsed.error_severity not in ('ERROR', 'FATAL', 'PANIC')",
    "parsed.error_severity = 'LOG'",
  ],
  function_edge_logs: ["regexp_contains(event_message, 'boot')", 'response.status_code between 500 and 599', 'response.status_code between 200 and 299', 'response.status_code between 400 and 499'],
  function_logs: [
    "regexp_contains(event_message, 'x')",
    "metadata.level = 'error'",
    "metadata.level != 'error'",
    "metadata.level = 'log'",
    "metadata.level = 'info'",
    "metadata.level = 'debug'",
    "metadata.level = 'warn'",
    "`metadata`.`function_id` = 'fn-1'",
  ],
  auth_logs: [
    "regexp_contains(event_message, 'login')",
    AUTH_ERROR,
    AUTH_WARNING,
    `NOT (${AUTH_ERROR}) AND NOT (${AUTH_WARNING})`,
    'cast(metadata.status as int64) between 500 and 599',
    'cast(metadata.status as int64) between 400 and 499',
    'cast(metadata.status as int64) between 300 and 399',
    'cast(metadata.status as int64) between 200 and 299',
    'REGEXP_CONTAINS(metadata.path, "/admin")',
    'REGEXP_CONTAINS(metadata.path, "/signup|/invite|/verify")',
    'REGEXP_CONTAINS(metadata.path, "/token|/authorize|/callback|/otp|/magiclink")',
    'REGEXP_CONTAINS(metadata.path, "/recover")',
    'REGEXP_CONTAINS(metadata.path, "/user")',
    'REGEXP_CONTAINS(metadata.path, "/logout")',
  ],
  realtime_logs: ["regexp_contains(event_message, 'join')"],
  storage_logs: ["regexp_contains(event_message, 'object')"],
  postgrest_logs: ["regexp_contains(event_message, 'GET')"],
  pgbouncer_logs: ["regexp_contains(event_message, 'login')"],
  supavisor_logs: ["regexp_contains(event_message, 'pool')", "m.project like 'abc%'"],
};

/** A WHERE clause as Studio builds one: each root filter in parentheses, joined by `and`. */
export function studioWhere(conditions: readonly string[]): string {
  return conditions.length ? `where ${conditions.map((c) => `(${c})`).join(' and ')}` : '';
}

/** The list query of a logs page. */
export function studioListQuery(table: string, where: string): string {
  const joins = UNNESTS[table] ?? '';
  switch (table) {
    case 'edge_logs':
      return `\n-- local dev edge_logs query\nselect id, edge_logs.timestamp, event_message, request.method, request.path, request.search, response.status_code\nfrom edge_logs\n${joins}\n${where}\norder by timestamp desc\nlimit 100;\n`;
    case 'postgres_logs':
      return `\nselect postgres_logs.timestamp, id, event_message, parsed.error_severity, parsed.detail, parsed.hint\nfrom postgres_logs\n${joins}\n${where}\norder by timestamp desc\nlimit 100\n  `;
    case 'function_logs':
      return `select id, function_logs.timestamp, event_message, metadata.event_type, metadata.function_id, metadata.execution_id, metadata.level from function_logs\n  ${joins}\n  ${where}\n  order by timestamp desc\n  limit 100\n    `;
    case 'auth_logs':
      return `select id, auth_logs.timestamp, event_message, metadata.level, metadata.status, metadata.path, metadata.msg as msg, metadata.error from auth_logs\n  ${joins}\n  ${where}\n  order by timestamp desc\n  limit 100\n    `;
    case 'function_edge_logs':
      return '\nselect id, function_edge_logs.timestamp, event_message\nfrom function_edge_logs\norder by timestamp desc\nlimit 100\n';
    case 'supavisor_logs':
      return `select id, supavisor_logs.timestamp, event_message from supavisor_logs ${joins} ${where} order by timestamp desc limit 100`;
    default:
      return `select id, ${table}.timestamp, event_message from ${table}\n  ${where}\n  order by timestamp desc\n  limit 100\n  `;
  }
}

/** The pg_cron page's list query (postgres_logs, self-hosted condition). */
export const STUDIO_PG_CRON_LIST =
  "select id, postgres_logs.timestamp, event_message, parsed.error_severity, parsed.query\nfrom postgres_logs\ncross join unnest(metadata) as m\n  cross join unnest(m.parsed) as parsed\nwhere ( parsed.application_name = 'pg_cron' or event_message::text LIKE '%cron job%' )\norder by timestamp desc\nlimit 100\n";

/** The count query of a logs page. */
export function studioCountQuery(table: string, where: string): string {
  return `SELECT count(*) as count FROM ${table} ${UNNESTS[table] ?? ''} ${where}`;
}

const ERROR_CONDITION: Record<string, string> = {
  edge_logs: 'response.status_code >= 500',
  function_edge_logs: 'response.status_code >= 500',
  postgres_logs: "parsed.error_severity IN ('ERROR', 'FATAL', 'PANIC')",
  auth_logs: AUTH_ERROR,
  function_logs: "metadata.level IN ('error', 'fatal')",
};
const WARNING_CONDITION: Record<string, string> = {
  edge_logs: 'response.status_code >= 400 AND response.status_code < 500',
  function_edge_logs: 'response.status_code >= 400 AND response.status_code < 500',
  postgres_logs: "parsed.error_severity IN ('WARNING')",
  auth_logs: AUTH_WARNING,
  function_logs: "metadata.level IN ('warning')",
};

/** The chart query of a logs page (`trunc` by the window's length, `since` its extended start). */
export function studioChartQuery(table: string, where: string, trunc: 'minute' | 'hour' | 'day', since: string): string {
  const error = ERROR_CONDITION[table] ?? 'false';
  const warning = WARNING_CONDITION[table] ?? 'false';
  const filter = where ? `${where} and t.timestamp > '${since}'` : `where t.timestamp > '${since}'`;
  return `\nSELECT\n-- log-event-chart\n  timestamp_trunc(t.timestamp, ${trunc}) as timestamp,\n  count(CASE WHEN NOT (${error} OR ${warning}) THEN 1 END) as ok_count,\n  count(CASE WHEN ${error} THEN 1 END) as error_count,\n  count(CASE WHEN ${warning} THEN 1 END) as warning_count,\nFROM\n  ${table} t\n  ${UNNESTS[table] ?? ''}\n  ${filter}\nGROUP BY\ntimestamp\nORDER BY\n  timestamp ASC\n  `;
}

/** The single-log query (the side panel). */
export function studioSingleLogQuery(table: string, id: string): string {
  return `select id, timestamp, event_message, metadata from ${table} where id = '${id.replaceAll("'", "''").replaceAll('\\', '\\\\')}' limit 1`;
}

/** The Logs Explorer's templates (custom mode), by label. */
export const STUDIO_TEMPLATES: Record<string, string> = {
  'Commits By User':
    "select\n  p.user_name,\n  count(*) as count\nfrom postgres_logs\n  left join unnest(metadata) as m on true\n  left join unnest(m.parsed) as p on true\nwhere\n  regexp_contains(event_message, 'COMMIT')\ngroup by\n  p.user_name\n  ",
  'Metadata IP':
    'select\n  cast(timestamp as datetime) as timestamp,\n  h.x_real_ip\nfrom edge_logs\n  left join unnest(metadata) as m on true\n  left join unnest(m.request) as r on true\n  left join unnest(r.headers) as h on true\nwhere h.x_real_ip is not null\n',
  'Requests by Geography':
    'select\n  cf.country,\n  count(*) as count\nfrom edge_logs\n  left join unnest(metadata) as m on true\n  left join unnest(m.request) as r on true\n  left join unnest(r.cf) as cf on true\ngroup by\n  cf.country\norder by\n  count desc\n',
  'Slow Response Time':
    'select\n  cast(timestamp as datetime) as timestamp,\n  event_message,\n  r.origin_time\nfrom edge_logs\n  cross join unnest(metadata) as m\n  cross join unnest(m.response) as r\nwhere\n  r.origin_time > 1000\norder by\n  timestamp desc\nlimit 100\n',
  '500 Request Codes':
    'select\n  cast(timestamp as datetime) as timestamp,\n  event_message,\n  r.status_code\nfrom edge_logs\n  cross join unnest(metadata) as m\n  cross join unnest(m.response) as r\nwhere\n  r.status_code >= 500\norder by\n  timestamp desc\nlimit 100\n',
  'Top Paths':
    'select\n  r.path as path,\n  r.search as params,\n  count(timestamp) as c\nfrom edge_logs\n  cross join unnest(metadata) as m\n  cross join unnest(m.request) as r\ngroup by\n  path,\n  params\norder by\n  c desc\nlimit 100\n',
  'REST Requests':
    "select\n  cast(timestamp as datetime) as timestamp,\n  event_message\nfrom edge_logs\n  cross join unnest(metadata) as m\n  cross join unnest(m.request) as r\nwhere\n  path like '%rest/v1%'\norder by\n  timestamp desc\nlimit 100\n",
  Errors:
    "select\n  cast(t.timestamp as datetime) as timestamp,\n  p.error_severity,\n  event_message\nfrom postgres_logs as t\n  cross join unnest(metadata) as m\n  cross join unnest(m.parsed) as p\nwhere\n  p.error_severity in ('ERROR', 'FATAL', 'PANIC')\norder by\n  timestamp desc\nlimit 100\n",
  'Error Count by User':
    "select\n  count(t.timestamp) as count,\n  p.user_name,\n  p.error_severity\nfrom postgres_logs as t\n  cross join unnest(metadata) as m\n  cross join unnest(m.parsed) as p\nwhere\n  p.error_severity in ('ERROR', 'FATAL', 'PANIC')\ngroup by\n  p.user_name,\n  p.error_severity\norder by\n  count desc\nlimit 100\n",
  'Auth Endpoint Events':
    'select\n  t.timestamp,\n  event_message\nfrom auth_logs as t\nwhere\n  regexp_contains(event_message,"level.{3}(info|warning||error|fatal)")\n  -- and regexp_contains(event_message,"path.{3}(/token|/recover|/signup|/otp)")\nlimit 100\n',
  'Storage Object Requests':
    "select\n  r.method as http_verb,\n  r.path as filepath,\n  count(*) as num_requests\nfrom edge_logs\n  cross join unnest(metadata) as m\n  cross join unnest(m.request) AS r\n  cross join unnest(r.headers) AS h\nwhere\n  path like '%storage/v1/object/%'\ngroup by\n  r.path, r.method\norder by\n  num_requests desc\nlimit 100\n",
  'Storage Egress Requests':
    "select\n  request.method as http_verb,\n  request.path as filepath,\n  (responseHeaders.cf_cache_status = 'HIT') as cached,\n  count(*) as num_requests\nfrom\n  edge_logs\n  cross join unnest(metadata) as metadata\n  cross join unnest(metadata.request) as request\n  cross join unnest(metadata.response) as response\n  cross join unnest(response.headers) as responseHeaders\nwhere\n  (path like '%storage/v1/object/%' or path like '%storage/v1/render/%')\n  and request.method = 'GET'\ngroup by 1, 2, 3\norder by num_requests desc\nlimit 100;\n",
  'Storage Top Cache Misses':
    "select\n  r.path as path,\n  r.search as search,\n  count(id) as count\nfrom edge_logs f\n  cross join unnest(f.metadata) as m\n  cross join unnest(m.request) as r\n  cross join unnest(m.response) as res\n  cross join unnest(res.headers) as h\nwhere starts_with(r.path, '/storage/v1/object')\n  and r.method = 'GET'\n  and h.cf_cache_status in ('MISS', 'NONE/UNKNOWN', 'EXPIRED', 'BYPASS', 'DYNAMIC')\ngroup by path, search\norder by count desc\nlimit 100;\n",
};

/** Every query above (filters one at a time and all of a table's at once), named. */
export function allStudioQueries(): Array<{ name: string; sql: string }> {
  const out: Array<{ name: string; sql: string }> = [];
  for (const [table, filters] of Object.entries(STUDIO_FILTERS)) {
    const wheres = ['', ...filters.map((f) => studioWhere([f])), studioWhere(filters.slice(0, 3))];
    wheres.forEach((where, i) => {
      out.push({ name: `${table} list ${i}`, sql: studioListQuery(table, where) });
      out.push({ name: `${table} count ${i}`, sql: studioCountQuery(table, where) });
    });
    for (const trunc of ['minute', 'hour', 'day'] as const)
      out.push({ name: `${table} chart ${trunc}`, sql: studioChartQuery(table, studioWhere(filters.slice(0, 1)), trunc, '2026-11-20T04:00:00.000Z') });
    out.push({ name: `${table} chart unfiltered`, sql: studioChartQuery(table, '', 'minute', '2026-11-20T04:00:00.000Z') });
    out.push({ name: `${table} single log`, sql: studioSingleLogQuery(table, "e'1\\") });
  }
  out.push({ name: 'pg_cron list', sql: STUDIO_PG_CRON_LIST });
  out.push({
    name: 'pg_cron count',
    sql: "SELECT count(*) as count FROM postgres_logs cross join unnest(metadata) as m\n  cross join unnest(m.parsed) as parsed where ( parsed.application_name = 'pg_cron' or event_message::text LIKE '%cron job%' )",
  });
  for (const [label, sql] of Object.entries(STUDIO_TEMPLATES)) out.push({ name: `template ${label}`, sql });
  return out;
}
