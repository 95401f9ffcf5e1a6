import { HOUR, isoMillis, MINUTE, type Micros } from './instants';
import type { LogTable } from './vector-sources';

/**
 * The SQL text self-hosted Supabase Studio sends to `logs.all`, character for character, as made by
 * its Logs pages (supabase/supabase `apps/studio/components/interfaces/Settings/Logs/Logs.utils.ts`
 * with `IS_PLATFORM` false, `Logs.constants.ts`, `apps/studio/data/logs/safe-analytics-sql.ts`;
 * the version of commit 0116d668b748d85af74af129726f86a56702d6b9). Written here from what those
 * functions produce, so the replay sends what Studio sends; each function names its Studio
 * counterpart.
 */

/** A Logs page's table as Studio names it (`LogsTableName`): the nine feeds, and the Cron page's `pg_cron_logs`. */
export type StudioTable = LogTable | 'pg_cron_logs';

/**
 * A Logs page's filter state (`Filters`): root keys in insertion order; a string root is one
 * condition (`search_query`, or a page's override such as `metadata.function_id`), an object root
 * a group of options joined with `or` (`{ status_code: { error: true, warning: true } }`).
 */
export type StudioFilters = Readonly<Record<string, string | Readonly<Record<string, boolean>>>>;

/** `analyticsLiteral` (safe-analytics-sql.ts): `'…'` with `'` and `\` doubled; numbers as they are. */
export function analyticsLiteral(value: string | number): string {
  if (typeof value === 'number') return String(value);
  return `'${value.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}

/** `quotedIdent` (safe-analytics-sql.ts): each part of a dotted name in backticks. */
export function quotedIdent(dotted: string): string {
  return dotted
    .split('.')
    .map((part) => `\`${part}\``)
    .join('.');
}

// AUTH_LOG_*_CONDITION (Logs.constants.ts): severity from the level and the HTTP status.
const AUTH_ERROR = "IFNULL(metadata.level, '') IN ('error', 'fatal') OR IFNULL(SAFE_CAST(metadata.status AS INT64), 0) >= 500";
const AUTH_WARNING = "IFNULL(metadata.level, '') = 'warning' OR IFNULL(SAFE_CAST(metadata.status AS INT64), 0) BETWEEN 400 AND 499";

const SEARCH = { search_query: (value: string) => `regexp_contains(event_message, ${analyticsLiteral(value)})` };
const HTTP_STATUS = {
  'status_code.error': 'response.status_code between 500 and 599',
  'status_code.success': 'response.status_code between 200 and 299',
  'status_code.warning': 'response.status_code between 400 and 499',
};

/** `SQL_FILTER_TEMPLATES` (Logs.constants.ts), for the tables of the self-hosted Logs pages. */
export const FILTER_SQL: Record<StudioTable, Record<string, string | ((value: string) => string)>> = {
  postgres_logs: {
    ...SEARCH,
    'severity.error': "parsed.error_severity in ('ERROR', 'FATAL', 'PANIC')",
    'severity.noError': "parsed.error_severity not in ('ERROR', 'FATAL', 'PANIC')",
    'severity.log': "parsed.error_severity = 'LOG'",
  },
  edge_logs: {
    ...SEARCH,
    ...HTTP_STATUS,
    'product.database': "request.path like '/rest/%' or request.path like '/graphql/%'",
    'product.storage': "request.path like '/storage/%'",
    'product.auth': "request.path like '/auth/%'",
    'product.realtime': "request.path like '/realtime/%'",
    'method.get': "request.method = 'GET'",
    'method.post': "request.method = 'POST'",
    'method.put': "request.method = 'PUT'",
    'method.patch': "request.method = 'PATCH'",
    'method.delete': "request.method = 'DELETE'",
    'method.options': "request.method = 'OPTIONS'",
  },
  function_edge_logs: { ...SEARCH, ...HTTP_STATUS },
  function_logs: {
    ...SEARCH,
    'severity.error': "metadata.level = 'error'",
    'severity.notError': "metadata.level != 'error'",
    'severity.log': "metadata.level = 'log'",
    'severity.info': "metadata.level = 'info'",
    'severity.debug': "metadata.level = 'debug'",
    'severity.warn': "metadata.level = 'warn'",
  },
  auth_logs: {
    ...SEARCH,
    'severity.error': AUTH_ERROR,
    'severity.warning': AUTH_WARNING,
    'severity.info': `NOT (${AUTH_ERROR}) AND NOT (${AUTH_WARNING})`,
    'status_code.server_error': 'cast(metadata.status as int64) between 500 and 599',
    'status_code.client_error': 'cast(metadata.status as int64) between 400 and 499',
    'status_code.redirection': 'cast(metadata.status as int64) between 300 and 399',
    'status_code.success': 'cast(metadata.status as int64) between 200 and 299',
    'endpoints.admin': 'REGEXP_CONTAINS(metadata.path, "/admin")',
    'endpoints.signup': 'REGEXP_CONTAINS(metadata.path, "/signup|/invite|/verify")',
    'endpoints.authentication': 'REGEXP_CONTAINS(metadata.path, "/token|/authorize|/callback|/otp|/magiclink")',
    'endpoints.recover': 'REGEXP_CONTAINS(metadata.path, "/recover")',
    'endpoints.user': 'REGEXP_CONTAINS(metadata.path, "/user")',
    'endpoints.logout': 'REGEXP_CONTAINS(metadata.path, "/logout")',
  },
  realtime_logs: { ...SEARCH },
  storage_logs: { ...SEARCH },
  postgrest_logs: { ...SEARCH },
  pgbouncer_logs: { ...SEARCH },
  pg_cron_logs: { ...SEARCH },
};

