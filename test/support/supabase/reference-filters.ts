import { and3, between, castInt, compare, field, ifNull, isIn, like, not3, or3, regexpContains, safeInt, unnest, type TableRow, type Tri } from './reference-rows';
import type { StudioFilters, StudioTable } from './studio-sql';

/**
 * What Studio's filters, joins and severity conditions mean, as predicates over rows (the reference's
 * side of studio-sql.ts: the same keys, evaluated in TypeScript with SQL's three-valued logic).
 */

/** A row of a Logs page's query after its unnests: the table's row and each unnest alias's record. */
export interface Scope {
  row: TableRow;
  [alias: string]: unknown;
}

type Join = readonly [alias: string, value: (scope: Scope) => unknown];

const metadataOf = (s: Scope) => s.row.metadata;

/** `genCrossJoinUnnests` as data: each alias and what it unnests, in order. */
const JOINS: Record<StudioTable, readonly Join[]> = {
  edge_logs: [
    ['m', metadataOf],
    ['request', (s) => field(s.m, 'request')],
    ['response', (s) => field(s.m, 'response')],
  ],
  postgres_logs: [
    ['m', metadataOf],
    ['parsed', (s) => field(s.m, 'parsed')],
  ],
  pg_cron_logs: [
    ['m', metadataOf],
    ['parsed', (s) => field(s.m, 'parsed')],
  ],
  function_logs: [['metadata', metadataOf]],
  auth_logs: [['metadata', metadataOf]],
  function_edge_logs: [
    ['m', metadataOf],
    ['response', (s) => field(s.m, 'response')],
    ['request', (s) => field(s.m, 'request')],
  ],
  realtime_logs: [],
  storage_logs: [],
  postgrest_logs: [],
  pgbouncer_logs: [],
};

/** The rows of `rows` cross joined with unnests (a missing record kept as NULL: reference-rows.ts `unnest`). */
export function joined(rows: readonly TableRow[], joins: readonly Join[]): Scope[] {
  let scopes: Scope[] = rows.map((row) => ({ row }));
  for (const [alias, value] of joins) scopes = scopes.flatMap((s) => unnest(value(s)).map((record) => ({ ...s, [alias]: record })));
  return scopes;
}

/** The rows of a Logs page's query of `table` after its unnests. */
export function pageScopes(table: StudioTable, rows: readonly TableRow[]): Scope[] {
  return joined(rows, JOINS[table]);
}

type Predicate = (s: Scope, value: string) => Tri;

const search: Predicate = (s, value) => regexpContains(s.row.event_message, value);
const httpStatus =
  (low: number, high: number): Predicate =>
  (s) =>
    between(field(s.response, 'status_code'), low, high);
const path = (pattern: string) => (s: Scope) => like(field(s.request, 'path'), pattern);
const method =
  (name: string): Predicate =>
  (s) =>
    compare(field(s.request, 'method'), '=', name);
const severity =
  (list: string[]): Predicate =>
  (s) =>
    isIn(field(s.parsed, 'error_severity'), list);
const level =
  (name: string, op: '=' | '!=' = '='): Predicate =>
  (s) =>
    compare(field(s.metadata, 'level'), op, name);
const authStatus =
  (low: number, high: number): Predicate =>
  (s) =>
    between(castInt(field(s.metadata, 'status')), low, high);
const authPath =
  (pattern: string): Predicate =>
  (s) =>
    regexpContains(field(s.metadata, 'path'), pattern);

const authStatusOr0 = (s: Scope) => ifNull(safeInt(field(s.metadata, 'status')), 0);
const authLevel = (s: Scope) => ifNull(field(s.metadata, 'level'), '');
const authError = (s: Scope) => or3(isIn(authLevel(s), ['error', 'fatal']), compare(authStatusOr0(s), '>=', 500));
const authWarning = (s: Scope) => or3(compare(authLevel(s), '=', 'warning'), between(authStatusOr0(s), 400, 499));
const ERRORS = ['ERROR', 'FATAL', 'PANIC'];

