import { bodyDigest, bodyKey, derivedId, retryable } from './body-digest';
import { parseEvents } from './parse-body';
import { BATCH_LIMITS, serializeBatch, type BatchLimits } from './serialize-events';
import type { EventSpan } from '../time/event-span';

/** An ingest body as the WAL stores it: its events' lines and how many events they are. */
export interface BodyLines {
  lines: Buffer;
  events: number;
  /** The body's key (body-digest.ts) when its events got ids derived from it; null otherwise. */
  key?: string | null;
  /** The oldest and newest instant of its events (`serializeBatch`), when known. */
  span?: EventSpan;
  /** True when no event's `metadata` holds a `[` (`serializeBatch`); false or absent when one may. */
  arraysFree?: boolean;
}

/** What ingest's parse knew of a group's events: their span, and whether no `metadata` holds a `[` (the memory tables keep both per segment). */
export type GroupKnown = Pick<BodyLines, 'span' | 'arraysFree'>;

/**
 * The whole CPU work of an ingest body, in one place so it can run off the main thread: parsed
 * (`parseEvents`), checked and written as lines (`serializeBatch`, with their timestamps' span). Throws `InvalidBodyError` or
 * `PayloadTooLargeError` as those do. With the `source` it goes to, an event without an id gets
 * one derived from the source, the body and its position (body-digest.ts), when the body is
 * `retryable`. `nestingChecked`: the body's nesting was bounded by `MAX_NESTING` as it was read
 * (`withIngestBody`), so its events' lines are not scanned for it again (`serializeEvents`).
 *
 * @example
 * const { lines, events } = bodyLines(Buffer.from('[{"message":"a"}]'), 'application/json', '2026-11-21T12:00:00.000000Z');
 */
export function bodyLines(body: Uint8Array, contentType: string | null, arrival: string, limits: BatchLimits = BATCH_LIMITS, source?: string, nestingChecked = false): BodyLines {
  const events = parseEvents(body, contentType);
  const key = source !== undefined && retryable(events) ? bodyKey(source, bodyDigest(body)) : null;
  const { lines, span, arraysFree } = serializeBatch(events, arrival, limits, key === null ? undefined : (i) => derivedId(key, i), nestingChecked);
  return { lines, events: events.length, key, ...(span ? { span } : {}), arraysFree };
}