/**
 * The clauses of `buildWhereClauses` (Logs.utils.ts): each root key one parenthesised clause, a
 * group's selected options joined with ` or `, a key without a template `` `a`.`b` = 'value' ``;
 * empty strings and unselected options leave nothing.
 */
export function whereClauses(table: StudioTable, filters: StudioFilters): string[] {
  const templates = FILTER_SQL[table];
  const resolve = (key: string, value: string | boolean): string | null => {
    const template = templates[key];
    if (template === undefined) return `${quotedIdent(key)} = ${typeof value === 'string' ? analyticsLiteral(value) : String(value)}`;
    if (typeof template === 'function') return typeof value === 'string' ? template(value) : null;
    return value === false ? null : template;
  };
  const clauses: string[] = [];
  for (const [root, value] of Object.entries(filters)) {
    if (typeof value === 'string') {
      const clause = value === '' ? null : resolve(root, value);
      if (clause !== null) clauses.push(`(${clause})`);
      continue;
    }
    const group = Object.entries(value)
      .filter(([, on]) => on)
      .map(([option]) => resolve(`${root}.${option}`, true))
      .filter((c): c is string => c !== null);
    if (group.length) clauses.push(`(${group.join(' or ')})`);
  }
  return clauses;
}

/** `genWhereStatement` (Logs.utils.ts): `where <clauses joined with and>`, or nothing. */
export function whereOf(table: StudioTable, filters: StudioFilters): string {
  const clauses = whereClauses(table, filters);
  return clauses.length ? `where ${clauses.join(' and ')}` : '';
}

/** `genCrossJoinUnnests` (Logs.utils.ts). */
export function joinsOf(table: StudioTable): string {
  switch (table) {
    case 'edge_logs':
      return 'cross join unnest(metadata) as m\n  cross join unnest(m.request) as request\n  cross join unnest(m.response) as response';
    case 'pg_cron_logs':
    case 'postgres_logs':
      return 'cross join unnest(metadata) as m\n  cross join unnest(m.parsed) as parsed';
    case 'function_logs':
    case 'auth_logs':
      return 'cross join unnest(metadata) as metadata';
    case 'function_edge_logs':
      return 'cross join unnest(metadata) as m\n  cross join unnest(m.response) as response\n  cross join unnest(m.request) as request';
    default:
      return '';
  }
}

/** `basePgCronConditions` of self-hosted Studio (Logs.utils.ts): a Postgres cast, Logflare-on-Postgres's workaround. */
export const PG_CRON_CONDITION = "( parsed.application_name = 'pg_cron' or event_message::text LIKE '%cron job%' )";

/** `genDefaultQuery(table, filters)` (Logs.utils.ts, `IS_PLATFORM` false): a Logs page's list. */
export function defaultQuery(table: StudioTable, filters: StudioFilters, limit = 100): string {
  const where = whereOf(table, filters);
  const joins = joinsOf(table);
  const order = 'order by timestamp desc';
  switch (table) {
    case 'edge_logs':
      return `\n-- local dev edge_logs query\nselect id, edge_logs.timestamp, event_message, request.method, request.path, request.search, response.status_code\nfrom edge_logs\n${joins}\n${where}\n${order}\nlimit ${limit};\n`;
    case 'postgres_logs':
      return `\nselect postgres_logs.timestamp, id, event_message, parsed.error_severity, parsed.detail, parsed.hint\nfrom postgres_logs\n${joins}\n${where}\n${order}\nlimit ${limit}\n  `;
    case 'function_logs':
      return `select id, function_logs.timestamp, event_message, metadata.event_type, metadata.function_id, metadata.execution_id, metadata.level from function_logs\n  ${joins}\n  ${where}\n  ${order}\n  limit ${limit}\n    `;
    case 'auth_logs':
      return `select id, auth_logs.timestamp, event_message, metadata.level, metadata.status, metadata.path, metadata.msg as msg, metadata.error from auth_logs\n  ${joins}\n  ${where}\n  ${order}\n  limit ${limit}\n    `;
    case 'function_edge_logs':
      // Self-hosted: no unnest and no filter at all (the filters reach only the count and the chart).
      return `\nselect id, function_edge_logs.timestamp, event_message\nfrom function_edge_logs\n${order}\nlimit ${limit}\n`;
    case 'pg_cron_logs': {
      const clauses = whereClauses(table, filters);
      const cronWhere = clauses.length ? `where ${PG_CRON_CONDITION} AND ${clauses.join(' and ')}` : `where ${PG_CRON_CONDITION}`;
      return `select id, postgres_logs.timestamp, event_message, parsed.error_severity, parsed.query\nfrom postgres_logs\n${joins}\n${cronWhere}\n${order}\nlimit ${limit}\n`;
    }
    default:
      return `select id, ${table}.timestamp, event_message from ${table}\n  ${where}\n  ${order}\n  limit ${limit}\n  `;
  }
}

