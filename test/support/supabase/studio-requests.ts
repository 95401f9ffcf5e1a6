import { DAY, HOUR, isoMillis, microsOf, MINUTE, type Micros } from './instants';
import { chartQuery, chartStart, countQuery, defaultQuery, singleLogQuery, type StudioFilters, type StudioTable } from './studio-sql';
import { EXPLORER_TEMPLATES, SELF_HOSTED_USAGE_SQL, type ExplorerTemplateLabel } from './studio-templates';
import { LOG_TABLES, type LogTable } from './vector-sources';

/**
 * Studio's requests to `logs.all`, as self-hosted Studio makes them (supabase/supabase, commit
 * 0116d668 and the hooks beside it): the Logs pages (`useLogsPreview`: the list, the "new logs"
 * count, the chart; `useSingleLog`: the log a click opens), the Logs Explorer (`useLogsQuery`:
 * its templates) and the home page's usage chart (`getSelfHostedUsage`). Each carries the data
 * its SQL was made from (`spec`), which is what the reference computes the answer from.
 */

/** What a request's answer is computed from (reference.ts), the parameters of its SQL. */
export type RequestSpec =
  | { kind: 'list'; page: StudioTable; filters: StudioFilters }
  | { kind: 'count'; page: StudioTable; filters: StudioFilters }
  | { kind: 'chart'; page: StudioTable; filters: StudioFilters; trunc: 'minute' | 'hour'; startOffset: Micros }
  /** `sameAs`: the id is one the server made, for the event with this time and message. */
  | { kind: 'single'; table: LogTable; id: string; sameAs?: { micros: Micros; event_message: string | null } }
  | { kind: 'template'; label: ExplorerTemplateLabel }
  | { kind: 'usage' };

/** The Studio code that sends a request: it decides the order of the query-string parameters. */
export type StudioHook = 'useLogsPreview' | 'useLogsPreview count' | 'useLogsPreview chart' | 'useSingleLog' | 'useLogsQuery' | 'getSelfHostedUsage';

/** One request of Studio's to `logs.all`. */
export interface StudioRequest {
  /** Unique and readable: the page, the kind, the detail. */
  name: string;
  /** The table of the page (or of the template) the SQL is about. */
  table: string;
  sql: string;
  iso_timestamp_start: string;
  iso_timestamp_end: string;
  via: StudioHook;
  spec: RequestSpec;
}

/** A time range of the date picker: `end` '' is "until now" (Studio sends the empty string). */
interface Range {
  label: string;
  start: string;
  end: string;
}

interface Page {
  table: StudioTable;
  label: string;
  /** `FILTER_OPTIONS` of the table (self-hosted): the filter menu's groups and options. */
  options: Record<string, string[]>;
  /** What users type in the search box (the `simple` templates among them). */
  searches: string[];
  /** `filterOverride` of the page (the function pages). */
  override?: StudioFilters;
}

/** The Logs pages of self-hosted Studio (`LogsSidebarMenuV2`, plus PgBouncer's and the function pages' previewers). */
const PAGES: readonly Page[] = [
  {
    table: 'edge_logs',
    label: 'API Gateway',
    options: { status_code: ['error', 'success', 'warning'], product: ['database', 'auth', 'storage', 'realtime'], method: ['get', 'options', 'put', 'post', 'patch', 'delete'] },
    // "Recent Errors" (a simple template); a status seen as text; a backslash typed as a regex escape.
    searches: ['[Ee]rror|\\s[45][0-9][0-9]\\s', ' 404 ', '\\\\x22quoted'],
  },
  { table: 'postgres_logs', label: 'Postgres', options: { severity: ['error', 'noError', 'log'] }, searches: ['COMMIT', 'tâche', 'ERROR|FATAL'] },
  { table: 'postgrest_logs', label: 'PostgREST', options: {}, searches: ['Schema cache'] },
  {
    table: 'auth_logs',
    label: 'Auth',
    options: {
      severity: ['error', 'warning', 'info'],
      status_code: ['server_error', 'client_error', 'redirection', 'success'],
      endpoints: ['admin', 'signup', 'recover', 'authentication', 'user', 'logout'],
    },
    searches: ['invalid', "Supabase's GoTrue"],
  },
  { table: 'storage_logs', label: 'Storage', options: {}, searches: ['Über'] },
  { table: 'realtime_logs', label: 'Realtime', options: {}, searches: ["doesn't exist"] },
  { table: 'function_edge_logs', label: 'Edge Functions', options: {}, searches: [' 500 '] },
  { table: 'pg_cron_logs', label: 'Cron', options: {}, searches: ['failed'] },
  { table: 'pgbouncer_logs', label: 'PgBouncer', options: {}, searches: ['login attempt'] },
  { table: 'function_logs', label: 'Function hello: Logs', options: { severity: ['error', 'warn', 'info', 'debug', 'log'] }, searches: ['Error'], override: { 'metadata.function_id': 'hello' } },
  { table: 'function_edge_logs', label: 'Function hello: Invocations', options: {}, searches: [], override: { function_id: 'hello' } },
];

