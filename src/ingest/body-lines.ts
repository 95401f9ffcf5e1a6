import { parseEvents } from './parse-body';
import { BATCH_LIMITS, serializeEvents, type BatchLimits } from './serialize-events';

/** An ingest body as the WAL stores it: its events' lines and how many events they are. */
export interface BodyLines {
  lines: Buffer;
  events: number;
}

/**
 * The whole CPU work of an ingest body, in one place so it can run off the main thread: parsed
 * (`parseEvents`), checked and written as lines (`serializeEvents`). Throws `InvalidBodyError` or
 * `PayloadTooLargeError` as those do.
 *
 * @example
 * const { lines, events } = bodyLines(Buffer.from('[{"message":"a"}]'), 'application/json', '2026-11-21T12:00:00.000000Z');
 */
export function bodyLines(body: Uint8Array, contentType: string | null, arrival: string, limits: BatchLimits = BATCH_LIMITS): BodyLines {
  const events = parseEvents(body, contentType);
  return { lines: serializeEvents(events, arrival, limits), events: events.length };
}
