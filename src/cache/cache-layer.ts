import type { AnyEndpointDefinition, CachePolicy, NormalizedParams } from '../definitions/definition';
import { QueryGate } from '../util/query-gate';
import { cacheKey } from './cache-key';
import type { CacheClock } from './real-clock';
import type { CacheEntry, CacheLock, ResultCache } from './result-cache';
import type { CacheScheduler } from '../util/scheduler';
import { withinTime } from './time-limit';

/** How an answer was obtained: from the cache, computed for it, or computed with no cache in play. */
export type CacheStatus = 'hit' | 'miss' | 'bypass';

/**
 * Cache counters of an `Endpoints` instance (part of `stats()`).
 *
 * @example
 * const { cacheHits, cacheMisses } = ep.stats();
 * const hitRatio = cacheHits / Math.max(1, cacheHits + cacheMisses);
 */
export interface CacheCounters {
  /** Answers served from the cache. */
  cacheHits: number;
  /** Answers of cached endpoints that had to wait for the engine (concurrent misses of one key each count). */
  cacheMisses: number;
  /** Background refreshes that stored a new result. */
  warmingRefreshes: number;
  /** Background refreshes that failed; the previous result stays until it expires. */
  warmingFailures: number;
  /** Store operations that failed or ran past `storeTimeoutMs`; the answer was computed instead. */
  cacheErrors: number;
}

/** An answer from the cache layer: the entry, how it was obtained, and the policy it ran under. */
export interface CacheRead {
  entry: CacheEntry;
  status: CacheStatus;
  policy: CachePolicy | null;
}

export interface CacheLayerOptions {
  /** The store, or null when caching is off. */
  store: ResultCache | null;
  policies: ReadonlyMap<string, CachePolicy | null>;
  /** The real clock ages, lifetimes and warming are measured with (never the windows' `now`). */
  clock: CacheClock;
  scheduler: CacheScheduler;
  /** Background refreshes running at once, so warming cannot take every engine slot. */
  warmingConcurrency: number;
  /** Keys kept warm at most; past it the least recently read key stops being warmed. */
  maxWarmingKeys: number;
  /** Longest wait for one store operation (ms); past it the store counts as failed for that call. */
  storeTimeoutMs: number;
  /** Counters this layer increments (shared with the endpoints' own). */
  counters: CacheCounters;
}

/** One key this process keeps warm: it was read within the last lifetime. */
interface WarmKey {
  readonly key: string;
  readonly policy: CachePolicy;
  readonly compute: () => Promise<CacheEntry>;
  lastReadAt: number;
  /** computedAt of the newest entry this process has seen for the key (ms). */
  seenAt: number;
  /** When the next background refresh is due. */
  refreshAt: number;
  cancel: (() => void) | null;
}

const NO_LOCK: CacheLock = { release: async () => undefined };

/**
 * Between validated calls and the engine: lifetimes, single-flight, warming and read tracking.
 *
 * Freshness is always decided here, from the entry's `computedAt` and the cache's real clock
 * (never the `now` the windows are placed at, never the store's own expiry). Every store call is
 * bounded by `storeTimeoutMs`: a slow or unreachable store costs a call that long at most, then
 * the answer is computed as if the store had failed. Each process warms the keys read in it
 * within the last lifetime, at most `maxWarmingKeys` of them; with a shared store the refresh
 * itself runs under the store's lock and is skipped when another process already refreshed the
 * key this interval, so a key read anywhere stays warm and is refreshed once per interval in total.
 */
export class CacheLayer {
  private readonly inFlight = new Map<string, Promise<CacheEntry>>();
  /** Keys kept warm, least recently read first (a read moves a key to the end). */
  private readonly warm = new Map<string, WarmKey>();
  private readonly running = new Set<Promise<void>>();
  private readonly gate: QueryGate;
  private closed = false;

  constructor(private readonly options: CacheLayerOptions) {
    this.gate = new QueryGate({ maxConcurrent: options.warmingConcurrency, maxQueued: Number.POSITIVE_INFINITY });
  }

  /** Keys this process is keeping warm now. */
  get warmingKeys(): number {
    return this.warm.size;
  }

