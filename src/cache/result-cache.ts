import type { ColumnSpec } from '../definitions/definition';
import type { Row } from '../rows/shape-rows';
import type { SkippedFile } from '../files/file-checks';

/**
 * What the cache stores for one key: the shaped rows and when and how they were computed.
 * Plain JSON on purpose, so a store may serialize it (Redis stores the JSON text).
 *
 * @example
 * const entry: CacheEntry = { rows: [{ timestamp: '2026-11-21T10:00:00.000000Z', count: 3 }], computedAt: '2026-11-21T10:00:00.000Z', engineMs: 4.2 };
 */
export interface CacheEntry {
  rows: Row[];
  /** When the rows were computed, ISO 8601, on the cache's real clock (never the replayable `now`). */
  computedAt: string;
  /** Milliseconds the engine spent computing the rows. */
  engineMs: number;
  /** Files left out of the rows because they could not be read (absent when none). */
  skippedFiles?: SkippedFile[];
  /** The columns of a caller's SELECT (sandboxed answers only). */
  columns?: ColumnSpec[];
}

/**
 * A held warming lock; `release` frees it early (it expires by itself otherwise).
 *
 * @example
 * const lock = await store.tryLock?.(key, 300);
 * if (lock) try { await refresh() } finally { await lock.release() }
 */
export interface CacheLock {
  release(): Promise<void>;
}

/**
 * Where cached results live. Implement it to plug your own store; `memoryCache` (the default)
 * and `redisCache` (from `log-endpoints/redis`) are the built-in ones.
 *
 * The endpoints decide freshness from `computedAt` and their own clock: `ttlSeconds` only tells the
 * store when it may forget an entry. Every method may reject or hang; a failing store, or one that
 * takes longer than `storeTimeoutMs` (250 ms), makes the endpoints compute the answer instead
 * (counted in `stats().cacheErrors`), never fail or stall the call.
 *
 * @example
 * // A store over any async key-value API (here a Map, so just an illustration):
 * const map = new Map<string, string>();
 * const store: ResultCache = {
 *   async get(key) { const t = map.get(key); return t === undefined ? undefined : JSON.parse(t) },
 *   async set(key, value, ttlSeconds) { map.set(key, JSON.stringify(value)) },
 *   async delete(key) { map.delete(key) },
 * };
 * const ep = await createEndpoints({ sources, cache: store });
 */
export interface ResultCache {
  /** The entry under `key`, or undefined when there is none. */
  get(key: string): Promise<CacheEntry | undefined>;
  /** Stores `value` under `key`; the store may forget it after `ttlSeconds`. */
  set(key: string, value: CacheEntry, ttlSeconds: number): Promise<void>;
  delete(key: string): Promise<void>;
  /**
   * Stores that several processes share implement this: it takes a lock on `key` that expires
   * after `ttlSeconds`, or resolves null when another holder has it. Warming refreshes a key only
   * under its lock, so each refresh runs in one process. Without it, there is no lock (one process).
   */
  tryLock?(key: string, ttlSeconds: number): Promise<CacheLock | null>;
  /**
   * True when other processes read the same entries. Then a key this process stops reading is not
   * deleted (another process may still read it); it expires by its time to live instead.
   */
  readonly shared?: boolean;
}

/**
 * True when `value` has the shape of a `CacheEntry` (what a store reads back may be anything).
 * Extra fields are allowed, so entries written by a newer version still read.
 */
export function isCacheEntry(value: unknown): value is CacheEntry {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return Array.isArray(v.rows) && typeof v.computedAt === 'string' && !Number.isNaN(Date.parse(v.computedAt)) && typeof v.engineMs === 'number';
}
