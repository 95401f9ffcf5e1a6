import type { QueryPlan, EngineResult } from '../engine/engine';
import { querySql } from '../sql/query-files';
import { InvalidOptionError } from '../errors';
import { dateToMicros, formatIsoMicros } from '../time/iso';
import { subtractSpan } from '../time/units';

/** Options of `ep.catalog()`. */
export interface CatalogOptions {
  /** How far back to look, in days (default 7, at most 90: the longest retention window). */
  days?: number;
}

/**
 * One project seen in the data: what a picker needs to offer it (the dashboard's project and
 * function lists). Projects of either log appear; counts are events since the catalog's start.
 *
 * @example
 * const { projects } = await ep.catalog({ days: 1 });
 * projects[0]; // { project: 'abc', requests: 1200, invocations: 310, functionIds: ['5d1f…'], lastSeen: '2026-11-21T11:59:58.000000Z' }
 */
export interface CatalogProject {
  project: string;
  /** Gateway log events of the project. */
  requests: number;
  /** Edge-function invocations of the project. */
  invocations: number;
  /** The project's edge functions, busiest first. */
  functionIds: string[];
  /** The newest event of the project in either log (ISO 8601, six fractional digits). */
  lastSeen: string;
}

/** The answer of `ep.catalog()`: projects busiest first (requests, then invocations). */
export interface Catalog {
  /** Events at or after this instant were looked at. */
  since: string;
  projects: CatalogProject[];
}

export const CATALOG_MAX_DAYS = 90;
/** Most projects and (project, function) pairs read: a picker with more is not a picker. */
const CATALOG_MAX_ROWS = 10_000;

/** The catalog's statements (queries/<dialect>/catalog.*.sql). */
const STATEMENTS = {
  projects: { name: 'catalog.projects', sql: { duckdb: querySql('duckdb', 'catalog.projects'), clickhouse: querySql('clickhouse', 'catalog.projects') } },
  functions: { name: 'catalog.functions', sql: { duckdb: querySql('duckdb', 'catalog.functions'), clickhouse: querySql('clickhouse', 'catalog.functions') } },
} as const;

/** The catalog's two engine requests for a clock and options; bad options are an `InvalidOptionError`. */
export function catalogRequests(now: Date, options: CatalogOptions = {}): { since: bigint; requests: [QueryPlan, QueryPlan] } {
  const days = options.days ?? 7;
  if (!Number.isInteger(days) || days < 1 || days > CATALOG_MAX_DAYS) {
    throw new InvalidOptionError('days', `catalog: days must be a whole number from 1 to ${CATALOG_MAX_DAYS}.`);
  }
  const since = dateToMicros(subtractSpan(now, { days }));
  const params = { after: { timestamp: since } };
  return {
    since,
    requests: [
      { statement: STATEMENTS.projects, params: { ...params, max_rows: CATALOG_MAX_ROWS }, maxRows: CATALOG_MAX_ROWS, notBefore: since },
      { statement: STATEMENTS.functions, params: { ...params, max_rows: CATALOG_MAX_ROWS }, maxRows: CATALOG_MAX_ROWS, notBefore: since },
    ],
  };
}

/** Merges the rows of `catalog.projects` and `catalog.functions` into one list per project. */
export function mergeCatalog(since: bigint, projects: EngineResult, functions: EngineResult): Catalog {
  const byProject = new Map<string, { requests: number; invocations: number; functionIds: string[]; lastSeen: bigint }>();
  const entry = (project: string) => {
    let e = byProject.get(project);
    if (!e) byProject.set(project, (e = { requests: 0, invocations: 0, functionIds: [], lastSeen: -(2n ** 63n) }));
    return e;
  };
  for (const row of projects.rows) {
    const e = entry(String(row.project));
    e.requests += Number(row.events);
    e.lastSeen = max(e.lastSeen, BigInt(row.last_seen as bigint));
  }
  for (const row of functions.rows) {
    const e = entry(String(row.project));
    e.invocations += Number(row.events);
    e.functionIds.push(String(row.function_id));
    e.lastSeen = max(e.lastSeen, BigInt(row.last_seen as bigint));
  }
  const list = [...byProject.entries()].map(([project, e]) => ({
    project,
    requests: e.requests,
    invocations: e.invocations,
    functionIds: e.functionIds,
    lastSeen: formatIsoMicros(e.lastSeen),
  }));
  list.sort((a, b) => b.requests - a.requests || b.invocations - a.invocations || (a.project < b.project ? -1 : 1));
  return { since: formatIsoMicros(since), projects: list };
}

function max(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}
