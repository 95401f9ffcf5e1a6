import { HOUR, MINUTE, type Micros } from './instants';
import { filtersHold, isCronLine, pageScopes, SEVERITY, type Scope } from './reference-filters';
import { and3, field, not3, or3, startsWith, tableRows, tieGroups, wire, type TableRow, type Tri } from './reference-rows';
import { templateAnswer } from './reference-templates';
import type { StudioFilters, StudioTable } from './studio-sql';
import type { RequestSpec, StudioRequest } from './studio-requests';
import { LOG_TABLES, type LogTable, type VectorEvents } from './vector-sources';

/**
 * The answer `logs.all` owes each of Studio's requests (studio-requests.ts), computed from the
 * events alone in plain TypeScript: no SQL engine, nothing of src/, no parsing of the SQL (each
 * request kind has its function, fed by the parameters its SQL was made of). Answers are in
 * Logflare's wire format (docs/supabase.md): timestamps as integer microseconds, objects wrapped.
 *
 * Semantics (docs/supabase.md, docs/sandboxing.md): each table holds its feed's events within the
 * request's bounds, no tier window (reference-rows.ts `tableRows`); every event is the one
 * project's; `cross join unnest` keeps a row whose record is missing; a dotted path's column is
 * named after its last part; a bare name resolves through the unnest aliases; a SELECT alias wins
 * over a column of the same name in GROUP BY / ORDER BY; numbers compare as numbers; LIMIT, and the
 * endpoint's 1000 rows.
 */

/** A row of an answer, in the wire format. */
export type WireRow = Record<string, unknown>;

/**
 * An expected answer. `groups` are the rows in the query's order, tied rows in one group (their
 * order is the engine's: compared as a multiset); at most `limit` rows, so the last group reached
 * may be cut anywhere. A query without ORDER BY is one group.
 */
export type Expected = { status: 200; groups: WireRow[][]; limit: number } | { status: 400; mentions: string[] };

/** The endpoint's own bound on rows (docs/sandboxing.md, "Limits"). */
export const MAX_ROWS = 1000;

/**
 * The answer `logs.all` owes `request` over `events` (the request's bounds are instants already).
 *
 * @example
 * const expected = expectedAnswer(studioRequests(NOW)[0]!, events);
 */
export function expectedAnswer(request: StudioRequest, events: VectorEvents): Expected {
  const spec = request.spec;
  const rowsOf = (table: LogTable) => tableRows(events, table, request);
  switch (spec.kind) {
    case 'list':
      return listAnswer(spec.page, spec.filters, rowsOf(readsFrom(spec.page)));
    case 'count':
      return one({ count: pageRows(spec, rowsOf(readsFrom(spec.page))).length });
    case 'chart':
      return chartAnswer(spec, rowsOf(readsFrom(spec.page)));
    case 'single':
      return singleAnswer(spec, rowsOf(spec.table));
    case 'template':
      return templateAnswer(spec.label, (table) => (LOG_TABLES.includes(table as LogTable) ? rowsOf(table as LogTable) : null));
    case 'usage':
      return usageAnswer(rowsOf('edge_logs'));
  }
}

/** The table a page's SQL reads: the Cron page reads Postgres's. */
function readsFrom(page: StudioTable): LogTable {
  return page === 'pg_cron_logs' ? 'postgres_logs' : page;
}

function one(row: WireRow): Expected {
  return { status: 200, groups: [[row]], limit: MAX_ROWS };
}

/** The columns of each page's list (`genDefaultQuery`): a dotted path is named after its last part. */
const LIST_COLUMNS: Record<StudioTable, ReadonlyArray<readonly [string, (s: Scope) => unknown]>> = {
  edge_logs: [
    ['method', (s) => field(s.request, 'method')],
    ['path', (s) => field(s.request, 'path')],
    ['search', (s) => field(s.request, 'search')],
    ['status_code', (s) => field(s.response, 'status_code')],
  ],
  postgres_logs: [
    ['error_severity', (s) => field(s.parsed, 'error_severity')],
    ['detail', (s) => field(s.parsed, 'detail')],
    ['hint', (s) => field(s.parsed, 'hint')],
  ],
  pg_cron_logs: [
    ['error_severity', (s) => field(s.parsed, 'error_severity')],
    ['query', (s) => field(s.parsed, 'query')],
  ],
  function_logs: ['event_type', 'function_id', 'execution_id', 'level'].map((k) => [k, (s: Scope) => field(s.metadata, k)] as const),
  auth_logs: ['level', 'status', 'path', 'msg', 'error'].map((k) => [k, (s: Scope) => field(s.metadata, k)] as const),
  function_edge_logs: [],
  realtime_logs: [],
  storage_logs: [],
  postgrest_logs: [],
  pgbouncer_logs: [],
};