  /**
   * The answer of a validated call: from the store when fresh, else computed once for all waiters.
   * `sqlKey` is the key of a caller's SQL (sandboxed calls), cached under a key of its own.
   */
  async read(definition: AnyEndpointDefinition, params: NormalizedParams, compute: () => Promise<CacheEntry>, sqlKey?: string): Promise<CacheRead> {
    const policy = this.options.policies.get(definition.name) ?? null;
    if (policy === null || this.options.store === null) return { entry: await compute(), status: 'bypass', policy: null };
    const key = cacheKey(definition, params, sqlKey);
    const cached = await this.load(key);
    const now = this.options.clock();
    if (cached && now - Date.parse(cached.computedAt) < policy.ttlSeconds * 1000) {
      this.options.counters.cacheHits++;
      this.track(key, policy, compute, cached, now);
      return { entry: cached, status: 'hit', policy };
    }
    this.options.counters.cacheMisses++;
    const entry = await this.computeOnce(key, policy, compute);
    this.track(key, policy, compute, entry, now);
    return { entry, status: 'miss', policy };
  }

  /** Stops all warming; running refreshes finish (see `settled`). */
  stop(): void {
    this.closed = true;
    for (const warm of this.warm.values()) warm.cancel?.();
    this.warm.clear();
  }

  /** Resolves when no warming work is running any more. */
  async settled(): Promise<void> {
    while (this.running.size) await Promise.allSettled([...this.running]);
  }

