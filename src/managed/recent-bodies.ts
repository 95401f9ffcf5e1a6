import { readFile } from 'node:fs/promises';
import type { Wal } from './wal/wal';
import { bodyKeyOfId } from '../ingest/body-digest';

/** How long a body acknowledged stays recognised, and how many are kept (docs/ingest.md, "Retries and ids"). */
export const RECENT_BODIES = { windowMs: 5 * 60_000, maxBodies: 100_000 } as const;

/**
 * The bodies acknowledged lately, by body key (body-digest.ts), so that a sender retrying one
 * whose answer it never got is acknowledged again instead of stored twice. Bounded: a key is
 * forgotten `windowMs` after it was acknowledged (on the injected clock) or once `maxBodies`
 * newer ones came, whichever is first. A key counts from the moment its group is fsynced
 * (`remember`), before the answer; a body arriving while the same body is being stored waits for
 * that one's outcome (`once`), so two sendings at once store it once too.
 *
 * @example
 * const recent = new RecentBodies(() => Date.now());
 * await recent.once(key, () => store()); // stores; `store` calls recent.remember(key) once durable
 * await recent.once(key, () => store()); // null: acknowledged within the window, not stored again
 */
export class RecentBodies {
  /** Key -> when it was acknowledged (ms), oldest first (a Map keeps insertion order). */
  private readonly acknowledged = new Map<string, number>();
  /** Keys being stored now, with their outcome. */
  private readonly storing = new Map<string, Promise<unknown>>();

  constructor(
    private readonly nowMs: () => number,
    private readonly limits: { windowMs: number; maxBodies: number } = RECENT_BODIES,
  ) {}

  /**
   * Runs `store` unless the body of `key` was acknowledged within the window (then resolves null:
   * acknowledge it again, store nothing). A null key (a body that is not `retryable`) always stores.
   */
  async once<T>(key: string | null, store: () => Promise<T>): Promise<T | null> {
    if (key === null) return store();
    for (let other = this.storing.get(key); other; other = this.storing.get(key)) await other.catch(() => undefined);
    if (this.has(key)) return null;
    const stored = store();
    this.storing.set(key, stored);
    try {
      return await stored;
    } finally {
      this.storing.delete(key);
    }
  }

  /** Whether the body of `key` was acknowledged within the window. */
  has(key: string): boolean {
    this.expire();
    return this.acknowledged.has(key);
  }

  /** The body of `key` is durable: from now on a retry of it is acknowledged again. */
  remember(key: string): void {
    this.acknowledged.delete(key);
    this.acknowledged.set(key, this.nowMs());
    this.expire();
  }

  /**
   * Remembers the body keys of the derived ids in WAL lines (NDJSON, each event's `id` first, as
   * ingest writes them): how the window is rebuilt at a start from the segments the previous
   * process left, acknowledged as of now. Returns how many keys were new.
   */
  rememberLines(lines: Uint8Array): number {
    const bytes = Buffer.from(lines.buffer, lines.byteOffset, lines.byteLength);
    let added = 0;
    for (let at = 0; at < bytes.length; ) {
      const end = bytes.indexOf(NEWLINE, at);
      const next = end < 0 ? bytes.length : end + 1;
      if (matches(bytes, at)) {
        const key = bodyKeyOfId(bytes.toString('latin1', at + ID_START.length, at + ID_START.length + ID_LENGTH));
        if (key !== null && !this.acknowledged.has(key)) {
          this.remember(key);
          added++;
        }
      }
      at = next;
    }
    return added;
  }

  /** Bodies remembered now (for tests and stats). */
  get size(): number {
    this.expire();
    return this.acknowledged.size;
  }

  private expire(): void {
    const oldest = this.nowMs() - this.limits.windowMs;
    for (const [key, at] of this.acknowledged) {
      if (this.acknowledged.size <= this.limits.maxBodies && at > oldest) break;
      this.acknowledged.delete(key);
    }
  }
}

const NEWLINE = 0x0a;
const QUOTE = 0x22;
const ID_START = Buffer.from('{"id":"', 'latin1');
/** A UUID's text. */
const ID_LENGTH = 36;

/** Whether the line at `at` starts `{"id":"<36 characters>"`. */
function matches(bytes: Buffer, at: number): boolean {
  const quote = at + ID_START.length + ID_LENGTH;
  return quote < bytes.length && bytes[quote] === QUOTE && bytes.compare(ID_START, 0, ID_START.length, at, at + ID_START.length) === 0;
}

/**
 * Remembers the bodies of the segments a WAL found at open (left by the previous process, their
 * torn tails cut: only fsynced groups), and of those it recovers in the background as each is
 * recovered. Called before the first ingest; a segment compaction took first is skipped.
 *
 * @example
 * for (const wal of Object.values(walSet.wals)) await rememberLeftSegments(wal, recent);
 */
export async function rememberLeftSegments(wal: Wal, recent: RecentBodies): Promise<void> {
  const waiting = new Set(wal.deferred().map((d) => d.seq));
  if (waiting.size > 0) {
    const stop = wal.onSegmentClosed((segment) => {
      if (!waiting.delete(segment.seq)) return;
      if (waiting.size === 0) stop();
      void rememberSegment(segment.path, segment.committedBytes, recent);
    });
  }
  for (const segment of wal.closedSegments()) await rememberSegment(segment.path, segment.committedBytes, recent);
}

async function rememberSegment(path: string, committedBytes: number, recent: RecentBodies): Promise<void> {
  const bytes = await readFile(path).catch(() => null);
  if (bytes) recent.rememberLines(bytes.subarray(0, committedBytes));
}
