import { groupBy, joined, type Scope } from './reference-filters';
import { and3, compare, field, isIn, like, or3, regexpContains, startsWith, tieGroups, wire, type TableRow, type Tri } from './reference-rows';
import type { Expected, WireRow } from './reference';
import type { ExplorerTemplateLabel } from './studio-templates';
import { LOG_TABLES } from './vector-sources';

/**
 * The answers of the Logs Explorer's templates (studio-templates.ts), one function per template,
 * written from what each template's SQL asks (reference.ts states the rules).
 */

const MAX_ROWS = 1000;
const metadata = (s: Scope) => s.row.metadata;
const m = ['m', metadata] as const;

const kept = (scopes: Scope[], where: (s: Scope) => Tri) => scopes.filter((s) => where(s) === true);
const unordered = (rows: WireRow[], limit = MAX_ROWS): Expected => ({ status: 200, groups: rows.length ? [rows] : [], limit });
const newestFirst = (scopes: Scope[], row: (s: Scope) => WireRow): Expected => ({
  status: 200,
  groups: tieGroups(scopes, (s) => s.row.micros, 'desc').map((g) => g.map(row)),
  limit: 100,
});
const byCountDesc = (rows: WireRow[], count: string): Expected => ({ status: 200, groups: tieGroups(rows, (r) => r[count] as number, 'desc'), limit: 100 });

type Rows = (table: string) => TableRow[] | null;