/** The filter state of a page: the menu's choices, then the page's override, then the search (`mergedFilters`). */
function filtersOf(page: Page, chosen: StudioFilters = {}, search?: string): StudioFilters {
  return { ...chosen, ...page.override, ...(search ? { search_query: search } : {}) };
}

function pageRequests(page: Page, now: Micros): StudioRequest[] {
  const out: StudioRequest[] = [];
  const ranges = rangesAt(now);
  const list = (range: Range, filters: StudioFilters, detail: string) =>
    out.push({
      ...at(range),
      name: `${page.label}: list, ${range.label}${detail}`,
      table: page.table,
      sql: defaultQuery(page.table, filters),
      via: 'useLogsPreview',
      spec: { kind: 'list', page: page.table, filters },
    });
  const count = (range: Range, filters: StudioFilters, detail: string) =>
    out.push({
      ...at(range),
      name: `${page.label}: new-logs count, ${range.label}${detail}`,
      table: page.table,
      sql: countQuery(page.table, filters),
      via: 'useLogsPreview count',
      spec: { kind: 'count', page: page.table, filters },
    });
  const chart = (range: Range, filters: StudioFilters, detail: string) => {
    const { trunc, startOffset } = chartStart(range, now);
    const sql = chartQuery(page.table, range, filters, now);
    out.push({
      ...at(range),
      name: `${page.label}: chart by ${trunc}, ${range.label}${detail}`,
      table: page.table,
      sql,
      via: 'useLogsPreview chart',
      spec: { kind: 'chart', page: page.table, filters, trunc, startOffset },
    });
  };

  const none = filtersOf(page);
  list(ranges.lastHour, none, '');
  list(ranges.last24h, none, '');
  list(ranges.barClick, none, '');
  for (const [group, options] of Object.entries(page.options)) {
    for (const option of options) list(ranges.lastHour, filtersOf(page, { [group]: { [option]: true } }), `, ${group} ${option}`);
  }
  for (const search of page.searches) list(ranges.lastHour, filtersOf(page, {}, search), `, search ${JSON.stringify(search)}`);
  const groups = Object.entries(page.options);
  const some: StudioFilters = groups.length ? { [groups[0]![0]]: Object.fromEntries(groups[0]![1].slice(0, 2).map((o) => [o, true])) } : {};
  if (groups.length > 1) Object.assign(some, { [groups[1]![0]]: { [groups[1]![1][0]!]: true } });
  if (groups.length) list(ranges.last24h, filtersOf(page, some, page.searches[0]), `, ${JSON.stringify(some)} and search`);
  const first: StudioFilters = groups.length ? { [groups[0]![0]]: { [groups[0]![1][0]!]: true } } : {};
  const firstFilters = filtersOf(page, first, groups.length ? undefined : page.searches[0]);
  count(ranges.pageLoad, none, '');
  count(ranges.refreshed, firstFilters, ', filtered');
  chart(ranges.lastHour, none, '');
  chart(ranges.last24h, none, '');
  chart(ranges.lastHour, firstFilters, ', filtered');
  if (page.table === 'edge_logs') {
    list(ranges.last3days, none, '');
    chart(ranges.last3days, none, '');
  }
  if (page.table === 'edge_logs' || (page.table === 'postgres_logs' && !page.override)) {
    list(ranges.last7days, none, '');
    chart(ranges.last7days, none, '');
  }
  return out;
}

/** The date picker's ranges on Studio's clock (`PREVIEWER_DATEPICKER_HELPERS`: "Last hour" is the default). */
function rangesAt(now: Micros) {
  const since = (label: string, micros: Micros): Range => ({ label, start: isoMillis(now - micros), end: '' });
  return {
    lastHour: since('last hour', HOUR),
    last24h: since('last 24 hours', DAY),
    last3days: since('last 3 days', 3 * DAY),
    // The Explorer's and the pages' "Last 7 days": the whole week, with no tier window (docs/supabase.md).
    last7days: since('last 7 days', 7 * DAY),
    // A click on the chart's bar of one minute: one minute either side of it, both ends given.
    barClick: { label: 'a bar of the chart', start: isoMillis(now - HOUR - 2 * MINUTE), end: isoMillis(now - HOUR) },
    // The "new logs" count asks from the last refresh on: at page load, and five minutes later.
    pageLoad: since('since page load', 0),
    refreshed: since('since a refresh 5 minutes ago', 5 * MINUTE),
  };
}

function at(range: Pick<Range, 'start' | 'end'>) {
  return { iso_timestamp_start: range.start, iso_timestamp_end: range.end };
}

/** A log that does not exist, opened with no range (`useSingleLog` falls back to the empty bounds). */
const NO_SUCH_ID = '00000000-0000-4000-8000-000000000000';

