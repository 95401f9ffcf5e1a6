import { randomUUID } from 'node:crypto';
import { InvalidBodyError, PayloadTooLargeError } from '../errors';
import { MARKER_FIELD } from '../wal-format/commit-marker';
import { eventTimestampMicros } from '../time/event-timestamp';
import type { EventSpan } from '../time/event-span';
import type { Micros } from '../time/iso';
import { MAX_LINE_BYTES } from '../files/long-line-copies';
import { MAX_NESTING, tooDeepAt } from './json-nesting';
import { isBigIntError, parseExactJson, stringifyExactJson, stringifyLosslessJson } from '../util/exact-json';

/** An event's id when it has none and none is derived: a new UUID. */
const newUuid = (): string => randomUUID();

/** Fields the normalisation itself sets. */
const OWN = new Set(['id', 'timestamp', 'message', 'event_message']);

/**
 * One event as it is stored (docs/ingest.md, "Requests"): `event_message` = `message` ?? `event_message`
 * (`message` then dropped), `id` kept or `newId(index)` (a new UUID, or one derived from the
 * body: body-digest.ts), `timestamp` kept as sent (any form of §1.3, validated; a `Date` becomes
 * its ISO text) or the arrival time, every other field kept as sent. Throws `InvalidBodyError`
 * naming the field and the event's `index`.
 */
export function normalizeEvent(raw: unknown, index: number, arrival: string, newId: (index: number) => string = newUuid): Record<string, unknown> {
  return normalize(raw, index, arrival, newId, null);
}

/**
 * The oldest and newest instant of a batch's events as `serializeBatch` reads them, widened per
 * event; `arrival` is the instant of the arrival time, read once per batch (when first needed).
 */
interface SpanTally {
  oldest: Micros | null;
  newest: Micros | null;
  arrival: Micros | null;
}

/** `normalizeEvent`, also widening `tally` by the event's instant (the one its check read). */
function normalize(raw: unknown, index: number, arrival: string, newId: (index: number) => string, tally: SpanTally | null): Record<string, unknown> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new InvalidBodyError(`Event ${index} is not a JSON object (it is ${kindOf(raw)}).`, { index });
  }
  const event = raw as Record<string, unknown>;
  if (Object.hasOwn(event, MARKER_FIELD)) {
    throw new InvalidBodyError(`Event ${index} has the field "${MARKER_FIELD}", which is reserved for the storage's own lines.`, { index });
  }
  const messageField = event.message !== undefined && event.message !== null ? 'message' : 'event_message';
  const message = event[messageField];
  if (message !== undefined && message !== null && typeof message !== 'string') {
    throw new InvalidBodyError(`Event ${index}: "${messageField}" must be a string, not ${kindOf(message)}.`, { index });
  }
  const id = event.id;
  if (id !== undefined && id !== null && (typeof id !== 'string' || id === '')) {
    throw new InvalidBodyError(`Event ${index}: "id" must be a non-empty string, not ${kindOf(id)}.`, { index });
  }
  let timestamp = event.timestamp;
  if (timestamp instanceof Date) timestamp = Number.isNaN(timestamp.getTime()) ? 'Invalid Date' : timestamp.toISOString();
  if (timestamp !== undefined && timestamp !== null) {
    const micros = eventTimestampMicros(timestamp);
    if (micros === null) {
      throw new InvalidBodyError(`Event ${index}: "timestamp" ${describe(timestamp)} is not an ISO 8601 time or a number since the epoch (seconds, ms, µs or ns) within years 1 to 9999.`, { index });
    }
    if (tally) tallyInstant(tally, micros);
  } else if (tally) {
    tally.arrival ??= eventTimestampMicros(arrival);
    if (tally.arrival !== null) tallyInstant(tally, tally.arrival);
  }
  const out: Record<string, unknown> = { id: id ?? newId(index), timestamp: timestamp ?? arrival };
  if (message !== undefined && message !== null) out.event_message = message;
  for (const key of Object.keys(event)) {
    if (OWN.has(key)) continue;
    // A field named `__proto__` (JSON.parse makes it an own field) stays a field, not a prototype.
    if (key === '__proto__') Object.defineProperty(out, key, { value: event[key], enumerable: true, writable: true, configurable: true });
    else out[key] = event[key];
  }
  return out;
}