const TEMPLATES: Record<ExplorerTemplateLabel, (rows: Rows) => Expected> = {
  'Commits By User': (rows) => {
    const scopes = kept(joined(rows('postgres_logs')!, [m, ['p', (s) => field(s.m, 'parsed')]]), (s) => regexpContains(s.row.event_message, 'COMMIT'));
    return unordered(groupBy(scopes, (s) => [field(s.p, 'user_name')]).map((g) => ({ user_name: wire(g.keys[0]), count: g.scopes.length })));
  },
  'Metadata IP': (rows) => {
    const scopes = joined(rows('edge_logs')!, [m, ['r', (s) => field(s.m, 'request')], ['h', (s) => field(s.r, 'headers')]]);
    return unordered(scopes.filter((s) => field(s.h, 'x_real_ip') !== null).map((s) => ({ timestamp: s.row.micros, x_real_ip: wire(field(s.h, 'x_real_ip')) })));
  },
  'Requests by Geography': (rows) => {
    const scopes = joined(rows('edge_logs')!, [m, ['r', (s) => field(s.m, 'request')], ['cf', (s) => field(s.r, 'cf')]]);
    return {
      ...byCountDesc(
        groupBy(scopes, (s) => [field(s.cf, 'country')]).map((g) => ({ country: wire(g.keys[0]), count: g.scopes.length })),
        'count',
      ),
      limit: MAX_ROWS,
    };
  },
  'Slow Response Time': (rows) => {
    const scopes = kept(joined(rows('edge_logs')!, [m, ['r', (s) => field(s.m, 'response')]]), (s) => compare(field(s.r, 'origin_time'), '>', 1000));
    return newestFirst(scopes, (s) => ({ timestamp: s.row.micros, event_message: s.row.event_message, origin_time: wire(field(s.r, 'origin_time')) }));
  },
  '500 Request Codes': (rows) => {
    const scopes = kept(joined(rows('edge_logs')!, [m, ['r', (s) => field(s.m, 'response')]]), (s) => compare(field(s.r, 'status_code'), '>=', 500));
    return newestFirst(scopes, (s) => ({ timestamp: s.row.micros, event_message: s.row.event_message, status_code: wire(field(s.r, 'status_code')) }));
  },
  'Top Paths': (rows) => {
    const scopes = joined(rows('edge_logs')!, [m, ['r', (s) => field(s.m, 'request')]]);
    // `group by path, params`: the SELECT's aliases (r.path, r.search).
    const groups = groupBy(scopes, (s) => [field(s.r, 'path'), field(s.r, 'search')]);
    return byCountDesc(
      groups.map((g) => ({ path: wire(g.keys[0]), params: wire(g.keys[1]), c: g.scopes.length })),
      'c',
    );
  },
  'REST Requests': (rows) => {
    // `path` names no alias of its own: it is r.path.
    const scopes = kept(joined(rows('edge_logs')!, [m, ['r', (s) => field(s.m, 'request')]]), (s) => like(field(s.r, 'path'), '%rest/v1%'));
    return newestFirst(scopes, (s) => ({ timestamp: s.row.micros, event_message: s.row.event_message }));
  },
  Errors: (rows) => {
    return newestFirst(postgresErrors(rows), (s) => ({ timestamp: s.row.micros, error_severity: wire(field(s.p, 'error_severity')), event_message: s.row.event_message }));
  },
  'Error Count by User': (rows) => {
    const groups = groupBy(postgresErrors(rows), (s) => [field(s.p, 'user_name'), field(s.p, 'error_severity')]);
    return byCountDesc(
      groups.map((g) => ({ count: g.scopes.length, user_name: wire(g.keys[0]), error_severity: wire(g.keys[1]) })),
      'count',
    );
  },
  'Auth Endpoint Events': (rows) => {
    const scopes = kept(joined(rows('auth_logs')!, []), (s) => regexpContains(s.row.event_message, 'level.{3}(info|warning||error|fatal)'));
    return unordered(
      scopes.map((s) => ({ timestamp: s.row.micros, event_message: s.row.event_message })),
      100,
    );
  },
  'Auth Audit Logs': (rows) => {
    if (rows('auth_audit_logs') !== null) throw new Error('reference: auth_audit_logs is not a table of self-hosted');
    return { status: 400, mentions: ['auth_audit_logs', ...LOG_TABLES] };
  },
  'Storage Object Requests': (rows) => {
    const scopes = joined(rows('edge_logs')!, [m, ['r', (s) => field(s.m, 'request')], ['h', (s) => field(s.r, 'headers')]]);
    const groups = groupBy(
      kept(scopes, (s) => like(field(s.r, 'path'), '%storage/v1/object/%')),
      (s) => [field(s.r, 'path'), field(s.r, 'method')],
    );
    return byCountDesc(
      groups.map((g) => ({ http_verb: wire(g.keys[1]), filepath: wire(g.keys[0]), num_requests: g.scopes.length })),
      'num_requests',
    );
  },
  'Storage Egress Requests': (rows) => {
    const scopes = joined(rows('edge_logs')!, [
      ['metadata', metadata],
      ['request', (s) => field(s.metadata, 'request')],
      ['response', (s) => field(s.metadata, 'response')],
      ['responseHeaders', (s) => field(s.response, 'headers')],
    ]);
    const path = (s: Scope) => field(s.request, 'path');
    const wanted = kept(scopes, (s) => and3(or3(like(path(s), '%storage/v1/object/%'), like(path(s), '%storage/v1/render/%')), compare(field(s.request, 'method'), '=', 'GET')));
    // `group by 1, 2, 3`: the verb, the path and `cached` (NULL where the response has no headers).
    const groups = groupBy(wanted, (s) => [field(s.request, 'method'), path(s), compare(field(s.responseHeaders, 'cf_cache_status'), '=', 'HIT')]);
    return byCountDesc(
      groups.map((g) => ({ http_verb: wire(g.keys[0]), filepath: wire(g.keys[1]), cached: g.keys[2], num_requests: g.scopes.length })),
      'num_requests',
    );
  },
  'Storage Top Cache Misses': (rows) => {
    const scopes = joined(rows('edge_logs')!, [m, ['r', (s) => field(s.m, 'request')], ['res', (s) => field(s.m, 'response')], ['h', (s) => field(s.res, 'headers')]]);
    const misses = ['MISS', 'NONE/UNKNOWN', 'EXPIRED', 'BYPASS', 'DYNAMIC'];
    const wanted = kept(scopes, (s) => and3(startsWith(field(s.r, 'path'), '/storage/v1/object'), compare(field(s.r, 'method'), '=', 'GET'), isIn(field(s.h, 'cf_cache_status'), misses)));
    const groups = groupBy(wanted, (s) => [field(s.r, 'path'), field(s.r, 'search')]);
    return byCountDesc(
      groups.map((g) => ({ path: wire(g.keys[0]), search: wire(g.keys[1]), count: g.scopes.length })),
      'count',
    );
  },
};

function postgresErrors(rows: Rows): Scope[] {
  const scopes = joined(rows('postgres_logs')!, [m, ['p', (s) => field(s.m, 'parsed')]]);
  return kept(scopes, (s) => isIn(field(s.p, 'error_severity'), ['ERROR', 'FATAL', 'PANIC']));
}

/** The answer of a template over the tables `rows` gives (null for a table self-hosted does not have). */
export function templateAnswer(label: ExplorerTemplateLabel, rows: Rows): Expected {
  return TEMPLATES[label](rows);
}