  /** Concurrent computations of one key share one engine query; errors are never stored. */
  private computeOnce(key: string, policy: CachePolicy, compute: () => Promise<CacheEntry>): Promise<CacheEntry> {
    const known = this.inFlight.get(key);
    if (known) return known;
    const flight = (async () => {
      const entry = await compute();
      await this.save(key, entry, policy);
      return entry;
    })().finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, flight);
    return flight;
  }

  /** Notes a read: the key's lifetime of being warmed starts again (or starts). */
  private track(key: string, policy: CachePolicy, compute: () => Promise<CacheEntry>, entry: CacheEntry, now: number): void {
    if (this.closed || !(policy.warmingSeconds > 0)) return;
    const known = this.warm.get(key);
    if (known) {
      known.lastReadAt = Math.max(known.lastReadAt, now);
      known.seenAt = Math.max(known.seenAt, Date.parse(entry.computedAt));
      this.warm.delete(key);
      this.warm.set(key, known);
      return;
    }
    // Bounded like the store: a flood of distinct keys stops the warming of the least recently read.
    while (this.warm.size >= this.options.maxWarmingKeys) {
      const [, oldest] = this.warm.entries().next().value!;
      oldest.cancel?.();
      this.warm.delete(oldest.key);
    }
    const warm: WarmKey = {
      key,
      policy,
      compute,
      lastReadAt: now,
      seenAt: Date.parse(entry.computedAt),
      refreshAt: Date.parse(entry.computedAt) + policy.warmingSeconds * 1000,
      cancel: null,
    };
    this.warm.set(key, warm);
    this.plan(warm);
  }

  /** Wakes the key at its next refresh or when it will have gone a lifetime unread, whichever is first. */
  private plan(warm: WarmKey): void {
    const dueAt = Math.min(warm.refreshAt, warm.lastReadAt + warm.policy.ttlSeconds * 1000);
    warm.cancel = this.options.scheduler.schedule(dueAt - this.options.clock(), () => this.runTracked(() => this.tick(warm)));
  }

  private runTracked(work: () => Promise<void>): Promise<void> {
    const done: Promise<void> = work()
      .catch(() => undefined)
      .finally(() => this.running.delete(done));
    this.running.add(done);
    return done;
  }

  private async tick(warm: WarmKey): Promise<void> {
    warm.cancel = null;
    if (!this.isCurrent(warm)) return;
    const now = this.options.clock();
    if (now >= warm.lastReadAt + warm.policy.ttlSeconds * 1000) {
      await this.drop(warm);
      return;
    }
    if (now >= warm.refreshAt) {
      const next = await this.refresh(warm);
      if (next === 'gone') {
        if (this.isCurrent(warm)) this.warm.delete(warm.key);
        return;
      }
      warm.refreshAt = next;
    }
    // Reads during the refresh moved the drop deadline; plan() takes the latest.
    if (this.isCurrent(warm)) this.plan(warm);
  }

  /**
   * Refreshes a key in the background; resolves with when the next refresh is due, or 'gone' when
   * the store evicted the entry before its lifetime ended (a bounded store making room): then
   * warming stops until the next read, so warming work stays within the store's bounds.
   */
  private refresh(warm: WarmKey): Promise<number | 'gone'> {
    const warmingMs = warm.policy.warmingSeconds * 1000;
    return this.gate.run(async () => {
      if (!this.isCurrent(warm)) return Number.POSITIVE_INFINITY;
      const lock = await this.lock(warm);
      // Another process holds the lock: it refreshes this interval and we read its result.
      if (lock === null) return this.options.clock() + warmingMs;
      try {
        const current = await this.load(warm.key);
        const ttlMs = warm.policy.ttlSeconds * 1000;
        if (!current && this.options.clock() - warm.seenAt < ttlMs) return 'gone';
        const currentAt = current ? Date.parse(current.computedAt) : Number.NEGATIVE_INFINITY;
        warm.seenAt = Math.max(warm.seenAt, currentAt);
        // Refreshed meanwhile (by a reader's miss, or by another process that held the lock).
        if (this.options.clock() - currentAt < warmingMs) return currentAt + warmingMs;
        const entry = await this.computeOnce(warm.key, warm.policy, warm.compute);
        warm.seenAt = Math.max(warm.seenAt, Date.parse(entry.computedAt));
        this.options.counters.warmingRefreshes++;
        return Date.parse(entry.computedAt) + warmingMs;
      } catch {
        this.options.counters.warmingFailures++;
        return this.options.clock() + warmingMs;
      } finally {
        await this.bounded(() => lock.release(), undefined);
      }
    });
  }

  /** Forgets a key unread for a lifetime: its warming stops and its entry goes. */
  private async drop(warm: WarmKey): Promise<void> {
    this.warm.delete(warm.key);
    // In a shared store another process may still read it; it expires by its time to live there.
    const store = this.options.store;
    if (!store || store.shared) return;
    await this.bounded(() => store.delete(warm.key), undefined);
  }

  private async lock(warm: WarmKey): Promise<CacheLock | null> {
    const store = this.options.store;
    if (!store?.tryLock) return NO_LOCK;
    // The expiry only matters if this process dies mid-refresh: the next interval may go ahead.
    // A lock granted after we stopped waiting is given back, so it does not block the interval.
    return this.bounded(
      () => store.tryLock!(warm.key, warm.policy.warmingSeconds),
      null,
      (late) => late?.release(),
    );
  }

  private async load(key: string): Promise<CacheEntry | undefined> {
    const store = this.options.store;
    return store ? this.bounded(() => store.get(key), undefined) : undefined;
  }

  private async save(key: string, entry: CacheEntry, policy: CachePolicy): Promise<void> {
    const store = this.options.store;
    const remainingSeconds = policy.ttlSeconds - (this.options.clock() - Date.parse(entry.computedAt)) / 1000;
    if (!store || !(remainingSeconds > 0)) return;
    await this.bounded(() => store.set(key, entry, remainingSeconds), undefined);
  }

  /**
   * One store operation within `storeTimeoutMs`: its value, or `fallback` when it failed or took
   * too long (counted in `cacheErrors`). `late` gets the value of a call that answered too late.
   */
  private async bounded<T>(call: () => Promise<T>, fallback: T, late?: (value: T) => unknown): Promise<T> {
    const outcome = await withinTime(call, this.options.storeTimeoutMs);
    if (outcome.ok) return outcome.value;
    this.options.counters.cacheErrors++;
    if (late && outcome.timedOut) {
      outcome.late.then((value) => late(value)).catch(() => undefined);
    }
    return fallback;
  }

  private isCurrent(warm: WarmKey): boolean {
    return !this.closed && this.warm.get(warm.key) === warm;
  }
}