/** `genCountQuery(table, filters)` (Logs.utils.ts): the Cron page counts every cron line, whatever its filters. */
export function countQuery(table: StudioTable, filters: StudioFilters): string {
  const [from, where] = table === 'pg_cron_logs' ? ['postgres_logs', `where ${PG_CRON_CONDITION}`] : [table, whereOf(table, filters)];
  return `SELECT count(*) as count FROM ${from} ${joinsOf(from as StudioTable)} ${where}`;
}

/** `getErrorCondition` and `getWarningCondition` (Logs.utils.ts), by the page's own table. */
export function severityConditions(table: StudioTable): { error: string; warning: string } {
  const httpError = 'response.status_code >= 500';
  const httpWarning = 'response.status_code >= 400 AND response.status_code < 500';
  switch (table) {
    case 'edge_logs':
    case 'function_edge_logs':
      return { error: httpError, warning: httpWarning };
    case 'postgres_logs':
      return { error: "parsed.error_severity IN ('ERROR', 'FATAL', 'PANIC')", warning: "parsed.error_severity IN ('WARNING')" };
    case 'pg_cron_logs':
      return { error: "parsed.error_severity IN ('ERROR', 'FATAL', 'PANIC')", warning: 'false' };
    case 'auth_logs':
      return { error: AUTH_ERROR, warning: AUTH_WARNING };
    case 'function_logs':
      return { error: "metadata.level IN ('error', 'fatal')", warning: "metadata.level IN ('warning')" };
    default:
      return { error: 'false', warning: 'false' };
  }
}

/** The chart's bucket unit and its lower bound: `calcChartStart` (Logs.utils.ts) on Studio's clock `studioNow`. */
export function chartStart(range: { start: string; end: string }, studioNow: Micros): { trunc: 'minute' | 'hour'; startOffset: Micros } {
  const end = range.end ? Date.parse(range.end) * 1000 : studioNow;
  const start = range.start ? Date.parse(range.start) * 1000 : studioNow;
  // dayjs's diff in whole minutes; past 12 hours the buckets are hours (its `day` branch is never reached).
  const minutes = Math.trunc((end - start) / MINUTE);
  return minutes > 60 * 12 ? { trunc: 'hour', startOffset: start - 24 * 5 * HOUR } : { trunc: 'minute', startOffset: start - 60 * 6 * MINUTE };
}

/** `genChartQuery(table, params, filters)` (Logs.utils.ts): counts per bucket, by severity. */
export function chartQuery(table: StudioTable, range: { start: string; end: string }, filters: StudioFilters, studioNow: Micros): string {
  const { trunc, startOffset } = chartStart(range, studioNow);
  const { error, warning } = severityConditions(table);
  const [from, where] = table === 'pg_cron_logs' ? ['postgres_logs' as const, `where ${PG_CRON_CONDITION}`] : [table, whereOf(table, filters)];
  const after = analyticsLiteral(isoMillis(startOffset));
  const whereFragment = where ? `${where} and t.timestamp > ${after}` : `where t.timestamp > ${after}`;
  return `\nSELECT\n-- log-event-chart\n  timestamp_trunc(t.timestamp, ${trunc}) as timestamp,\n  count(CASE WHEN NOT (${error} OR ${warning}) THEN 1 END) as ok_count,\n  count(CASE WHEN ${error} THEN 1 END) as error_count,\n  count(CASE WHEN ${warning} THEN 1 END) as warning_count,\nFROM\n  ${from} t\n  ${joinsOf(from)}\n  ${whereFragment}\nGROUP BY\ntimestamp\nORDER BY\n  timestamp ASC\n  `;
}

/** `genSingleLogQuery(table, id)` (Logs.utils.ts): the row a click on a log opens. */
export function singleLogQuery(table: LogTable, id: string): string {
  return `select id, timestamp, event_message, metadata from ${table} where id = ${analyticsLiteral(id)} limit 1`;
}
