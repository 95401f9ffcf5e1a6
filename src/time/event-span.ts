import type { Micros } from './iso';

/**
 * The oldest and newest event timestamp (microseconds) of a batch or a segment: what a read
 * bounded in time needs to know whether any of their events can be in its range.
 */
export interface EventSpan {
  oldest: Micros;
  newest: Micros;
}

/**
 * The span widened to hold `other` (either may be absent).
 *
 * @example
 * widenedSpan({ oldest: 5n, newest: 9n }, { oldest: 2n, newest: 7n }); // { oldest: 2n, newest: 9n }
 */
export function widenedSpan(span: EventSpan | undefined, other: EventSpan | undefined): EventSpan | undefined {
  if (!span) return other;
  if (!other) return span;
  return { oldest: other.oldest < span.oldest ? other.oldest : span.oldest, newest: other.newest > span.newest ? other.newest : span.newest };
}
