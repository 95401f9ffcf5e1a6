import type { Endpoints } from '../../src/index';
import { edgeEvent } from './log-files';

/** The reference instant of the exactly-once tests. */
export const CENSUS_NOW = '2026-11-21T12:00:00Z';
/** Projects of the census events: logs.all lists at most 100 rows, so each holds at most 100. */
export const CENSUS_PROJECTS = ['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7', 'p8', 'p9'];

/**
 * Gateway events `${prefix}-0` ... with unique ids, spread over the six days before CENSUS_NOW and
 * over the census projects, every one a REST request (so usage.api-counts counts each once).
 */
export function censusEvents(prefix: string, count: number, offset = 0): Record<string, unknown>[] {
  const base = Date.parse(CENSUS_NOW);
  return Array.from({ length: count }, (_, k) => {
    const i = k + offset;
    const project = CENSUS_PROJECTS[i % CENSUS_PROJECTS.length]!;
    const t = new Date(base - 60_000 - ((i * 7_919_000) % (6 * 86_400_000))).toISOString();
    return edgeEvent({ id: `${prefix}-${i}`, project, timestamp: t, path: '/rest/v1/census' });
  });
}

/**
 * Every event the endpoints see, counted two ways: `total` from usage.api-counts (every census
 * event is one REST request) and `ids` from logs.all (each project's newest 100; the tests keep
 * projects under that). Exactly once means `total === ids.length` and no id repeats.
 */
export async function census(ep: Endpoints): Promise<{ total: number; ids: string[] }> {
  const usage = await ep.usageApiCounts({ project: '.', interval: 'daily' });
  const total = usage.reduce((n, row) => n + row.total_rest_requests, 0);
  const ids: string[] = [];
  for (const project of CENSUS_PROJECTS) {
    const rows = await ep.logsAll({ project, project_tier: 'PAYG' });
    if (rows.length >= 100) throw new Error(`census: project ${project} has 100 rows or more; the test must keep it under`);
    ids.push(...rows.map((r) => r.id!));
  }
  return { total, ids: ids.sort() };
}

/** The ids `${prefix}-${from}` ... `${prefix}-${to - 1}`, sorted as `census` sorts them. */
export function idRange(prefix: string, from: number, to: number): string[] {
  return Array.from({ length: to - from }, (_, k) => `${prefix}-${from + k}`).sort();
}
