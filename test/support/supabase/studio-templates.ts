/**
 * The Logs Explorer's templates (`TEMPLATES` of supabase/supabase
 * `apps/studio/components/interfaces/Settings/Logs/Logs.constants.ts`, commit 0116d668): the SQL a
 * click on a template puts in the editor and sends as it is, character for character. `simple`
 * templates are searches of a Logs page (the previewer's `search_query`). Also the self-hosted
 * home page's usage chart (`SELF_HOSTED_USAGE_SQL` of `apps/studio/data/analytics/`).
 */

/** A custom (SQL) template: its label and the table its SQL reads. */
export interface ExplorerTemplate {
  label: ExplorerTemplateLabel;
  table: string;
  sql: string;
}

export type ExplorerTemplateLabel =
  | 'Commits By User'
  | 'Metadata IP'
  | 'Requests by Geography'
  | 'Slow Response Time'
  | '500 Request Codes'
  | 'Top Paths'
  | 'REST Requests'
  | 'Errors'
  | 'Error Count by User'
  | 'Auth Endpoint Events'
  | 'Auth Audit Logs'
  | 'Storage Object Requests'
  | 'Storage Egress Requests'
  | 'Storage Top Cache Misses';

export const EXPLORER_TEMPLATES: readonly ExplorerTemplate[] = [
  {
    label: 'Commits By User',
    table: 'postgres_logs',
    sql: "select\n  p.user_name,\n  count(*) as count\nfrom postgres_logs\n  left join unnest(metadata) as m on true\n  left join unnest(m.parsed) as p on true\nwhere\n  regexp_contains(event_message, 'COMMIT')\ngroup by\n  p.user_name\n  ",
  },
  {
    label: 'Metadata IP',
    table: 'edge_logs',
    sql: 'select\n  cast(timestamp as datetime) as timestamp,\n  h.x_real_ip\nfrom edge_logs\n  left join unnest(metadata) as m on true\n  left join unnest(m.request) as r on true\n  left join unnest(r.headers) as h on true\nwhere h.x_real_ip is not null\n',
  },
  {
    label: 'Requests by Geography',
    table: 'edge_logs',
    sql: 'select\n  cf.country,\n  count(*) as count\nfrom edge_logs\n  left join unnest(metadata) as m on true\n  left join unnest(m.request) as r on true\n  left join unnest(r.cf) as cf on true\ngroup by\n  cf.country\norder by\n  count desc\n',
  },
  {
    label: 'Slow Response Time',
    table: 'edge_logs',
    sql: 'select\n  cast(timestamp as datetime) as timestamp,\n  event_message,\n  r.origin_time\nfrom edge_logs\n  cross join unnest(metadata) as m\n  cross join unnest(m.response) as r\nwhere\n  r.origin_time > 1000\norder by\n  timestamp desc\nlimit 100\n',
  },
  {
    label: '500 Request Codes',
    table: 'edge_logs',
    sql: 'select\n  cast(timestamp as datetime) as timestamp,\n  event_message,\n  r.status_code\nfrom edge_logs\n  cross join unnest(metadata) as m\n  cross join unnest(m.response) as r\nwhere\n  r.status_code >= 500\norder by\n  timestamp desc\nlimit 100\n',
  },
  {
    label: 'Top Paths',
    table: 'edge_logs',
    sql: 'select\n  r.path as path,\n  r.search as params,\n  count(timestamp) as c\nfrom edge_logs\n  cross join unnest(metadata) as m\n  cross join unnest(m.request) as r\ngroup by\n  path,\n  params\norder by\n  c desc\nlimit 100\n',
  },
  {
    label: 'REST Requests',
    table: 'edge_logs',
    sql: "select\n  cast(timestamp as datetime) as timestamp,\n  event_message\nfrom edge_logs\n  cross join unnest(metadata) as m\n  cross join unnest(m.request) as r\nwhere\n  path like '%rest/v1%'\norder by\n  timestamp desc\nlimit 100\n",
  },
  {
    label: 'Errors',
    table: 'postgres_logs',
    sql: "select\n  cast(t.timestamp as datetime) as timestamp,\n  p.error_severity,\n  event_message\nfrom postgres_logs as t\n  cross join unnest(metadata) as m\n  cross join unnest(m.parsed) as p\nwhere\n  p.error_severity in ('ERROR', 'FATAL', 'PANIC')\norder by\n  timestamp desc\nlimit 100\n",
  },
  {
    label: 'Error Count by User',
    table: 'postgres_logs',
    sql: "select\n  count(t.timestamp) as count,\n  p.user_name,\n  p.error_severity\nfrom postgres_logs as t\n  cross join unnest(metadata) as m\n  cross join unnest(m.parsed) as p\nwhere\n  p.error_severity in ('ERROR', 'FATAL', 'PANIC')\ngroup by\n  p.user_name,\n  p.error_severity\norder by\n  count desc\nlimit 100\n",
  },
  {
    label: 'Auth Endpoint Events',
    table: 'auth_logs',
    sql: 'select\n  t.timestamp,\n  event_message\nfrom auth_logs as t\nwhere\n  regexp_contains(event_message,"level.{3}(info|warning||error|fatal)")\n  -- and regexp_contains(event_message,"path.{3}(/token|/recover|/signup|/otp)")\nlimit 100\n',
  },
  {
    label: 'Auth Audit Logs',
    table: 'auth_audit_logs',
    sql: 'select\n  cast(timestamp as datetime) as timestamp,\n  event_message, metadata \nfrom auth_audit_logs \nlimit 10\n',
  },
  {
    label: 'Storage Object Requests',
    table: 'edge_logs',
    sql: "select\n  r.method as http_verb,\n  r.path as filepath,\n  count(*) as num_requests\nfrom edge_logs\n  cross join unnest(metadata) as m\n  cross join unnest(m.request) AS r\n  cross join unnest(r.headers) AS h\nwhere\n  path like '%storage/v1/object/%'\ngroup by\n  r.path, r.method\norder by\n  num_requests desc\nlimit 100\n",
  },
  {
    label: 'Storage Egress Requests',
    table: 'edge_logs',
    sql: "select\n  request.method as http_verb,\n  request.path as filepath,\n  (responseHeaders.cf_cache_status = 'HIT') as cached,\n  count(*) as num_requests\nfrom\n  edge_logs\n  cross join unnest(metadata) as metadata\n  cross join unnest(metadata.request) as request\n  cross join unnest(metadata.response) as response\n  cross join unnest(response.headers) as responseHeaders\nwhere\n  (path like '%storage/v1/object/%' or path like '%storage/v1/render/%')\n  and request.method = 'GET'\ngroup by 1, 2, 3\norder by num_requests desc\nlimit 100;\n",
  },
  {
    label: 'Storage Top Cache Misses',
    table: 'edge_logs',
    sql: "select\n  r.path as path,\n  r.search as search,\n  count(id) as count\nfrom edge_logs f\n  cross join unnest(f.metadata) as m\n  cross join unnest(m.request) as r\n  cross join unnest(m.response) as res\n  cross join unnest(res.headers) as h\nwhere starts_with(r.path, '/storage/v1/object')\n  and r.method = 'GET'\n  and h.cf_cache_status in ('MISS', 'NONE/UNKNOWN', 'EXPIRED', 'BYPASS', 'DYNAMIC')\ngroup by path, search\norder by count desc\nlimit 100;\n",
  },
];

/** The `simple` templates: a Logs page's search box filled in (`search_query`). */
export const SEARCH_TEMPLATES = [
  { label: 'Recent Errors', table: 'edge_logs', search: '[Ee]rror|\\s[45][0-9][0-9]\\s' },
  { label: 'Commits', table: 'postgres_logs', search: 'COMMIT' },
] as const;

/** `SELF_HOSTED_USAGE_SQL`: requests per hour by product over the last day, on the self-hosted home page. */
export const SELF_HOSTED_USAGE_SQL =
  "\nselect\n  cast(timestamp_trunc(t.timestamp, hour) as datetime) as timestamp,\n  countif(starts_with(request.path, '/rest/v1')) as total_rest_requests,\n  countif(starts_with(request.path, '/auth/v1')) as total_auth_requests,\n  countif(starts_with(request.path, '/storage/v1')) as total_storage_requests,\n  countif(starts_with(request.path, '/realtime/v1')) as total_realtime_requests\nfrom edge_logs t\n  cross join unnest(metadata) as m\n  cross join unnest(m.request) as request\ngroup by timestamp\norder by timestamp asc\n";
