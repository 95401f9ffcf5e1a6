import { dateToMicros } from '../time/iso';
import { subtractSpan, type BucketUnit, type Span } from '../time/units';
import type { EndpointDefinition } from './definition';

/** Interval values of usage.api-counts; any other value is an error. */
export type UsageInterval = 'hourly' | 'daily' | 'minutely';

/** Parameters of usage.api-counts. */
export interface UsageApiCountsParams {
  /** RE2 pattern searched in the request URL; only matching requests count. */
  project: string;
  interval: UsageInterval;
}

/** One time bucket of usage.api-counts. */
export interface UsageApiCountsRow {
  /** Bucket start, ISO 8601 UTC with six fractional digits. */
  timestamp: string;
  total_rest_requests: number;
  total_storage_requests: number;
  total_auth_requests: number;
  total_realtime_requests: number;
}

const INTERVALS: Record<UsageInterval, { span: Span; unit: BucketUnit }> = {
  hourly: { span: { hours: 1 }, unit: 'hour' },
  daily: { span: { days: 7 }, unit: 'day' },
  minutely: { span: { minutes: 60 }, unit: 'minute' },
};

export const usageApiCounts: EndpointDefinition = {
  name: 'usage.api-counts',
  id: '538d9361-e1e6-421a-953a-37a46d1b9e19',
  description: 'API requests of one project per product area (rest, storage, auth, realtime) per time bucket.',
  maxRows: 1000,
  cache: { ttlSeconds: 900, warmingSeconds: 300 },
  sandboxed: false,
  params: [
    { name: 'project', required: true, format: 'regex', description: 'RE2 regular expression searched in the request URL.' },
    {
      name: 'interval', required: true, format: 'text',
      description: 'hourly (last hour, hour buckets), daily (last 7 days, day buckets), minutely (last 60 minutes, minute buckets).',
      values: Object.keys(INTERVALS),
    },
  ],
  columns: [
    { name: 'timestamp', type: 'timestamp', description: 'Bucket start.' },
    { name: 'total_rest_requests', type: 'integer', description: 'Requests whose path contains /rest.' },
    { name: 'total_storage_requests', type: 'integer', description: 'Requests whose path contains /storage.' },
    { name: 'total_auth_requests', type: 'integer', description: 'Requests whose path contains /auth.' },
    { name: 'total_realtime_requests', type: 'integer', description: 'Requests whose path contains /realtime.' },
  ],
  plan(params, now) {
    const { span, unit } = INTERVALS[params.interval as UsageInterval];
    const start = dateToMicros(subtractSpan(now, span));
    return {
      maxRows: this.maxRows,
      notBefore: start,
      params: { project: params.project ?? null, unit, start: { timestamp: start } },
    };
  },
};