/**
 * Every request of Studio's this suite replays, with Studio's clock at `studioNow` (the date
 * picker and the chart's window are computed on it).
 *
 * @example
 * const requests = studioRequests(new Date('2026-11-21T12:00:00Z'));
 */
export function studioRequests(studioNow: Date): StudioRequest[] {
  const now = microsOf(studioNow);
  const requests = PAGES.flatMap((page) => pageRequests(page, now));
  const empty = { label: 'no range', start: '', end: '' };
  for (const table of LOG_TABLES) requests.push(singleLogRequest(table, NO_SUCH_ID, empty));
  requests.push(singleLogRequest('edge_logs', "x' or 'a'='a", empty));
  const { lastHour, last24h, last7days } = rangesAt(now);
  for (const range of [lastHour, last24h, last7days]) {
    for (const template of EXPLORER_TEMPLATES) {
      if (range !== lastHour && template.table === 'auth_audit_logs') continue;
      requests.push({
        ...at(range),
        name: `Explorer: template ${template.label}, ${range.label}`,
        table: template.table,
        sql: template.sql,
        via: 'useLogsQuery',
        spec: { kind: 'template', label: template.label },
      });
    }
  }
  const usage = { start: isoMillis(now - DAY), end: isoMillis(now) };
  requests.push({ ...at(usage), name: 'Home: usage per hour, last 24 hours', table: 'edge_logs', sql: SELF_HOSTED_USAGE_SQL, via: 'getSelfHostedUsage', spec: { kind: 'usage' } });
  return requests;
}

/**
 * The log a click opens (`useSingleLog`): with no range, or a minute either side of the row's own
 * timestamp (`resolveSingleLogWindow`). `sameAs` names the event when the id is one the server made.
 */
export function singleLogRequest(table: LogTable, id: string, range: { label: string; start: string; end: string }, sameAs?: { micros: Micros; event_message: string | null }): StudioRequest {
  return {
    ...at(range),
    name: `${table}: single log ${JSON.stringify(id)}, ${range.label}`,
    table,
    sql: singleLogQuery(table, id),
    via: 'useSingleLog',
    spec: { kind: 'single', table, id, ...(sameAs ? { sameAs } : {}) },
  };
}

/** The window `useSingleLog` puts around a row's own timestamp: a minute either side, in milliseconds. */
export function aroundRow(micros: Micros): { label: string; start: string; end: string } {
  return { label: 'a minute around the row', start: isoMillis(micros - MINUTE), end: isoMillis(micros + MINUTE) };
}

/**
 * "Load older" after a page of a list (`useLogsPreview`'s `getNextPageParam`): the same request
 * with `iso_timestamp_end` the last row's timestamp in milliseconds (truncated), inclusive.
 */
export function olderPageRequest(list: StudioRequest, lastRowMicros: Micros): StudioRequest {
  return { ...list, name: `${list.name}, older page`, iso_timestamp_end: new Date(Math.trunc(lastRowMicros / 1000)).toISOString() };
}

/** The query-string order of each hook (openapi-fetch writes an object's keys in order). */
const SQL_FIRST: ReadonlySet<StudioHook> = new Set(['useLogsPreview count', 'useSingleLog', 'useLogsQuery', 'getSelfHostedUsage']);

/**
 * The URL Studio's server-side proxy (`retrieveAnalyticsData`, apps/studio/lib/api/self-hosted/logs.ts)
 * calls: `<LOGFLARE_URL>/api/endpoints/query/logs.all`, `project=default` first, then every
 * parameter the page sent, empty strings included, by `URLSearchParams` (spaces as `+`).
 */
export function studioUrl(logflareUrl: string, request: StudioRequest): URL {
  const url = new URL(`${logflareUrl}/api/endpoints/query/logs.all`);
  url.searchParams.set('project', 'default');
  const range: Array<[string, string]> = [
    ['iso_timestamp_start', request.iso_timestamp_start],
    ['iso_timestamp_end', request.iso_timestamp_end],
  ];
  const params: Array<[string, string]> = SQL_FIRST.has(request.via) ? [['sql', request.sql], ...range] : [...range, ['sql', request.sql]];
  for (const [key, value] of params) url.searchParams.set(key, value);
  return url;
}

/** The headers of that call: the private access token, JSON both ways. */
export function studioHeaders(privateToken: string): Record<string, string> {
  return { 'x-api-key': privateToken, 'Content-Type': 'application/json', Accept: 'application/json' };
}

/**
 * What Studio's proxy answers its page for our answer (`retrieveAnalyticsData` and the
 * `analytics/endpoints/[name]` route): a 2xx passes through as 200, anything else is a 500 whose
 * message is our `error.message`.
 */
export function throughStudioProxy(status: number, body: unknown): { status: number; body: unknown } {
  if (status >= 200 && status < 300) return { status: 200, body };
  const message = (body as { error?: { message?: unknown } } | null)?.error?.message;
  return { status: 500, body: { error: { message: typeof message === 'string' ? message : `Failed to retrieve analytics data: ${status}` } } };
}
