import { eventTimestampMicros } from '../time/event-timestamp';
import type { Micros } from '../time/iso';

/** 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999Z in microseconds: what ISO 8601 can write. */
const MIN = -62_135_596_800_000_000n;
const MAX = 253_402_300_799_999_999n;

/**
 * The instant of an event's `timestamp` as ingest accepts it: any form of docs/semantics.md, "Timestamps" (the one
 * rule of `eventTimestampMicros`, which the engine's SQL applies too), within years 1 to 9999; null
 * for anything else, so ingest refuses an event that no window could ever hold.
 */
export function timestampMicros(value: unknown): Micros | null {
  const micros = eventTimestampMicros(value);
  return micros !== null && micros >= MIN && micros <= MAX ? micros : null;
}
