import type { PlainResponse } from './exchange';

interface Memo {
  response: PlainResponse;
  /** When the bytes stop being reused (the microcache window), on the cache clock (ms). */
  reusableUntil: number;
  /** When the cached result's lifetime ends, on the same clock. */
  lifetimeEnds: number;
}

/**
 * The last serialized answers of cached endpoints, reused for a short window (a "microcache").
 * A cache hit through the library costs validation, a key, a store read, a parse and a
 * serialization; under a dashboard's load that is most of the server's time. Reusing the bytes
 * for up to `windowMs` keeps a hit close to what a bare server sending the same bytes costs,
 * while the cache's rules still hold (docs/cache.md): an answer is never served past its result's lifetime, and a
 * warming refresh shows within `windowMs`. Both are measured on the endpoints' cache clock
 * (`ep.cacheClock()`), the real clock ages and lifetimes run on.
 */
export class AnswerMemo {
  private readonly memos = new Map<string, Memo>();
  private bytes = 0;

  constructor(
    private readonly windowMs: number,
    private readonly maxEntries = 1000,
    private readonly maxBytes = 16 * 1024 * 1024,
  ) {}

  get enabled(): boolean {
    return this.windowMs > 0;
  }

  /** A copy of the stored answer with `Cache-Control` for its remaining lifetime, or null. */
  get(key: string, now: number): PlainResponse | null {
    const memo = this.memos.get(key);
    if (!memo) return null;
    if (now >= memo.reusableUntil || now >= memo.lifetimeEnds) {
      this.remove(key, memo);
      return null;
    }
    const remaining = Math.floor((memo.lifetimeEnds - now) / 1000);
    return {
      status: memo.response.status,
      headers: { ...memo.response.headers, 'Cache-Control': `private, max-age=${remaining}`, 'X-Cache': 'HIT' },
      body: memo.response.body,
    };
  }

  set(key: string, response: PlainResponse, now: number, lifetimeEnds: number): void {
    if (!this.enabled) return;
    const size = (response.body?.byteLength ?? 0) + key.length;
    if (size > this.maxBytes) return;
    const old = this.memos.get(key);
    if (old) this.remove(key, old);
    this.memos.set(key, { response: { ...response, headers: { ...response.headers } }, reusableUntil: now + this.windowMs, lifetimeEnds });
    this.bytes += size;
    // Oldest first out, until within both bounds.
    for (const [oldestKey, oldest] of this.memos) {
      if (this.memos.size <= this.maxEntries && this.bytes <= this.maxBytes) break;
      this.remove(oldestKey, oldest);
    }
  }

  private remove(key: string, memo: Memo): void {
    this.memos.delete(key);
    this.bytes -= (memo.response.body?.byteLength ?? 0) + key.length;
  }
}