/** Bounds of one batch of events (an ingest request or one `ep.ingest` call). */
export interface BatchLimits {
  /** Events in one batch (default 100 000). */
  maxEvents: number;
  /** Bytes of one batch as stored, one JSON line per event (default 32 MiB). */
  maxBytes: number;
  /**
   * Bytes of one event as stored, its JSON line (default and most 16 MiB, the longest line the
   * engine's NDJSON reader is sure to take; managed storage's is what its compaction fits:
   * src/managed/largest-event.ts).
   */
  maxEventBytes?: number;
}

export const BATCH_LIMITS: BatchLimits = { maxEvents: 100_000, maxBytes: 32 * 1024 * 1024 };

/**
 * A batch as the lines the WAL stores (UTF-8 JSON, one event per line, each ending `\n`), all or
 * nothing: the first bad event throws `InvalidBodyError` with its index, and nothing is written.
 * Every line is one every query reads (docs/durability.md, "What ingest accepts"): a lone UTF-16
 * surrogate in any string or key (a string cut through an emoji) becomes U+FFFD, since no JSON
 * reader of the engine takes one; an event nested more than 128 levels deep, or longer than 16 MiB
 * as stored, is refused. An event without an id gets `newId(index)` (default: a new UUID).
 * `nestingChecked`: the events were parsed from a body whose nesting was bounded by `MAX_NESTING`
 * as it was read (an HTTP body): no line of them nests deeper than the body did, so the lines are
 * not scanned again (that second scan was 8 % of the parse thread's CPU).
 */
export function serializeEvents(events: readonly unknown[], arrival: string, limits: BatchLimits = BATCH_LIMITS, newId?: (index: number) => string, nestingChecked = false): Buffer {
  return serializeBatch(events, arrival, limits, newId, nestingChecked).lines;
}

/** A batch's lines (`serializeEvents`) and the span of its events' timestamps. */
export interface SerializedBatch {
  lines: Buffer;
  /**
   * The oldest and newest instant among the events, by the rule every reader applies to the
   * stored `timestamp` (`eventTimestampMicros`, which the SQL macro `le_timestamp` equals), the
   * arrival time's for an event without one; undefined for no events. The memory tables keep it
   * per segment instead of asking DuckDB for it after each insert.
   */
  span: EventSpan | undefined;
  /**
   * True when no event's `metadata` holds a `[` as written (no array, no `[` in a key or a string):
   * the arrays flag (`arrays:metadata`) false on every row, known from this parse, so a query over
   * the memory tables' rows runs its text without the arrays half (docs/definitions.md, "Typed fields").
   */
  arraysFree: boolean;
}

/**
 * `serializeEvents`, with the span of the events' timestamps read by the check each event gets anyway.
 *
 * @example
 * const { lines, span } = serializeBatch([{ message: 'a', timestamp: 1795256102 }], '2026-11-21T12:00:00.000000Z');
 * // span: { oldest: 1795256102000000n, newest: 1795256102000000n }
 */
