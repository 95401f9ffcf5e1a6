/**
 * Log queries people paste into self-hosted Studio's Logs Explorer (or send to `logs.all` from their
 * scripts), collected from where they are written: Supabase's docs and troubleshooting guides,
 * Studio's own templates and reports, and public scripts calling the analytics endpoint. Each SQL
 * text is kept as its source writes it; where the source builds it (a template's `${...}`), the
 * value it takes is put in and said in `source`. `constructs` notes the BigQuery it leans on.
 *
 * `expect` is what `logs.all` does with it today, on DuckDB (test/explorer-corpus.test.ts):
 * - `answers`: 200 and the rows test/support/explorer-oracles.ts computes, exactly;
 * - `not-yet`: BigQuery answers it but we refuse it (400 `invalid_sql`, the message holding
 *   `refusal`); the day it answers, its rows must be the oracle's: the list should shrink;
 * - `bigquery-refuses`: BigQuery (Logflare) refuses it too (`bigQueryRefuses` says why), so a
 *   400 `invalid_sql` is right.
 */

/** What `logs.all` does with a query today. */
export type ExplorerExpectation = 'answers' | 'not-yet' | 'bigquery-refuses';

/** One collected query. */
export interface ExplorerQuery {
  /** Unique, kebab-case: the source's short name, then what the query does. */
  id: string;
  sql: string;
  /** Where it was found: repository and path (with the commit read), or what the public file is. */
  source: string;
  /** The BigQuery constructs it uses, in a few words. */
  constructs: string;
  expect: ExplorerExpectation;
  /** For `not-yet` and `bigquery-refuses`: a part of the error message (it names what is refused). */
  refusal?: string;
  /** For `bigquery-refuses`: why BigQuery (Logflare) refuses it as well. */
  bigQueryRefuses?: string;
}

const ALF = 'supabase/supabase apps/docs/content/guides/telemetry/advanced-log-filtering.mdx (commit 2b637a86)';
const ALF_FRAGMENT = `${ALF}: the guide's regexp_contains example, in the guide's own query around it`;
const TSAF = 'supabase/supabase apps/docs/content/troubleshooting/advanced-filtering-in-the-log-explorer-IJsGQq.mdx (commit 488efe21)';
const LOGS = 'supabase/supabase apps/docs/content/guides/telemetry/logs.mdx (commit 0143177a)';
const QSL = 'supabase/supabase apps/docs/content/guides/telemetry/querying-supabase-logs.mdx (commit 06f09a02), the ClickHouse-era guide';
const DAE = 'supabase/supabase apps/docs/content/troubleshooting/diagnosing-auth-errors.mdx (commit 253163a1)';
const REPORTS = 'supabase/supabase apps/studio/components/interfaces/Reports/Reports.constants.ts (commit 013e6532), PRESET_CONFIG with no report filter';
const TEMPLATES = 'supabase/supabase apps/studio/components/interfaces/Settings/Logs/Logs.constants.ts (commit 0116d668), TEMPLATES';
const AUTH_REPORT = 'supabase/supabase apps/studio/data/reports/v2/auth.config.ts (an earlier version), AUTH_REPORT_SQL with granularity `hour`';
const AUTH_OVERVIEW = 'supabase/supabase Studio, the Auth overview page (AUTH_COMBINED_QUERY beside getDateRanges, an earlier version)';
const MONITOR = 'a public script on GitHub: a runtime-error monitor of two Supabase projects (`npm run check:logs`, Management API logs.all), SAMPLE_LIMIT 20';
const SAUDE = 'a public script on GitHub: saude-turmas.mjs, a class-health check of four Supabase projects (Management API logs.all)';
const FN_LOGS = 'a public script on GitHub: an edge-function log fetcher (buildRuntimeLogsQuery / buildEdgeLogsQuery), limit 100';
const LOG_QUERIES = 'a public TypeScript module on GitHub: LOG_QUERIES, the SQL an app runs on each Supabase log table';
const DELETIONS = 'a public SQL file on GitHub: "Supabase Logs & Analytics Queries" to investigate transaction deletions';

/** The guide's query around its regexp_contains fragments. */
const alfAround = (condition: string) => `select
  cast(timestamp as datetime) as timestamp,
  event_message,
  metadata
from postgres_logs
where ${condition};`;