/** `SQL_FILTER_TEMPLATES` as predicates, and the overrides of the function pages (keys without a template). */
const FILTERS: Record<StudioTable, Record<string, Predicate>> = {
  postgres_logs: {
    search_query: search,
    'severity.error': severity(ERRORS),
    'severity.noError': (s) => not3(severity(ERRORS)(s, '')),
    'severity.log': (s) => compare(field(s.parsed, 'error_severity'), '=', 'LOG'),
  },
  edge_logs: {
    search_query: search,
    'status_code.error': httpStatus(500, 599),
    'status_code.success': httpStatus(200, 299),
    'status_code.warning': httpStatus(400, 499),
    'product.database': (s) => or3(path('/rest/%')(s), path('/graphql/%')(s)),
    'product.storage': path('/storage/%'),
    'product.auth': path('/auth/%'),
    'product.realtime': path('/realtime/%'),
    'method.get': method('GET'),
    'method.post': method('POST'),
    'method.put': method('PUT'),
    'method.patch': method('PATCH'),
    'method.delete': method('DELETE'),
    'method.options': method('OPTIONS'),
  },
  function_edge_logs: {
    search_query: search,
    'status_code.error': httpStatus(500, 599),
    'status_code.success': httpStatus(200, 299),
    'status_code.warning': httpStatus(400, 499),
    // The function's Invocations tab: `function_id` names no alias, so it is `m.function_id`.
    function_id: (s, value) => compare(field(s.m, 'function_id'), '=', value),
  },
  function_logs: {
    search_query: search,
    'severity.error': level('error'),
    'severity.notError': level('error', '!='),
    'severity.log': level('log'),
    'severity.info': level('info'),
    'severity.debug': level('debug'),
    'severity.warn': level('warn'),
    // The function's Logs tab: `metadata` is the unnest alias.
    'metadata.function_id': (s, value) => compare(field(s.metadata, 'function_id'), '=', value),
  },
  auth_logs: {
    search_query: search,
    'severity.error': authError,
    'severity.warning': authWarning,
    'severity.info': (s) => and3(not3(authError(s)), not3(authWarning(s))),
    'status_code.server_error': authStatus(500, 599),
    'status_code.client_error': authStatus(400, 499),
    'status_code.redirection': authStatus(300, 399),
    'status_code.success': authStatus(200, 299),
    'endpoints.admin': authPath('/admin'),
    'endpoints.signup': authPath('/signup|/invite|/verify'),
    'endpoints.authentication': authPath('/token|/authorize|/callback|/otp|/magiclink'),
    'endpoints.recover': authPath('/recover'),
    'endpoints.user': authPath('/user'),
    'endpoints.logout': authPath('/logout'),
  },
  realtime_logs: { search_query: search },
  storage_logs: { search_query: search },
  postgrest_logs: { search_query: search },
  pgbouncer_logs: { search_query: search },
  pg_cron_logs: { search_query: search },
};

function predicate(table: StudioTable, key: string): Predicate {
  const found = FILTERS[table][key];
  if (!found) throw new Error(`reference: no meaning for the filter ${key} of ${table}`);
  return found;
}

/** Whether a row passes a page's filters (`genWhereStatement`): roots joined with and, a group's options with or. */
export function filtersHold(table: StudioTable, filters: StudioFilters, s: Scope): Tri {
  const clauses: Tri[] = [];
  for (const [root, value] of Object.entries(filters)) {
    if (typeof value === 'string') {
      if (value !== '') clauses.push(predicate(table, root)(s, value));
      continue;
    }
    const options = Object.entries(value)
      .filter(([, on]) => on)
      .map(([option]) => predicate(table, `${root}.${option}`)(s, ''));
    if (options.length) clauses.push(or3(...options));
  }
  return and3(...clauses);
}

/** The Cron page's own condition: pg_cron's application name, or a line that says "cron job". */
export function isCronLine(s: Scope): Tri {
  return or3(compare(field(s.parsed, 'application_name'), '=', 'pg_cron'), like(s.row.event_message, '%cron job%'));
}

/** `getErrorCondition` / `getWarningCondition` of a page, as predicates. */
export const SEVERITY: Record<StudioTable, { error: (s: Scope) => Tri; warning: (s: Scope) => Tri }> = {
  edge_logs: httpSeverity(),
  function_edge_logs: httpSeverity(),
  postgres_logs: { error: (s) => severity(ERRORS)(s, ''), warning: (s) => severity(['WARNING'])(s, '') },
  pg_cron_logs: { error: (s) => severity(ERRORS)(s, ''), warning: () => false },
  auth_logs: { error: authError, warning: authWarning },
  function_logs: { error: (s) => isIn(field(s.metadata, 'level'), ['error', 'fatal']), warning: (s) => isIn(field(s.metadata, 'level'), ['warning']) },
  realtime_logs: { error: () => false, warning: () => false },
  storage_logs: { error: () => false, warning: () => false },
  postgrest_logs: { error: () => false, warning: () => false },
  pgbouncer_logs: { error: () => false, warning: () => false },
};

function httpSeverity() {
  const status = (s: Scope) => field(s.response, 'status_code');
  return {
    error: (s: Scope) => compare(status(s), '>=', 500),
    warning: (s: Scope) => and3(compare(status(s), '>=', 400), compare(status(s), '<', 500)),
  };
}

/** Rows grouped by `key`: each group's key values and its rows, in the order groups first appear. */
export function groupBy(scopes: readonly Scope[], key: (s: Scope) => unknown[]): Array<{ keys: unknown[]; scopes: Scope[] }> {
  const groups = new Map<string, { keys: unknown[]; scopes: Scope[] }>();
  for (const s of scopes) {
    const keys = key(s);
    const id = JSON.stringify(keys);
    const group = groups.get(id) ?? { keys, scopes: [] };
    group.scopes.push(s);
    groups.set(id, group);
  }
  return [...groups.values()];
}