/** What a page's query is made of. */
type PageSpec = { kind: 'list' | 'count' | 'chart'; page: StudioTable; filters: StudioFilters };

/**
 * The rows a page's query keeps: the Cron page's own condition, and its filters, except that the
 * Cron page's count and chart ignore its filters (Studio replaces their WHERE) and self-hosted's
 * function_edge_logs list has neither unnest nor filter.
 */
function pageRows(spec: PageSpec, rows: TableRow[]): Scope[] {
  const { page, filters } = spec;
  if (spec.kind === 'list' && page === 'function_edge_logs') return rows.map((row) => ({ row }));
  const cronOnly = page === 'pg_cron_logs' && spec.kind !== 'list';
  return pageScopes(page, rows).filter((s) => {
    const own: Tri = page === 'pg_cron_logs' ? isCronLine(s) : true;
    return and3(own, cronOnly ? true : filtersHold(page, filters, s)) === true;
  });
}

function listAnswer(page: StudioTable, filters: StudioFilters, rows: TableRow[]): Expected {
  const scopes = pageRows({ kind: 'list', page, filters }, rows);
  const wireRows = scopes.map((s) => {
    const out: WireRow = { id: s.row.id, timestamp: s.row.micros, event_message: s.row.event_message };
    for (const [name, value] of LIST_COLUMNS[page]) out[name] = wire(value(s));
    return { out, micros: s.row.micros };
  });
  return { status: 200, groups: tieGroups(wireRows, (r) => r.micros, 'desc').map((g) => g.map((r) => r.out)), limit: 100 };
}

/** Start of the bucket of `unit` holding `micros`. */
export function truncate(micros: Micros, unit: 'minute' | 'hour'): Micros {
  const size = unit === 'minute' ? MINUTE : HOUR;
  return Math.floor(micros / size) * size;
}

function chartAnswer(spec: Extract<RequestSpec, { kind: 'chart' }>, rows: TableRow[]): Expected {
  const severity = SEVERITY[spec.page];
  const buckets = new Map<Micros, { ok: number; error: number; warning: number }>();
  for (const s of pageRows(spec, rows)) {
    if (s.row.micros <= spec.startOffset) continue;
    const bucket = truncate(s.row.micros, spec.trunc);
    const counts = buckets.get(bucket) ?? { ok: 0, error: 0, warning: 0 };
    const error = severity.error(s);
    const warning = severity.warning(s);
    // count(CASE WHEN c THEN 1 END) counts the rows where c is true, never where it is NULL.
    if (not3(or3(error, warning)) === true) counts.ok++;
    if (error === true) counts.error++;
    if (warning === true) counts.warning++;
    buckets.set(bucket, counts);
  }
  const out = [...buckets.entries()].sort(([a], [b]) => a - b);
  return { status: 200, groups: out.map(([bucket, c]) => [{ timestamp: bucket, ok_count: c.ok, error_count: c.error, warning_count: c.warning }]), limit: MAX_ROWS };
}

function singleAnswer(spec: Extract<RequestSpec, { kind: 'single' }>, rows: TableRow[]): Expected {
  const same = spec.sameAs;
  const found = same ? rows.filter((r) => r.micros === same.micros && r.event_message === same.event_message) : rows.filter((r) => r.id === spec.id);
  const candidates = found.map((r) => ({ id: spec.id, timestamp: r.micros, event_message: r.event_message, metadata: wire(r.metadata) }));
  return { status: 200, groups: candidates.length ? [candidates] : [], limit: 1 };
}

function usageAnswer(rows: TableRow[]): Expected {
  const buckets = new Map<Micros, WireRow>();
  const products = [
    ['total_rest_requests', '/rest/v1'],
    ['total_auth_requests', '/auth/v1'],
    ['total_storage_requests', '/storage/v1'],
    ['total_realtime_requests', '/realtime/v1'],
  ] as const;
  for (const s of pageScopes('edge_logs', rows)) {
    const bucket = truncate(s.row.micros, 'hour');
    const row = buckets.get(bucket) ?? Object.fromEntries([['timestamp', bucket], ...products.map(([name]) => [name, 0])]);
    for (const [name, prefix] of products) if (startsWith(field(s.request, 'path'), prefix) === true) (row[name] as number)++;
    buckets.set(bucket, row);
  }
  return { status: 200, groups: [...buckets.entries()].sort(([a], [b]) => a - b).map(([, row]) => [row]), limit: MAX_ROWS };
}
