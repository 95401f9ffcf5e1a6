import type { EngineValue } from '../engine/engine';
import { dateToMicros } from '../time/iso';
import { addUnits, type BucketUnit } from '../time/units';

/**
 * Adds a row for every bucket of the series without one (the `fillEmptyBuckets` option).
 * `rows` are ordered by their bucket `timestamp` (bigint microseconds), as the queries return them.
 */
export function fillBuckets(
  rows: readonly Record<string, EngineValue>[],
  series: { first: Date; last: Date; unit: BucketUnit; empty: (timestamp: bigint) => Record<string, EngineValue> },
): Record<string, EngineValue>[] {
  const byBucket = new Map<bigint, Record<string, EngineValue>>();
  for (const row of rows) byBucket.set(BigInt(row.timestamp as bigint), row);
  const out: Record<string, EngineValue>[] = [];
  for (let t = series.first; t <= series.last; t = addUnits(t, series.unit, 1)) {
    const micros = dateToMicros(t);
    out.push(byBucket.get(micros) ?? series.empty(micros));
  }
  return out;
}
