import { createHash } from 'node:crypto';
import { PayloadTooLargeError } from '../errors';
import { InternalError } from '../util/internal-error';

/**
 * The ids of events sent without one, derived from what was sent (docs/ingest.md, "Retries and
 * ids"): a sender that retries a body whose answer it never got (Vector sends no ids) sends the
 * same bytes again, so each event of the retry gets the id it got the first time.
 *
 * A derived id is a UUID v8 (RFC 9562, custom layout) whose first 98 bits (version and variant
 * aside) are the *body key* of the source and body, and whose last 24 bits are the event's
 * position in the body. The key is readable back from any stored id, which is what rebuilds the
 * window of recent bodies from the write-ahead log after a restart (recent-bodies.ts): the key
 * is written in the same group, under the same checksum, as the events themselves.
 */

/** Fixed forever: the same source and body give the same key in every installation and version. */
const NAMESPACE = Buffer.from('0c4f7a0e5d2b4f61a8e3c97b1d6e5a42', 'hex');

/** Bytes of the key as they appear at the start of the id (version and variant bits set in them). */
const KEY_BYTES = 13;

/** Positions fit the id's last 3 bytes. */
export const MAX_POSITION = 0xffffff;

/**
 * A body's digest: SHA-256 of its bytes as read (after decompression).
 *
 * @example
 * const key = bodyKey('edgeLogs', bodyDigest(body));
 */
export function bodyDigest(body: Uint8Array): Buffer {
  return createHash('sha256').update(body).digest();
}

/**
 * The key of a body sent to a source, as 26 hex digits: the first 13 bytes of the ids derived
 * from it (`derivedId`). Two keys are equal only for the same source and the same body digest
 * (98 bits of SHA-256).
 *
 * @example
 * const key = bodyKey('edgeLogs', bodyDigest(Buffer.from('[{"message":"a"}]')));
 * derivedId(key, 0); // '…-8…-…' the id of event 0, the same for every retry of the body
 */
export function bodyKey(source: string, digest: Uint8Array): string {
  const hash = createHash('sha256').update(NAMESPACE).update(source, 'utf8').update(Buffer.of(0)).update(digest).digest();
  const key = hash.subarray(0, KEY_BYTES);
  key[6] = (key[6]! & 0x0f) | 0x80;
  key[8] = (key[8]! & 0x3f) | 0x80;
  return key.toString('hex');
}

/**
 * The id of the event at `position` of the body whose key is `key`: a UUID v8.
 *
 * @example
 * derivedId(bodyKey('edgeLogs', digest), 2); // 'xxxxxxxx-xxxx-8xxx-yxxx-xxxxxx000002'
 */
export function derivedId(key: string, position: number): string {
  // A body of more events than an id can number keeps random ids (`retryable`); should one reach here, it is refused as too large, never a crash.
  if (position > MAX_POSITION) throw new PayloadTooLargeError(MAX_POSITION + 1, `A body holds at most ${MAX_POSITION + 1} events whose ids are derived from it; send smaller batches.`);
  // Positions are counted by the body's parser from 0: anything else is a bug of ours.
  if (!Number.isInteger(position) || position < 0) throw new InternalError('invariant', `An event's position in its body must be 0 to ${MAX_POSITION}, not ${position}.`);
  return idPrefix(key) + position.toString(16).padStart(6, '0');
}

/** The last key's first 30 characters of an id (26 hex digits and their dashes): every event of a body shares them. */
let lastKey = '';
let lastPrefix = '';

function idPrefix(key: string): string {
  if (key !== lastKey) {
    lastPrefix = `${key.slice(0, 8)}-${key.slice(8, 12)}-${key.slice(12, 16)}-${key.slice(16, 20)}-${key.slice(20)}`;
    lastKey = key;
  }
  return lastPrefix;
}

const DERIVED = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * The body key of a derived id, null for any other id. A sender's own UUID v8 reads as a key
 * too; it matches a body only if that body's SHA-256 does (see recent-bodies.ts).
 *
 * @example
 * bodyKeyOfId(derivedId(key, 7)) === key; // true
 */
export function bodyKeyOfId(id: string): string | null {
  if (!DERIVED.test(id)) return null;
  return id.replaceAll('-', '').slice(0, KEY_BYTES * 2);
}

/**
 * Whether a body's events may be told apart from a second sending of them: each has a
 * `timestamp` or an `id` of its own. Only then does a body get derived ids and count as a retry
 * when it comes again; an event with neither takes the arrival time, so the same body sent twice
 * may as well be two occurrences (a heartbeat): such a body keeps random ids and is stored each time.
 *
 * @example
 * retryable([{ timestamp: '2026-11-21T10:00:00Z', message: 'a' }]); // true
 * retryable([{ message: 'ping' }]); // false
 */
export function retryable(events: readonly unknown[]): boolean {
  // Positions past the id's 3 bytes (no body within the limits has that many events) keep random ids.
  if (events.length > MAX_POSITION + 1) return false;
  return events.every((event) => {
    if (typeof event !== 'object' || event === null) return true;
    const { timestamp, id } = event as { timestamp?: unknown; id?: unknown };
    return (timestamp !== undefined && timestamp !== null) || (id !== undefined && id !== null);
  });
}