export function serializeBatch(events: readonly unknown[], arrival: string, limits: BatchLimits = BATCH_LIMITS, newId?: (index: number) => string, nestingChecked = false): SerializedBatch {
  const tally: SpanTally = { oldest: null, newest: null, arrival: null };
  if (!Array.isArray(events)) throw new InvalidBodyError('The events must be an array.');
  if (events.length > limits.maxEvents) {
    throw new PayloadTooLargeError(limits.maxEvents, `One batch holds at most ${limits.maxEvents} events, this one ${events.length}; send smaller batches.`);
  }
  let text = '';
  let arraysFree = true;
  // Once an event holds a bigint, the others of its batch likely do: no failed attempt each.
  let exact = false;
  const maxEventBytes = Math.min(limits.maxEventBytes ?? MAX_LINE_BYTES, MAX_LINE_BYTES);
  for (let i = 0; i < events.length; i++) {
    const event = normalize(events[i], i, arrival, newId ?? newUuid, tally);
    let line = '';
    try {
      if (!exact) {
        try {
          line = JSON.stringify(event);
        } catch (error) {
          if (!isBigIntError(error)) throw error;
          exact = true;
        }
      }
      // Integers past 2^53 arrive as bigint (parse-body.ts) and are written as their digits.
      if (exact) line = stringifyLosslessJson(event);
      // JSON.stringify writes a lone surrogate as \udXXX (and nothing of a well-formed string so).
      if (line.includes('\\ud')) line = stringifyExactJson(wellFormed(parseExactJson(line)));
    } catch (error) {
      // A cycle, or nesting deeper than the stack.
      throw new InvalidBodyError(`Event ${i} cannot be written as JSON: ${(error as Error).message}`, { index: i, cause: error });
    }
    // A longer line is one the engine's NDJSON reader, or compaction's memory, may not take (UTF-16 units: at most 3 bytes each).
    if (line.length * 3 > maxEventBytes && Buffer.byteLength(line) > maxEventBytes) {
      const why =
        maxEventBytes < MAX_LINE_BYTES ? "what this server's compaction fits in its memory; a larger --memory-limit takes longer events" : 'the longest line the NDJSON reader is sure to take';
      throw new InvalidBodyError(`Event ${i} takes ${Buffer.byteLength(line)} bytes as stored; an event may take at most ${maxEventBytes} (${why}).`, { index: i });
    }
    text += `${line}\n`;
    if (arraysFree && metadataMayHoldBracket(event)) arraysFree = false;
    // Counted in UTF-16 units here (at most 3 UTF-8 bytes each), exactly below.
    if (text.length > limits.maxBytes) break;
  }
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length > limits.maxBytes) {
    throw new PayloadTooLargeError(limits.maxBytes, `The events take more than ${limits.maxBytes} bytes as stored; send smaller batches.`);
  }
  const deep = nestingChecked ? -1 : tooDeepAt(bytes);
  if (deep >= 0) {
    let index = 0;
    for (let at = bytes.indexOf(0x0a); at >= 0 && at < deep; at = bytes.indexOf(0x0a, at + 1)) index++;
    throw new InvalidBodyError(`Event ${index} is nested more than ${MAX_NESTING} levels deep.`, { index });
  }
  return { lines: bytes, span: tally.oldest === null || tally.newest === null ? undefined : { oldest: tally.oldest, newest: tally.newest }, arraysFree };
}

/**
 * Whether the event's `metadata`, as its line writes it, may hold a `[`: an array, or a `[` in a
 * key or a string (what the arrays flag, `contains(metadata, '[')`, tests). Every top-level key
 * that is `metadata` in any case is looked at, and past 64 levels the answer is yes: a false "no"
 * would leave an event's unnested rows out of a query, a false "yes" only costs it the arrays half.
 */
function metadataMayHoldBracket(event: unknown): boolean {
  if (typeof event !== 'object' || event === null) return false;
  for (const key of Object.keys(event)) {
    if (key.length === 8 && key.toLowerCase() === 'metadata' && mayHoldBracket((event as Record<string, unknown>)[key], 0)) return true;
  }
  return false;
}

function mayHoldBracket(value: unknown, depth: number): boolean {
  if (typeof value === 'string') return value.includes('[');
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value) || depth >= 64) return true;
  for (const key of Object.keys(value)) {
    if (key.includes('[') || mayHoldBracket((value as Record<string, unknown>)[key], depth + 1)) return true;
  }
  return false;
}

function tallyInstant(tally: SpanTally, micros: Micros): void {
  if (tally.oldest === null || micros < tally.oldest) tally.oldest = micros;
  if (tally.newest === null || micros > tally.newest) tally.newest = micros;
}

/** A JSON value with every lone surrogate of its strings and keys replaced by U+FFFD. */
function wellFormed(value: unknown): unknown {
  if (typeof value === 'string') return toWellFormed(value);
  if (Array.isArray(value)) return value.map(wellFormed);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    Object.defineProperty(out, toWellFormed(key), { value: wellFormed(field), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** `String.prototype.toWellFormed` (Node 20; not yet in TypeScript's ES2023 library). */
function toWellFormed(text: string): string {
  return (text as unknown as { toWellFormed(): string }).toWellFormed();
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const type = typeof value;
  return type === 'object' ? 'an object' : `a ${type}`;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'number') return String(value);
  return `(${kindOf(value)})`;
}
