import type { EndpointName } from '../src/index';
import { REFERENCE } from './dataset';

/** One benchmark case: an endpoint and representative parameters. */
export interface BenchCase {
  name: string;
  /** The project's traffic rank (1 = the busiest). */
  rank: number;
  endpoint: EndpointName;
  params: Record<string, string>;
  /**
   * A case of the first rounds (measured on NDJSON too and against the SQL of before); the others
   * (older pages, hourly usage, a pattern that is not a literal, 1day) are measured against the peers.
   */
  core: boolean;
}

/** Where older pages of logs.all start: `iso_timestamp_end` this far before the reference instant. */
const PAGES: ReadonlyArray<readonly [label: string, ms: number]> = [
  ['1h', 3_600_000],
  ['1d', 86_400_000],
  ['3d', 3 * 86_400_000],
];

/**
 * The cases, for one project of the dataset (`rank` 1 = the busiest), evaluated at `reference`.
 * The core cases come first, in the order of the first rounds (the HTTP phase takes the third).
 */
export function benchCases(project: string, rank = 1, reference = REFERENCE): BenchCase[] {
  const back = (ms: number) => new Date(reference.getTime() - ms).toISOString();
  const core: Array<Omit<BenchCase, 'name' | 'rank' | 'core'>> = [
    { endpoint: 'functions.invocation-stats', params: { project, interval: '7day' } },
    { endpoint: 'functions.invocation-stats', params: { project, interval: '1hr' } },
    { endpoint: 'usage.api-counts', params: { project, interval: 'daily' } },
    { endpoint: 'logs.all', params: { project, project_tier: 'PRO' } },
    { endpoint: 'logs.all', params: { project, project_tier: 'PAYG' } },
  ];
  const extra: Array<Omit<BenchCase, 'name' | 'rank' | 'core'>> = [
    { endpoint: 'functions.invocation-stats', params: { project, interval: '1day' } },
    { endpoint: 'usage.api-counts', params: { project, interval: 'hourly' } },
    // Not a plain literal: the form a caller uses to match the project's host exactly.
    { endpoint: 'usage.api-counts', params: { project: `${project}(\\.|$)`, interval: 'daily' } },
    { endpoint: 'usage.api-counts', params: { project: `${project}(\\.|$)`, interval: 'hourly' } },
    ...PAGES.flatMap(([, ms]) =>
      (['PRO', 'PAYG'] as const).map((tier) => ({
        endpoint: 'logs.all' as const,
        params: { project, project_tier: tier, iso_timestamp_end: back(ms) },
      })),
    ),
  ];
  const name = (c: Omit<BenchCase, 'name' | 'rank' | 'core'>) =>
    `${c.endpoint} ${Object.entries(c.params)
      .map(([k, v]) => {
        if (k === 'project') return `${k}=${v.replace(project, `P${rank}`)}`;
        if (k === 'iso_timestamp_end') return `end=-${PAGES.find(([, ms]) => back(ms) === v)![0]}`;
        return `${k}=${v}`;
      })
      .join(' ')}`;
  return [...core.map((c) => ({ ...c, rank, core: true, name: name(c) })), ...extra.map((c) => ({ ...c, rank, core: false, name: name(c) }))];
}