export const EXPLORER_QUERIES: readonly ExplorerQuery[] = [
  // ---- Advanced log filtering (docs guide)
  {
    id: 'alf-unnest-parsed',
    sql: `select
  event_message,
  parsed.error_severity,
  parsed.user_name
from
  postgres_logs
  -- extract first layer
  cross join unnest(postgres_logs.metadata) as metadata
  -- extract second layer
  cross join unnest(metadata.parsed) as parsed;`,
    source: ALF,
    constructs: 'two-level cross join unnest, table-qualified metadata, dotted columns named after their last part, comments, trailing ;',
    expect: 'answers',
  },
  {
    id: 'alf-regexp-is-present',
    sql: alfAround("regexp_contains(event_message, 'is present')"),
    source: ALF,
    constructs: 'CAST(timestamp AS DATETIME), whole metadata, REGEXP_CONTAINS',
    expect: 'answers',
  },
  { id: 'alf-regexp-start', sql: alfAround("regexp_contains(event_message, '^connection')"), source: ALF_FRAGMENT, constructs: 'REGEXP_CONTAINS with ^', expect: 'answers' },
  { id: 'alf-regexp-end', sql: alfAround("regexp_contains(event_message, '$port=12345')"), source: ALF_FRAGMENT, constructs: 'REGEXP_CONTAINS with $ before text (never matches)', expect: 'answers' },
  { id: 'alf-regexp-case', sql: alfAround("regexp_contains(event_message, '(?i)COnnecTion')"), source: ALF_FRAGMENT, constructs: 'REGEXP_CONTAINS with the (?i) flag', expect: 'answers' },
  { id: 'alf-regexp-wildcard', sql: alfAround("regexp_contains(event_message, 'hello.world')"), source: ALF_FRAGMENT, constructs: 'REGEXP_CONTAINS with .', expect: 'answers' },
  { id: 'alf-regexp-range', sql: alfAround("regexp_contains(event_message, '[1-5]')"), source: ALF_FRAGMENT, constructs: 'REGEXP_CONTAINS with a class', expect: 'answers' },
  { id: 'alf-regexp-repeat', sql: alfAround("regexp_contains(event_message, '[0-9]{3}')"), source: ALF_FRAGMENT, constructs: 'REGEXP_CONTAINS with {3}', expect: 'answers' },
  {
    id: 'alf-regexp-escaped-dot',
    sql: alfAround(String.raw`regexp_contains(event_message, 'hello world\.')`),
    source: ALF_FRAGMENT,
    constructs: "a backslash escape in a plain string literal ('\\.')",
    expect: 'bigquery-refuses',
    refusal: 'escape',
    bigQueryRefuses: "'\\.' is an illegal escape sequence in a BigQuery string literal (the guide needs r'...' or '\\\\.')",
  },
  { id: 'alf-regexp-or', sql: alfAround("regexp_contains(event_message, 'started host|authenticated')"), source: ALF_FRAGMENT, constructs: 'REGEXP_CONTAINS with |', expect: 'answers' },
  {
    id: 'alf-and-or-not',
    sql: `select
  cast(timestamp as datetime) as timestamp,
  event_message,
  metadata
from postgres_logs
where
  (regexp_contains(event_message, 'connection') and regexp_contains(event_message, 'host'))
  or not regexp_contains(event_message, 'received');`,
    source: ALF,
    constructs: 'AND / OR / NOT of REGEXP_CONTAINS',
    expect: 'answers',
  },
  {
    id: 'alf-postgres-errors',
    sql: `select
  cast(postgres_logs.timestamp as datetime) as timestamp,
  parsed.error_severity,
  parsed.user_name,
  event_message
from
  postgres_logs
  cross join unnest(metadata) as metadata
  cross join unnest(metadata.parsed) as parsed
where regexp_contains(parsed.error_severity, 'ERROR|FATAL|PANIC')
order by timestamp desc
limit 100;`,
    source: ALF,
    constructs: 'unnest alias named metadata, CAST AS DATETIME aliased timestamp then ORDER BY the alias, LIMIT',
    expect: 'answers',
  },
  {
    id: 'alf-all-fields',
    sql: `select
  cast(postgres_logs.timestamp as datetime) as timestamp,
  event_message,
  metadata
from
  postgres_logs
order by timestamp desc
limit 100;`,
    source: `${ALF}, with its <log_table_name> placeholder filled in as postgres_logs`,
    constructs: 'table-qualified timestamp, whole metadata in the wire format',
    expect: 'answers',
  },

  // ---- Advanced filtering in the log explorer (troubleshooting guide)
  {
    id: 'tsaf-basic',
    sql: `select
  cast(timestamp as datetime) as timestamp,
  event_message,
  metadata
from postgres_logs;`,
    source: TSAF,
    constructs: 'CAST AS DATETIME, no WHERE, no LIMIT (the endpoint bounds the rows)',
    expect: 'answers',
  },
  { id: 'tsaf-event-message', sql: 'select\n  event_message\nfrom postgres_logs;', source: TSAF, constructs: 'one column', expect: 'answers' },
  {
    id: 'tsaf-bare-fields',
    sql: `select
  event_message,
  error_severity, -- found in parsed
  user_name -- found in parsed
from
  postgres_logs
  -- extract first layer
  cross join unnest(postgres_logs.metadata) as metadata
  -- extract second layer
  cross join unnest(metadata.parsed) as parsed;`,
    source: TSAF,
    constructs: 'bare field names resolved through unnest(metadata.parsed)',
    expect: 'answers',
  },
  {
    id: 'tsaf-storage-admin-errors',
    sql: `select
  cast(postgres_logs.timestamp as datetime) as timestamp,
  parsed.error_severity,
  parsed.user_name,
  event_message
from
  postgres_logs
  cross join unnest(metadata) as metadata
  cross join unnest(metadata.parsed) as parsed
where
  regexp_contains(parsed.error_severity, 'ERROR|FATAL|PANIC')
  and parsed.user_name = 'supabase_storage_admin'
order by timestamp desc
limit 100;`,
    source: TSAF,
    constructs: 'REGEXP_CONTAINS and = on unnested fields',
    expect: 'answers',
  },

  // ---- Logging guide
  { id: 'logs-no-joins', sql: 'select timestamp, metadata from edge_logs as t;', source: LOGS, constructs: 'table alias, whole metadata', expect: 'answers' },
  {
    id: 'logs-header-country',
    sql: `select timestamp, request.method, header.cf_ipcountry
from
  edge_logs as t
  cross join unnest(t.metadata) as metadata
  cross join unnest(metadata.request) as request
  cross join unnest(request.headers) as header;`,
    source: LOGS,
    constructs: 'three-level unnest through an alias; a field self-hosted Kong never sends (NULL, as Logflare on Postgres answers)',
    expect: 'answers',
  },
  {
    id: 'logs-avoid-whole-m',
    sql: `select
  datetime(timestamp),
  m as metadata -- <- metadata contains many nested keys
from
  edge_logs as t
  cross join unnest(t.metadata) as m;`,
    source: `${LOGS} (the "avoid" half of best practice 2)`,
    constructs: 'DATETIME(timestamp) unnamed (f0_), an unnest alias selected whole',
    expect: 'answers',
  },
  {
    id: 'logs-select-only-needed',
    sql: `select
  datetime(timestamp),
  r.method -- <- select only the required values
from
  edge_logs as t
  cross join unnest(t.metadata) as m
  cross join unnest(m.request) as r;`,
    source: `${LOGS} (the "do this" half of best practice 2)`,
    constructs: 'DATETIME(timestamp) unnamed (f0_), dotted column',
    expect: 'answers',
  },
  {
    id: 'logs-real-ip',
    sql: `select datetime(timestamp), h.x_real_ip
from
  edge_logs
  cross join unnest(metadata) as m
  cross join unnest(m.request) as r
  cross join unnest(r.headers) as h
where h.x_real_ip is not null and r.method = "GET";`,
    source: LOGS,
    constructs: 'double-quoted string literal, IS NOT NULL on a field self-hosted never sends',
    expect: 'answers',
  },

  // ---- The ClickHouse-era guide: what users now paste from the docs
  {
    id: 'qsl-logs-table',
    sql: "select timestamp, event_message\nfrom logs\nwhere source = 'edge_logs'\norder by timestamp desc\nlimit 100;",
    source: QSL,
    constructs: 'the single `logs` table of the ClickHouse engine',
    expect: 'bigquery-refuses',
    refusal: 'logs',
    bigQueryRefuses: 'no table `logs` exists on the BigQuery (Logflare) backend: one table per source',
  },
  {
    id: 'qsl-map-access',
    sql: "select\n  log_attributes['request.method'] as method,\n  log_attributes['request.path'] as path,\n  log_attributes['response.status_code'] as status\nfrom logs\nwhere source = 'edge_logs'",
    source: QSL,
    constructs: "ClickHouse map access log_attributes['...']",
    expect: 'bigquery-refuses',
    refusal: 'logs',
    bigQueryRefuses: 'no table `logs`, and no column log_attributes',
  },
  {
    id: 'qsl-ilike',
    sql: "select timestamp, event_message\nfrom logs\nwhere source = 'postgres_logs'\n  and event_message ilike '%deadlock%'\norder by timestamp desc",
    source: QSL,
    constructs: 'ILIKE',
    expect: 'bigquery-refuses',
    refusal: 'logs',
    bigQueryRefuses: 'BigQuery has no ILIKE, and no table `logs`',
  },

  // ---- Diagnosing Auth errors (troubleshooting guide)
  {
    id: 'dae-auth-server-join',
    sql: `SELECT
  CAST(t1.timestamp AS datetime) AS timestamp,
  t1_metadata.request_id AS request_id,
  t1_metadata.method,
  t1_metadata.remote_addr AS IP,
  t1_metadata.error AS error_message,
  t1_metadata.msg AS secondary_message,
  t3.url AS path,
  t1_metadata.path AS base_path,
  t3.sb,
  t3.x_sb_error_code AS error_code,
  COALESCE(t1_metadata.status, t2.status) as status
FROM auth_logs AS t1
CROSS JOIN
  UNNEST(t1.metadata) AS t1_metadata
JOIN (
  SELECT
    m.request_id,
    m.status
  FROM
    auth_logs t
  CROSS JOIN UNNEST(t.metadata) AS m
) AS t2
  ON t1_metadata.request_id = t2.request_id
FULL JOIN (
  SELECT
    req.url,
    response_headers.cf_ray,
    sb,
    x_sb_error_code
  FROM
    edge_logs e
  CROSS JOIN UNNEST(e.metadata) AS em
  CROSS JOIN UNNEST(em.request) AS req
  CROSS JOIN UNNEST(req.sb) AS sb
  CROSS JOIN UNNEST(em.response) AS response
  CROSS JOIN UNNEST(response.headers) AS response_headers
) AS t3
  ON t1_metadata.request_id = t3.cf_ray
WHERE
  t1_metadata.error IS NOT NULL
  AND t2.status IS NOT NULL
ORDER BY t1.timestamp DESC`,
    source: DAE,
    constructs: 'JOIN of a subquery, FULL JOIN, CROSS JOIN UNNEST(req.sb), bare names of unnest aliases (sb, x_sb_error_code), COALESCE',
    expect: 'bigquery-refuses',
    refusal: 'x_sb_error_code',
    bigQueryRefuses: "self-hosted Kong's events have no x_sb_error_code field (nor request.sb) anywhere: BigQuery's Unrecognized name",
  },
  {
    id: 'dae-postgres-auth-admin',
    sql: `select
    cast(postgres_logs.timestamp as datetime) as timestamp,
    event_message,
    parsed.error_severity,
    parsed.user_name,
    parsed.query,
    parsed.detail,
    parsed.hint,
    parsed.sql_state_code,
    parsed.backend_type
from
    postgres_logs
    cross join unnest(metadata) as metadata
    cross join unnest(metadata.parsed) as parsed
where
    regexp_contains(parsed.error_severity, 'ERROR|FATAL|PANIC')
      and
    regexp_contains(parsed.user_name, 'supabase_auth_admin')
order by
    timestamp desc
limit 100;`,
    source: DAE,
    constructs: 'two REGEXP_CONTAINS, fields self-hosted Vector does not parse (sql_state_code, backend_type)',
    expect: 'answers',
  },
  {
    id: 'dae-edge-auth-errors',
    sql: `select
  cast(timestamp as datetime) as timestamp,
  status_code,
  event_message,
  path
from edge_logs
cross join unnest(metadata) as metadata
cross join unnest(response) AS response
cross join unnest(request) AS request
where
   -- find all errors
   status_code >= 400
    and
   -- only look at Auth API
   regexp_contains(path, '^/auth/v1/')
   -- optionally filter further by including a list of keywords that are in your request URL
   -- and
   -- regexp_contains(event_message, '(?i)keyword1|keyword2|keyword3...')`,
    source: DAE,
    constructs: 'UNNEST of a bare field name (response, request), bare columns status_code and path, trailing comments',
    expect: 'answers',
  },
  {
    id: 'dae-429-per-path',
    sql: `select
  status_code,
  path,
  count(path) as reoccurrence_per_path
from edge_logs
cross join unnest(metadata) as metadata
cross join unnest(response) AS response
cross join unnest(request) AS request
where
   -- find all rate limiting
   status_code = 429
    and
   -- only look at auth API
   regexp_contains(path, '^/auth/v1/')
group by path, status_code
order by reoccurrence_per_path;`,
    source: DAE,
    constructs: 'GROUP BY bare names, COUNT(x), ORDER BY an aggregate alias',
    expect: 'answers',
  },

  // ---- Studio's API and Storage reports
  {
    id: 'reports-api-total-requests',
    sql: `
        -- reports-api-total-requests
        select
          cast(timestamp_trunc(t.timestamp, hour) as datetime) as timestamp,
          count(t.id) as count
        FROM edge_logs t
          cross join unnest(metadata) as m
          cross join unnest(m.response) as response
          cross join unnest(m.request) as request
          cross join unnest(request.headers) as headers
          
        GROUP BY
          timestamp
        ORDER BY
          timestamp ASC`,
    source: REPORTS,
    constructs: 'TIMESTAMP_TRUNC to hour cast to DATETIME, GROUP BY the SELECT alias, four unnests',
    expect: 'answers',
  },
  {
    id: 'reports-api-top-routes',
    sql: `
        -- reports-api-top-routes
        select
          request.path as path,
          request.method as method,
          request.search as search,
          response.status_code as status_code,
          count(t.id) as count
        from edge_logs t
          cross join unnest(metadata) as m
          cross join unnest(m.response) as response
          cross join unnest(m.request) as request
          cross join unnest(request.headers) as headers
          
        group by
          request.path, request.method, request.search, response.status_code
        order by
          count desc
        limit 10
        `,
    source: REPORTS,
    constructs: 'GROUP BY dotted paths, ORDER BY count DESC LIMIT 10 (ties cut)',
    expect: 'answers',
  },
  {
    id: 'reports-api-error-counts',
    sql: `
        -- reports-api-error-counts
        select
          cast(timestamp_trunc(t.timestamp, hour) as datetime) as timestamp,
          count(t.id) as count
        FROM edge_logs t
          cross join unnest(metadata) as m
          cross join unnest(m.response) as response
          cross join unnest(m.request) as request
          cross join unnest(request.headers) as headers
        WHERE
          response.status_code >= 400
        
        GROUP BY
          timestamp
        ORDER BY
          timestamp ASC
        `,
    source: REPORTS,
    constructs: 'hourly buckets of a filtered count',
    expect: 'answers',
  },
  {
    id: 'reports-api-top-error-routes',
    sql: `
        -- reports-api-top-error-routes
        select
          request.path as path,
          request.method as method,
          request.search as search,
          response.status_code as status_code,
          count(t.id) as count
        from edge_logs t
          cross join unnest(metadata) as m
          cross join unnest(m.response) as response
          cross join unnest(m.request) as request
          cross join unnest(request.headers) as headers
        where
          response.status_code >= 400
        
        group by
          request.path, request.method, request.search, response.status_code
        order by
          count desc
        limit 10
        `,
    source: REPORTS,
    constructs: 'WHERE on a number, GROUP BY four paths, LIMIT 10',
    expect: 'answers',
  },
  {
    id: 'reports-api-response-speed',
    sql: `
        -- reports-api-response-speed
        select
          cast(timestamp_trunc(t.timestamp, hour) as datetime) as timestamp,
          avg(response.origin_time) as avg
        FROM
          edge_logs t
          cross join unnest(metadata) as m
          cross join unnest(m.response) as response
          cross join unnest(m.request) as request
          cross join unnest(request.headers) as headers
          
        GROUP BY
          timestamp
        ORDER BY
          timestamp ASC
      `,
    source: REPORTS,
    constructs: 'AVG of a field self-hosted Kong never sends (NULL)',
    expect: 'answers',
  },
  {
    id: 'reports-api-top-slow-routes',
    sql: `
        -- reports-api-top-slow-routes
        select
          request.path as path,
          request.method as method,
          request.search as search,
          response.status_code as status_code,
          count(t.id) as count,
          avg(response.origin_time) as avg
        from edge_logs t
          cross join unnest(metadata) as m
          cross join unnest(m.response) as response
          cross join unnest(m.request) as request
          cross join unnest(request.headers) as headers
        
        group by
          request.path, request.method, request.search, response.status_code
        order by
          avg desc
        limit 10
        `,
    source: REPORTS,
    constructs: 'ORDER BY an aggregate that is NULL everywhere (one tie, cut by LIMIT)',
    expect: 'answers',
  },
  {
    id: 'reports-api-network-traffic',
    sql: `
        -- reports-api-network-traffic
        select
          cast(timestamp_trunc(t.timestamp, hour) as datetime) as timestamp,
          coalesce(
            safe_divide(
              sum(
                cast(coalesce(headers.content_length, "0") as int64)
              ),
              1000000
            ),
            0
          ) as ingress_mb,
          coalesce(
            safe_divide(
              sum(
                cast(coalesce(resp_headers.content_length, "0") as int64)
              ),
              1000000
            ),
            0
          ) as egress_mb,
        FROM
          edge_logs t
          cross join unnest(metadata) as m
          cross join unnest(m.response) as response
          cross join unnest(m.request) as request
          cross join unnest(request.headers) as headers
          cross join unnest(response.headers) as resp_headers
          
        GROUP BY
          timestamp
        ORDER BY
          timestamp ASC
        `,
    source: REPORTS,
    constructs: 'SAFE_DIVIDE, COALESCE, CAST(... AS INT64) of a JSON string, SUM, a trailing comma before FROM',
    expect: 'answers',
  },
  {
    id: 'reports-storage-cache-hit-rate',
    sql: `
        -- reports-storage-cache-hit-rate
SELECT
  timestamp_trunc(timestamp, hour) as timestamp,
  countif( h.cf_cache_status in ('HIT', 'STALE', 'REVALIDATED', 'UPDATING') ) as hit_count,
  countif( h.cf_cache_status in ('MISS', 'NONE/UNKNOWN', 'EXPIRED', 'BYPASS', 'DYNAMIC') ) as miss_count
from edge_logs f
  cross join unnest(f.metadata) as m
  cross join unnest(m.request) as r
  cross join unnest(m.response) as res
  cross join unnest(res.headers) as h
where starts_with(r.path, '/storage/v1/object') and r.method = 'GET'
  
group by timestamp
order by timestamp desc
`,
    source: REPORTS,
    constructs: 'TIMESTAMP_TRUNC (a timestamp, not a DATETIME), COUNTIF of IN, STARTS_WITH',
    expect: 'answers',
  },
  {
    id: 'reports-storage-top-cache-misses',
    sql: `
        -- reports-storage-top-cache-misses
SELECT
  r.path as path,
  r.search as search,
  count(id) as count
from edge_logs f
  cross join unnest(f.metadata) as m
  cross join unnest(m.request) as r
  cross join unnest(m.response) as res
  cross join unnest(res.headers) as h
where starts_with(r.path, '/storage/v1/object')
  and r.method = 'GET'
  and h.cf_cache_status in ('MISS', 'NONE/UNKNOWN', 'EXPIRED', 'BYPASS', 'DYNAMIC')
  
group by path, search
order by count desc
limit 12
    `,
    source: REPORTS,
    constructs: 'IN of a field self-hosted never sends: no rows',
    expect: 'answers',
  },
  {
    id: 'reports-api-response-speed-quantiles',
    sql: `
        select
          cast(timestamp_trunc(t.timestamp, hour) as datetime) as timestamp,
          avg(response.origin_time) as avg,
          APPROX_QUANTILES(response.origin_time, 100) as quantiles
        FROM
          edge_logs t
          cross join unnest(metadata) as m
          cross join unnest(m.response) as response
          cross join unnest(m.request) as request
          cross join unnest(request.headers) as headers
          
        GROUP BY
          timestamp
        ORDER BY
          timestamp ASC
      `,
    source: 'supabase/supabase apps/studio/components/interfaces/Reports/Reports.constants.ts, an earlier version (responseSpeed with APPROX_QUANTILES), no report filter',
    constructs: 'APPROX_QUANTILES returning an array (NULL when every value is NULL)',
    expect: 'answers',
  },

  // ---- Studio's Logs Explorer templates
  {
    id: 'template-requests-by-geography',
    sql: 'select\n  cf.country,\n  count(*) as count\nfrom edge_logs\n  left join unnest(metadata) as m on true\n  left join unnest(m.request) as r on true\n  left join unnest(r.cf) as cf on true\ngroup by\n  cf.country\norder by\n  count desc\n',
    source: `${TEMPLATES}, "Requests by Geography"`,
    constructs: 'LEFT JOIN UNNEST ... ON TRUE, GROUP BY a field self-hosted never sends',
    expect: 'answers',
  },
  {
    id: 'template-500-request-codes',
    sql: 'select\n  cast(timestamp as datetime) as timestamp,\n  event_message,\n  r.status_code\nfrom edge_logs\n  cross join unnest(metadata) as m\n  cross join unnest(m.response) as r\nwhere\n  r.status_code >= 500\norder by\n  timestamp desc\nlimit 100\n',
    source: `${TEMPLATES}, "500 Request Codes"`,
    constructs: 'a number compared, ORDER BY the DATETIME alias',
    expect: 'answers',
  },
  {
    id: 'template-rest-requests',
    sql: "select\n  cast(timestamp as datetime) as timestamp,\n  event_message\nfrom edge_logs\n  cross join unnest(metadata) as m\n  cross join unnest(m.request) as r\nwhere\n  path like '%rest/v1%'\norder by\n  timestamp desc\nlimit 100\n",
    source: `${TEMPLATES}, "REST Requests"`,
    constructs: 'a bare field name in WHERE (path of r), LIKE',
    expect: 'answers',
  },
  {
    id: 'template-errors',
    sql: "select\n  cast(t.timestamp as datetime) as timestamp,\n  p.error_severity,\n  event_message\nfrom postgres_logs as t\n  cross join unnest(metadata) as m\n  cross join unnest(m.parsed) as p\nwhere\n  p.error_severity in ('ERROR', 'FATAL', 'PANIC')\norder by\n  timestamp desc\nlimit 100\n",
    source: `${TEMPLATES}, "Errors"`,
    constructs: 'IN list on an unnested field',
    expect: 'answers',
  },
  {
    id: 'template-auth-audit-logs',
    sql: 'select\n  cast(timestamp as datetime) as timestamp,\n  event_message, metadata \nfrom auth_audit_logs \nlimit 10\n',
    source: `${TEMPLATES}, "Auth Audit Logs"`,
    constructs: 'a table self-hosted has no feed for',
    expect: 'bigquery-refuses',
    refusal: 'auth_audit_logs',
    bigQueryRefuses: 'self-hosted Logflare has no auth_audit_logs source: the table does not exist',
  },

  // ---- Studio's Auth reports (json_value on GoTrue's JSON line)
  {
    id: 'auth-report-active-users',
    sql: `
        --active-users
        select 
          timestamp_trunc(timestamp, hour) as timestamp,
          count(distinct json_value(f.event_message, "$.auth_event.actor_id")) as count
        from auth_logs f
        where json_value(f.event_message, "$.auth_event.action") in (
          'login', 'user_signedup', 'token_refreshed', 'user_modified',
          'user_recovery_requested', 'user_reauthenticate_requested'
        )
        group by timestamp
        order by timestamp desc
      `,
    source: AUTH_REPORT,
    constructs: 'JSON_VALUE of event_message (a string holding JSON), COUNT(DISTINCT), IN list',
    expect: 'answers',
  },
  {
    id: 'auth-report-sign-in-attempts',
    sql: `
        --sign-in-attempts
        SELECT
          timestamp_trunc(timestamp, hour) as timestamp,
          CASE
            WHEN JSON_VALUE(event_message, "$.provider") IS NOT NULL
                AND JSON_VALUE(event_message, "$.provider") != ''
            THEN CONCAT(
              JSON_VALUE(event_message, "$.login_method"),
              ' (',
              JSON_VALUE(event_message, "$.provider"),
              ')'
            )
            ELSE JSON_VALUE(event_message, "$.login_method")
          END as login_type_provider,
          COUNT(*) as count
        FROM
          auth_logs
        WHERE
          JSON_VALUE(event_message, "$.action") = 'login'
          AND JSON_VALUE(event_message, "$.metering") = "true"
        GROUP BY
          timestamp, login_type_provider
        ORDER BY
          timestamp desc, login_type_provider
      `,
    source: AUTH_REPORT,
    constructs: 'CASE, CONCAT of JSON_VALUEs, GROUP BY two aliases (no rows here: self-hosted GoTrue writes no metering)',
    expect: 'answers',
  },
  {
    id: 'auth-report-password-resets',
    sql: `
        --password-reset-requests
        select 
          timestamp_trunc(timestamp, hour) as timestamp,
          count(*) as count
        from auth_logs f
        where json_value(f.event_message, "$.auth_event.action") = 'user_recovery_requested'
        group by timestamp
        order by timestamp desc
      `,
    source: AUTH_REPORT,
    constructs: 'JSON_VALUE with a nested path, hourly buckets newest first',
    expect: 'answers',
  },
  {
    id: 'auth-report-sign-in-latency',
    sql: `
        --signin-latency
        select 
          timestamp_trunc(timestamp, hour) as timestamp,
          count(*) as count,
          round(avg(cast(json_value(event_message, "$.duration") as int64)) / 1000000, 2) as avg_latency_ms,
          round(min(cast(json_value(event_message, "$.duration") as int64)) / 1000000, 2) as min_latency_ms,
          round(max(cast(json_value(event_message, "$.duration") as int64)) / 1000000, 2) as max_latency_ms,
          round(approx_quantiles(cast(json_value(event_message, "$.duration") as int64), 100)[offset(50)] / 1000000, 2) as p50_latency_ms,
          round(approx_quantiles(cast(json_value(event_message, "$.duration") as int64), 100)[offset(95)] / 1000000, 2) as p95_latency_ms,
          round(approx_quantiles(cast(json_value(event_message, "$.duration") as int64), 100)[offset(99)] / 1000000, 2) as p99_latency_ms
        from auth_logs
        where json_value(event_message, "$.auth_event.action") = 'login'
        group by timestamp
        order by timestamp desc
      `,
    source: AUTH_REPORT,
    constructs: 'APPROX_QUANTILES(...)[OFFSET(n)], ROUND, AVG/MIN/MAX of CAST(JSON_VALUE AS INT64)',
    expect: 'answers',
  },
  {
    id: 'auth-report-errors-by-status',
    sql: `
        --auth-errors-by-status
  select 
    timestamp_trunc(timestamp, hour) as timestamp,
    count(*) as count,
    response.status_code
  from edge_logs
    cross join unnest(metadata) as m
    cross join unnest(m.request) as request
    cross join unnest(m.response) as response
  where path like '%auth/v1%'
    and response.status_code >= 400 and response.status_code <= 599
  group by timestamp, status_code
  order by timestamp desc
      `,
    source: AUTH_REPORT,
    constructs: 'GROUP BY a dotted column by its output name (status_code), bare path',
    expect: 'answers',
  },
  {
    id: 'auth-overview-combined',
    sql: `
-- auth-overview
  with base as (
    select
      json_value(event_message, "$.auth_event.action") as action,
      json_value(event_message, "$.auth_event.actor_id") as actor_id,
      cast(json_value(event_message, "$.duration") as int64) as duration_ns
    from auth_logs
  )
  
  select 
    'activeUsers' as metric, 
    cast(count(distinct case 
      when action in (
        'login','user_signedup','token_refreshed','user_modified',
        'user_recovery_requested','user_reauthenticate_requested'
      ) then actor_id 
      else null 
    end) as float64) as value
  from base
  
  union all
  select 'passwordResetRequests' as metric, 
    cast(count(case when action = 'user_recovery_requested' then 1 else null end) as float64)
  from base
  
  union all
  select 'signUpCount' as metric, 
    cast(count(case when action = 'user_signedup' then 1 else null end) as float64)
  from base

  union all
  select 'apiTotalRequests' as metric,
    cast(count(*) as float64) as value
  from edge_logs
    cross join unnest(metadata) as m
    cross join unnest(m.request) as request
    cross join unnest(m.response) as response
    cross join unnest(response.headers) as h
  where path like '%auth/v1%'

  union all
  select 'apiErrorRequests' as metric,
    cast(count(*) as float64) as value
  from edge_logs
    cross join unnest(metadata) as m
    cross join unnest(m.request) as request
    cross join unnest(m.response) as response
    cross join unnest(response.headers) as h
  where path like '%auth/v1%'
    and response.status_code >= 400 and response.status_code <= 599

  union all
  select 'authErrorRequests' as metric,
    cast(count(*) as float64) as value
  from edge_logs
    cross join unnest(metadata) as m
    cross join unnest(m.request) as request
    cross join unnest(m.response) as response
    cross join unnest(response.headers) as h
  where path like '%auth/v1%'
    and response.status_code >= 400 and response.status_code <= 599
    and h.x_sb_error_code is not null
`,
    source: AUTH_OVERVIEW,
    constructs: 'WITH, six-way UNION ALL naming columns from the first SELECT, COUNT(DISTINCT CASE), CAST AS FLOAT64',
    expect: 'answers',
  },

  // ---- Public scripts calling logs.all
  {
    id: 'monitor-function-5xx',
    sql: `select cast(timestamp as string) as ts, event_message
          from function_edge_logs
          cross join unnest(metadata) as m
          cross join unnest(m.response) as response
          where response.status_code >= 500
          order by timestamp desc
          limit 20`,
    source: MONITOR,
    constructs: 'CAST(timestamp AS STRING)',
    expect: 'answers',
  },
  {
    id: 'monitor-auth-errors',
    sql: `select cast(timestamp as string) as ts, event_message
          from auth_logs
          where event_message like '%"level":"error"%'
          order by timestamp desc
          limit 20`,
    source: MONITOR,
    constructs: 'CAST(timestamp AS STRING), LIKE with double quotes inside',
    expect: 'answers',
  },
  {
    id: 'monitor-postgres-errors',
    sql: `select cast(timestamp as string) as ts, event_message
          from postgres_logs
          cross join unnest(metadata) as m
          where m.parsed[SAFE_OFFSET(0)].error_severity in ('ERROR', 'FATAL')
          order by timestamp desc
          limit 20`,
    source: MONITOR,
    constructs: 'm.parsed[SAFE_OFFSET(0)].field (array subscript of a record), CAST(timestamp AS STRING)',
    expect: 'answers',
  },
  {
    id: 'saude-window',
    sql: `
select
  count(*)                                                  as n,
  countIf(response.status_code = 504)                       as e504,
  countIf(response.status_code >= 500)                      as e5xx,
  countIf(response.status_code = 401)                       as e401,
  countIf(response.origin_time > 2000)                      as lentas,
  approx_quantiles(response.origin_time, 100)[offset(95)]   as p95,
  max(response.origin_time)                                 as pior
from edge_logs
cross join unnest(metadata) as m
cross join unnest(m.response) as response
`,
    source: SAUDE,
    constructs: 'countIf in mixed case, APPROX_QUANTILES(...)[OFFSET(95)], MAX of a JSON number',
    expect: 'answers',
  },
  {
    id: 'saude-per-minute',
    sql: `
select
  timestamp_trunc(t.timestamp, minute)                                as minuto,
  count(*)                                                            as n,
  countIf(response.status_code = 504)                                 as e504,
  countIf(response.status_code >= 500)                                as e5xx,
  countIf(response.status_code = 401)                                 as e401,
  countIf(response.origin_time > 2000)                  as lentas,
  approx_quantiles(response.origin_time, 100)[offset(50)]             as p50,
  approx_quantiles(response.origin_time, 100)[offset(95)]             as p95,
  max(response.origin_time)                                           as pior
from edge_logs t
cross join unnest(t.metadata) as m
cross join unnest(m.response) as response
group by minuto
`,
    source: `${SAUDE}, the per-minute version, its LIMIAR_LENTA_MS put in as 2000 (the first version's literal)`,
    constructs: 'TIMESTAMP_TRUNC to minute grouped by alias, APPROX_QUANTILES(...)[OFFSET(n)], MAX of a JSON number, no ORDER BY',
    expect: 'answers',
  },
  {
    id: 'fn-runtime-logs',
    sql: `SELECT
  datetime(t.timestamp) AS time,
  t.event_message,
  m.function_id,
  m.level,
  m.execution_id
FROM function_logs AS t
  CROSS JOIN UNNEST(t.metadata) AS m
WHERE m.event_type = 'Log'
  
ORDER BY t.timestamp DESC
LIMIT 100`,
    source: `${FN_LOGS}, no function named`,
    constructs: 'DATETIME() aliased, ORDER BY a column the SELECT does not list',
    expect: 'answers',
  },
  {
    id: 'fn-runtime-logs-of-function',
    sql: `SELECT
  datetime(t.timestamp) AS time,
  t.event_message,
  m.function_id,
  m.level,
  m.execution_id
FROM function_logs AS t
  CROSS JOIN UNNEST(t.metadata) AS m
WHERE m.event_type = 'Log'
  AND m.function_id IN (
    SELECT DISTINCT em.function_id
    FROM function_edge_logs AS el
      CROSS JOIN UNNEST(el.metadata) AS em
      CROSS JOIN UNNEST(em.request) AS er
    WHERE er.pathname = '/functions/v1/hello'
  )
ORDER BY t.timestamp DESC
LIMIT 100`,
    source: `${FN_LOGS}, function hello`,
    constructs: 'IN (subquery over another table), SELECT DISTINCT (self-hosted pathnames are /hello: no rows)',
    expect: 'answers',
  },
  {
    id: 'fn-edge-logs',
    sql: `SELECT
  datetime(t.timestamp) AS time,
  r.method,
  r.pathname,
  r.search,
  res.status_code,
  m.execution_time_ms
FROM function_edge_logs AS t
  CROSS JOIN UNNEST(t.metadata) AS m
  CROSS JOIN UNNEST(m.request) AS r
  CROSS JOIN UNNEST(m.response) AS res
WHERE TRUE
  AND r.pathname LIKE '/functions/v1/%'
ORDER BY t.timestamp DESC
LIMIT 100`,
    source: `${FN_LOGS}, no function named`,
    constructs: 'WHERE TRUE AND ..., LIKE (self-hosted pathnames are /hello: no rows)',
    expect: 'answers',
  },
  {
    id: 'edge-fn-last-20',
    sql: `
      select
        id,
        function_edge_logs.timestamp as ts,
        event_message,
        response.status_code as status_code,
        request.method as method,
        m.function_id as function_id,
        m.execution_time_ms as execution_time_ms,
        m.version as version
      from function_edge_logs
        cross join unnest(metadata) as m
        cross join unnest(m.response) as response
        cross join unnest(m.request) as request
      order by timestamp desc
      limit 20
    `,
    source: 'a public edge function on GitHub: an admin page listing the last 20 edge-function invocations (platform logs.all)',
    constructs: 'table-qualified timestamp aliased, ORDER BY the table column, LIMIT 20 cutting ties',
    expect: 'answers',
  },
  {
    id: 'edge-fn-raw',
    sql: 'SELECT id, timestamp, event_message, metadata FROM function_edge_logs ORDER BY timestamp DESC LIMIT 20',
    source: 'a public edge function on GitHub: a diagnostics endpoint reading function_edge_logs through the Management API',
    constructs: 'whole metadata of function_edge_logs in the wire format',
    expect: 'answers',
  },
  {
    id: 'mcp-edge-function-500',
    sql: `select id, function_edge_logs.timestamp, event_message, response.status_code, request.method, m.function_id, m.execution_time_ms, m.deployment_id, m.version from function_edge_logs
        cross join unnest(metadata) as m
        cross join unnest(m.response) as response
        cross join unnest(m.request) as request
        where (response.status_code between 500 and 599)
        order by timestamp desc
        limit 100`,
    source: 'a public AI-assistant prompt on GitHub teaching the Logs Explorer ("Edge function 500 error" example)',
    constructs: 'BETWEEN in parentheses, table-qualified timestamp named timestamp',
    expect: 'answers',
  },
  {
    id: 'functions-union',
    sql: "select timestamp, event_message, 'function_logs' as source\nfrom function_logs\nunion all\nselect timestamp, event_message, 'function_edge_logs' as source\nfrom function_edge_logs\norder by timestamp desc\nlimit 200",
    source: 'a public edge function on GitHub: a log viewer reading both function tables (no slug given)',
    constructs: 'UNION ALL of two tables, ORDER BY and LIMIT over the union',
    expect: 'answers',
  },
  {
    id: 'functions-union-slug',
    sql: "select timestamp, event_message, 'function_logs' as source\nfrom function_logs\nwhere to_json_string(metadata) like '%hello%' escape '\\'\nunion all\nselect timestamp, event_message, 'function_edge_logs' as source\nfrom function_edge_logs\nwhere to_json_string(metadata) like '%hello%' escape '\\'\norder by timestamp desc\nlimit 200",
    source: 'a public edge function on GitHub: a log viewer reading both function tables, slug hello',
    constructs: "TO_JSON_STRING(metadata), LIKE ... ESCAPE '\\'",
    expect: 'bigquery-refuses',
    refusal: 'Unterminated string literal',
    bigQueryRefuses: "BigQuery has no LIKE ... ESCAPE clause, and '\\' alone is an unterminated string literal in GoogleSQL",
  },
  {
    id: 'marker-count',
    sql: "select count(*) as c from postgres_logs where regexp_contains(event_message, 'checkpoint')",
    source: "a public integration test on GitHub: a self-hosted stack's check that a marker reached postgres_logs (its marker put in as checkpoint)",
    constructs: 'COUNT(*) of REGEXP_CONTAINS',
    expect: 'answers',
  },
  {
    id: 'deletions-basic',
    sql: `select
  cast(timestamp as datetime) as timestamp,
  event_message
from postgres_logs
where event_message like '%DELETE%transactions%'
  and timestamp >= '2025-10-26'
order by timestamp desc
limit 100;`,
    source: DELETIONS,
    constructs: 'a timestamp compared with a date string, LIKE',
    expect: 'answers',
  },
  {
    id: 'deletions-all-sources',
    sql: `select
  'postgres_logs' as source,
  cast(timestamp as datetime) as timestamp,
  event_message,
  metadata
from postgres_logs
where event_message like '%DELETE%transactions%'
  and timestamp >= '2025-10-26'

union all

select
  'postgrest_logs' as source,
  cast(timestamp as datetime) as timestamp,
  event_message,
  metadata
from postgrest_logs
where event_message like '%DELETE%transactions%'
  and timestamp >= '2025-10-26'

union all

select
  'api_logs' as source,
  cast(timestamp as datetime) as timestamp,
  event_message,
  metadata
from api_logs
where event_message like '%DELETE%transactions%'
  and timestamp >= '2025-10-26'

order by timestamp desc
limit 200;`,
    source: DELETIONS,
    constructs: 'UNION ALL of three tables, one of which (api_logs) does not exist',
    expect: 'bigquery-refuses',
    refusal: 'api_logs',
    bigQueryRefuses: 'there is no api_logs table',
  },
  {
    id: 'deletions-window',
    sql: `select
  cast(timestamp as datetime) as timestamp,
  event_message,
  metadata
from postgres_logs
where event_message like '%transaction%'
  and timestamp >= '2025-10-26'
  and timestamp <= '2025-10-31'
order by timestamp desc
limit 200;`,
    source: DELETIONS,
    constructs: 'a timestamp between two date strings (a year before the data: no rows)',
    expect: 'answers',
  },
  {
    id: 'pg-identifier-ilike',
    sql: `select identifier, postgres_logs.timestamp, id, event_message, parsed.error_severity from postgres_logs
          cross join unnest(metadata) as m
          cross join unnest(m.parsed) as parsed
          
          order by timestamp desc
          limit 50`,
    source: 'a public edge function on GitHub: a log proxy for a dashboard (postgres branch, no search, limit 50)',
    constructs: 'the platform-only identifier column (read replicas)',
    expect: 'bigquery-refuses',
    refusal: 'identifier',
    bigQueryRefuses: 'self-hosted postgres_logs has no identifier column: Unrecognized name',
  },
  ...(['edge_logs', 'auth_logs', 'storage_logs', 'realtime_logs'] as const).map(
    (table): ExplorerQuery => ({
      id: `log-queries-${table.replace('_logs', '')}`,
      sql: `
    SELECT
      id,
      timestamp,
      event_message,
      metadata
    FROM ${table}
    ORDER BY timestamp DESC
    LIMIT 1000
  `,
      source: `${LOG_QUERIES}, its ${table} entry`,
      constructs: 'the whole metadata in the wire format, newest first, LIMIT 1000',
      expect: 'answers',
    }),
  ),
  {
    id: 'log-queries-postgres',
    sql: `
    SELECT
      id,
      timestamp,
      event_message,
      parsed.error_severity as error_severity,
      parsed.user_name as user_name,
      parsed.database_name as database_name,
      parsed.command_tag as command_tag
    FROM postgres_logs
    ORDER BY timestamp DESC
    LIMIT 1000
  `,
    source: `${LOG_QUERIES}, its postgres_logs entry`,
    constructs: 'parsed.x with no unnest of metadata',
    expect: 'bigquery-refuses',
    refusal: 'parsed',
    bigQueryRefuses: 'parsed is no column nor alias of postgres_logs without the unnests: Unrecognized name: parsed',
  },
  {
    id: 'mcp-cron-logs',
    sql: `SELECT
  id,
  postgres_logs.timestamp,
  event_message,
  identifier,
  parsed.error_severity,
  parsed.query,
  parsed.application_name
FROM postgres_logs
CROSS JOIN unnest(metadata) AS m
CROSS JOIN unnest(m.parsed) AS parsed
WHERE (parsed.application_name = 'pg_cron' OR event_message LIKE '%cron job%')

ORDER BY timestamp DESC
LIMIT 100;
`,
    source: 'saicharanrajoju/supabase-mcp-ai src/services/database/sql/queries/logs/cron_logs.sql, {and_where_clause} empty and {limit} 100',
    constructs: 'the platform-only identifier column, OR of = and LIKE',
    expect: 'bigquery-refuses',
    refusal: 'identifier',
    bigQueryRefuses: 'self-hosted postgres_logs has no identifier column: Unrecognized name',
  },
  {
    id: 'postgres-arrow-syntax',
    sql: `SELECT
  timestamp,
  event_message,
  metadata->>'function_id' as function_name,
  metadata->>'level' as level
FROM edge_logs
WHERE metadata->>'level' = 'error'
  AND timestamp > NOW() - INTERVAL '24 hours'
ORDER BY timestamp DESC
LIMIT 50;`,
    source: 'a public runbook on GitHub: "Fetch Supabase Logs" via the dashboard\'s Logs Explorer',
    constructs: "Postgres ->> and INTERVAL '24 hours'",
    expect: 'bigquery-refuses',
    refusal: 'does not parse',
    bigQueryRefuses: "->> is not BigQuery syntax (nor INTERVAL '24 hours' without a unit, nor NOW())",
  },
  {
    id: 'postgres-top-level-severity',
    sql: `SELECT
  timestamp,
  error_severity,
  message,
  detail
FROM postgres_logs
WHERE error_severity IN ('ERROR', 'FATAL')
  AND timestamp > NOW() - INTERVAL '24 hours'
ORDER BY timestamp DESC
LIMIT 50;`,
    source: 'a public runbook on GitHub: "Fetch Supabase Logs", its database errors',
    constructs: 'columns that are not top-level (error_severity, message, detail), NOW()',
    expect: 'bigquery-refuses',
    refusal: 'does not parse',
    bigQueryRefuses: "INTERVAL '24 hours' is not a BigQuery interval, and error_severity, message and detail are no columns of postgres_logs",
  },
  {
    id: 'postgres-level-star',
    sql: "SELECT * FROM postgres_logs WHERE level = 'error' \nORDER BY timestamp DESC LIMIT 10;",
    source: 'a public migration runbook on GitHub: "Check for errors" after each phase',
    constructs: 'a bare name that is no column (level)',
    expect: 'bigquery-refuses',
    refusal: 'level',
    bigQueryRefuses: 'postgres_logs has no column level: Unrecognized name: level',
  },
  {
    id: 'postgres-context-now',
    sql: "SELECT event_message, context, detail \nFROM postgres_logs \nWHERE timestamp > now() - interval '5 minutes'\nORDER BY timestamp DESC \nLIMIT 5;",
    source: 'a public test plan on GitHub: "Check Supabase logs for exact error"',
    constructs: "now() - interval '5 minutes', columns context and detail",
    expect: 'bigquery-refuses',
    refusal: 'does not parse',
    bigQueryRefuses: "interval '5 minutes' has no unit outside the string (a syntax error), and context/detail are no columns",
  },
];
