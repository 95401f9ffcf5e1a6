import { spanSeconds, unitSeconds, type BucketUnit, type Span } from '../time/units';

/**
 * What each interval value means, once for every endpoint that takes one: its window (`span`,
 * ending at the clock's now) and its bucket unit (docs/semantics.md, the interval tables of
 * functions.invocation-stats and usage.api-counts). An endpoint offers some of them; the same
 * value means the same window and bucket everywhere, and a definition's description carries the
 * meanings of its values (`intervals`), which the dashboard reads instead of knowing them.
 */
export const INTERVALS = {
  '5min': { span: { minutes: 5 }, unit: 'second' },
  '15min': { span: { minutes: 15 }, unit: 'minute' },
  '30min': { span: { minutes: 30 }, unit: 'minute' },
  '1hr': { span: { hours: 1 }, unit: 'minute' },
  '3hr': { span: { hours: 3 }, unit: 'hour' },
  '1day': { span: { days: 1 }, unit: 'hour' },
  '3day': { span: { days: 3 }, unit: 'hour' },
  '7day': { span: { days: 7 }, unit: 'day' },
  // Logflare's own three.
  minutely: { span: { minutes: 60 }, unit: 'minute' },
  hourly: { span: { hours: 1 }, unit: 'hour' },
  daily: { span: { days: 7 }, unit: 'day' },
} as const satisfies Record<string, { span: Span; unit: BucketUnit }>;

/** An interval value with a meaning. */
export type IntervalName = keyof typeof INTERVALS;

/** An interval's window and bucket in seconds: what a description (and so the dashboard) carries. */
export interface IntervalSeconds {
  span: number;
  bucket: number;
}

/** Whether a value is an interval with a meaning. */
export function isInterval(value: string): value is IntervalName {
  return Object.hasOwn(INTERVALS, value);
}

/**
 * The window and bucket of an interval value.
 *
 * @example
 * intervalMeaning('1hr'); // { span: { hours: 1 }, unit: 'minute' }
 */
export function intervalMeaning(name: IntervalName): { span: Span; unit: BucketUnit } {
  return INTERVALS[name];
}

/**
 * The same in seconds.
 *
 * @example
 * intervalSeconds('1day'); // { span: 86400, bucket: 3600 }
 */
export function intervalSeconds(name: IntervalName): IntervalSeconds {
  const { span, unit } = INTERVALS[name];
  return { span: spanSeconds(span), bucket: unitSeconds(unit) };
}
