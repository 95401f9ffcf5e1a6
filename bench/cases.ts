import type { EndpointName } from '../src/index';

/** One benchmark case: an endpoint and representative parameters. */
export interface BenchCase {
  name: string;
  /** The project's traffic rank (1 = the busiest). */
  rank: number;
  endpoint: EndpointName;
  params: Record<string, string>;
}

/** The cases, for one project of the dataset (`rank` 1 = the busiest). */
export function benchCases(project: string, rank = 1): BenchCase[] {
  const cases: Array<Omit<BenchCase, 'name' | 'rank'>> = [
    { endpoint: 'functions.invocation-stats', params: { project, interval: '7day' } },
    { endpoint: 'functions.invocation-stats', params: { project, interval: '1hr' } },
    { endpoint: 'usage.api-counts', params: { project, interval: 'daily' } },
    { endpoint: 'logs.all', params: { project, project_tier: 'PRO' } },
    { endpoint: 'logs.all', params: { project, project_tier: 'PAYG' } },
  ];
  return cases.map((c) => ({
    ...c,
    rank,
    name: `${c.endpoint} ${Object.entries(c.params).map(([k, v]) => `${k}=${k === 'project' ? `P${rank}` : v}`).join(' ')}`,
  }));
}
