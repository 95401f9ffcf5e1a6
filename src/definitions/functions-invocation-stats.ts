import { dateToMicros } from '../time/iso';
import { addUnits, subtractSpan, truncate, type BucketUnit, type Span } from '../time/units';
import type { EndpointDefinition, NormalizedParams } from './definition';

/** Interval values of functions.invocation-stats; any other non-empty value behaves like `1day`. */
export type InvocationInterval = '5min' | '15min' | '1hr' | '1day' | '7day';

/** Parameters of functions.invocation-stats. */
export interface FunctionsInvocationStatsParams {
  /** Project reference; only invocations of this project are counted. */
  project: string;
  /** One function's id; absent or empty means every function of the project. */
  function_id?: string;
  /** Window and bucket size; any other value behaves like `1day`. */
  interval: InvocationInterval | (string & {});
}

/** One time bucket of functions.invocation-stats. */
export interface FunctionsInvocationStatsRow {
  /** Bucket start, ISO 8601 UTC with six fractional digits. */
  timestamp: string;
  min_execution_time: number | null;
  max_execution_time: number | null;
  avg_execution_time: number | null;
  p95_execution_time: number | null;
  p99_execution_time: number | null;
  count: number;
  error_count: number;
}

const INTERVALS: Record<InvocationInterval, { span: Span; unit: BucketUnit }> = {
  '5min': { span: { minutes: 5 }, unit: 'second' },
  '15min': { span: { minutes: 15 }, unit: 'minute' },
  '1hr': { span: { hours: 1 }, unit: 'minute' },
  '1day': { span: { days: 1 }, unit: 'hour' },
  '7day': { span: { days: 7 }, unit: 'day' },
};

/** The bucket series of a call: from trunc(now - span) to trunc(now), one bucket per unit. */
function window(params: NormalizedParams, now: Date) {
  const { span, unit } = INTERVALS[params.interval as InvocationInterval];
  const first = truncate(subtractSpan(now, span), unit);
  const last = truncate(now, unit);
  return { unit, first, last, end: addUnits(last, unit, 1) };
}

export const functionsInvocationStats: EndpointDefinition = {
  name: 'functions.invocation-stats',
  id: '3e97a72c-f5e4-4378-80ac-22ce14543451',
  description: 'Edge-function execution-time statistics and error counts of one project per time bucket.',
  maxRows: 1000,
  cache: { ttlSeconds: 900, warmingSeconds: 300 },
  sandboxed: false,
  params: [
    { name: 'project', required: true, format: 'text', description: 'Project reference; only invocations of this project are counted.' },
    { name: 'function_id', required: false, format: 'text', description: 'Only invocations of this function; absent or empty for all functions.' },
    {
      name: 'interval', required: true, format: 'text',
      description: 'Window and bucket: 5min (seconds), 15min and 1hr (minutes), 1day (hours), 7day (days). Any other value behaves like 1day.',
      values: Object.keys(INTERVALS), otherwise: '1day',
    },
  ],
  columns: [
    { name: 'timestamp', type: 'timestamp', description: 'Bucket start.' },
    { name: 'min_execution_time', type: 'float', description: 'Minimum execution time (ms).' },
    { name: 'max_execution_time', type: 'float', description: 'Maximum execution time (ms).' },
    { name: 'avg_execution_time', type: 'float', description: 'Mean execution time (ms).' },
    { name: 'p95_execution_time', type: 'float', description: '95th percentile of execution time (ms).' },
    { name: 'p99_execution_time', type: 'float', description: '99th percentile of execution time (ms).' },
    { name: 'count', type: 'integer', description: 'Invocations in the bucket.' },
    { name: 'error_count', type: 'integer', description: 'Invocations with status code >= 400.' },
  ],
  plan(params, now) {
    const { unit, first, end } = window(params, now);
    return {
      maxRows: this.maxRows,
      notBefore: dateToMicros(first),
      params: {
        project: params.project ?? null,
        function_id: params.function_id ?? null,
        unit,
        first: { timestamp: dateToMicros(first) },
        end: { timestamp: dateToMicros(end) },
      },
    };
  },
  buckets(params, now) {
    const { unit, first, last } = window(params, now);
    return {
      unit, first, last,
      empty: (timestamp) => ({
        timestamp, min_execution_time: null, max_execution_time: null, avg_execution_time: null,
        p95_execution_time: null, p99_execution_time: null, count: 0, error_count: 0,
      }),
    };
  },
};
