import { querySql } from '../sql/query-files';
import { addUnits, subtractSpan, truncate } from '../time/units';
import { intervalMeaning, type IntervalName } from './intervals';
import type { DefinitionParams, DefinitionRow } from './definition';
import { defineEndpoint } from './define-endpoint';
import { p } from './params';

/** The interval values of functions.invocation-stats (their meanings: src/definitions/intervals.ts). */
const INVOCATION_INTERVALS = ['5min', '15min', '1hr', '1day', '7day'] as const satisfies readonly IntervalName[];

/** Interval values of functions.invocation-stats; any other non-empty value behaves like `1day`. */
export type InvocationInterval = (typeof INVOCATION_INTERVALS)[number];

/** The bucket series of a call: from trunc(now - span) to trunc(now), one bucket per unit. */
function window(interval: string | null, now: Date) {
  const { span, unit } = intervalMeaning(interval as InvocationInterval);
  const first = truncate(subtractSpan(now, span), unit);
  const last = truncate(now, unit);
  return { unit, first, last, end: addUnits(last, unit, 1) };
}

/** Every interval the hourly rollup answers: hour and day buckets. */
export function hourlyWhenStored(bound: { readonly unit?: unknown }): 'hourly' | null {
  return bound.unit === 'hour' || bound.unit === 'day' ? 'hourly' : null;
}

/**
 * The variant chosen: for day buckets (7day), the hourly rollup's counts and the days' quantile
 * summaries, where it measured faster than the raw statement and than the hours' summaries
 * (docs/performance.md, "The week's quantiles from a day's summary"); for hour buckets (1day),
 * the hourly rollup and the hours' summaries, which the engine runs only for a project whose
 * invocations outnumber its summaries' rows (`HOURLY_PAYS`); `hourlyWhenStored` is every interval
 * the hourly rollup alone can answer.
 *
 * @example
 * bucketsFromRollups({ unit: 'day' }); // 'daily'
 * bucketsFromRollups({ unit: 'hour' }); // 'hourly'
 * bucketsFromRollups({ unit: 'minute' }); // null
 */
export function bucketsFromRollups(bound: { readonly unit?: unknown }): 'daily' | 'hourly' | null {
  return bound.unit === 'day' ? 'daily' : bound.unit === 'hour' ? 'hourly' : null;
}

/**
 * Where the `hourly` variant pays for hour buckets: the raw statement's CPU grows with the
 * project's invocations of the window, the variant's with its summaries' rows over a larger fixed
 * part. Fitted on the bench's twenty projects' days, CPU per call through the library
 * (`bench/hourly-variant-cost.ts`: raw about 6.4 - 7.9 ms + 0.08 - 0.11 a thousand invocations,
 * the variant 12.1 - 12.7 + 0.22 - 0.31 a thousand summary rows; even at 52,000 - 59,000
 * invocations plus 2.7 - 2.9 per summary row): docs/performance.md, "The busiest project's day
 * from the hours' summaries".
 */
export const HOURLY_PAYS = { events: 60_000, rollupRows: { function_edge_logs_summary: { weight: 3, time: 'hour' } } } as const;

/** functions.invocation-stats: edge-function latency percentiles and errors per time bucket (docs/semantics.md). */
export const functionsInvocationStats = defineEndpoint({
  name: 'functions.invocation-stats',
  id: '3e97a72c-f5e4-4378-80ac-22ce14543451',
  description: 'Edge-function execution-time statistics and error counts of one project per time bucket.',
  maxRows: 1000,
  cache: { ttlSeconds: 900, warmingSeconds: 300 },
  params: {
    project: p.text().describe('Project reference; only invocations of this project are counted.'),
    function_id: p.text().optional().describe('Only invocations of this function; absent or empty for all functions.'),
    interval: p
      .oneOf(INVOCATION_INTERVALS, { otherwise: '1day' })
      .describe('Window and bucket: 5min (seconds), 15min and 1hr (minutes), 1day (hours), 7day (days). Any other value behaves like 1day.'),
  },
  sql: { duckdb: querySql('duckdb', 'functions.invocation-stats'), clickhouse: querySql('clickhouse', 'functions.invocation-stats') },
  projectParam: 'project',
  bind: ({ interval }, { now }) => {
    const { unit, first, end } = window(interval, now);
    return { unit, first, end };
  },
  // Hour and day buckets start and end on whole hours: the hourly rollup covers them exactly,
  // and day buckets start and end on whole days: the days' summaries cover them too. Day buckets
  // (7day) run `daily`: over stored rollups (bench data, one file a day) 1.6 - 2.3x less CPU than
  // `hourly`, which itself measured 1.8x faster than the raw statement for the busiest project;
  // hour buckets (1day) run `hourly` only for a project whose invocations make it pay (a smaller
  // one's raw statement costs less: HOURLY_PAYS). Where the rollups a variant reads are not
  // stored, or it does not pay, the engine runs this statement (docs/definitions.md, "Variants").
  variants: {
    hourly: { duckdb: querySql('duckdb', 'functions.invocation-stats.hourly'), cheaperWhen: HOURLY_PAYS },
    daily: { duckdb: querySql('duckdb', 'functions.invocation-stats.daily') },
  },
  variant: bucketsFromRollups,
  notBefore: 'first',
  emptyBuckets: (params, now) => {
    const { unit, first, last } = window(params.interval ?? null, now);
    return {
      unit,
      first,
      last,
      empty: (timestamp) => ({
        timestamp,
        min_execution_time: null,
        max_execution_time: null,
        avg_execution_time: null,
        p95_execution_time: null,
        p99_execution_time: null,
        count: 0,
        error_count: 0,
      }),
    };
  },
  columns: {
    timestamp: { type: 'timestamp', description: 'Bucket start.' },
    min_execution_time: { type: 'float', nullable: true, description: 'Minimum execution time (ms).' },
    max_execution_time: { type: 'float', nullable: true, description: 'Maximum execution time (ms).' },
    avg_execution_time: { type: 'float', nullable: true, description: 'Mean execution time (ms).' },
    p95_execution_time: { type: 'float', nullable: true, description: '95th percentile of execution time (ms).' },
    p99_execution_time: { type: 'float', nullable: true, description: '99th percentile of execution time (ms).' },
    count: { type: 'integer', description: 'Invocations in the bucket.' },
    error_count: { type: 'integer', description: 'Invocations with status code >= 400.' },
  },
});

/** Parameters of functions.invocation-stats. */
export type FunctionsInvocationStatsParams = DefinitionParams<typeof functionsInvocationStats>;
/** One time bucket of functions.invocation-stats. */
export type FunctionsInvocationStatsRow = DefinitionRow<typeof functionsInvocationStats>;
