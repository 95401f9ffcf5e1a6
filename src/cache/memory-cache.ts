import { InvalidOptionError } from '../errors';
import { describeValue } from '../util/option-checks';
import { realClock, type CacheClock } from './real-clock';
import { isCacheEntry, type CacheEntry, type ResultCache } from './result-cache';
import { parseExactJson, stringifyExactJson } from '../util/exact-json';

/**
 * Bounds of `memoryCache`.
 *
 * @example
 * const options: MemoryCacheOptions = { maxEntries: 500, maxBytes: 16 * 1024 * 1024 };
 */
export interface MemoryCacheOptions {
  /** Most entries held at once (default 1000). */
  maxEntries?: number;
  /** Most bytes held at once: UTF-8 bytes of each key plus its JSON entry (default 64 MiB). */
  maxBytes?: number;
  /** The clock time-to-live is measured with, ms (default: the real monotonic clock the cache uses). */
  clock?: CacheClock;
}

/**
 * The in-process store, with its current size.
 *
 * @example
 * const cache = memoryCache();
 * console.log(cache.entries, cache.bytes);
 */
export interface MemoryCache extends ResultCache {
  /** Entries held now. */
  readonly entries: number;
  /** Bytes held now, measured as `maxBytes` is. */
  readonly bytes: number;
  /** The entry bound it was made with; the endpoints keep at most this many keys warm. */
  readonly maxEntries: number;
}

export const DEFAULT_MEMORY_CACHE = { maxEntries: 1000, maxBytes: 64 * 1024 * 1024 } as const;

interface Slot {
  json: string;
  bytes: number;
  expiresAt: number;
}

/**
 * A bounded in-process LRU store: past `maxEntries` or `maxBytes` the least recently used entries
 * are evicted, and an entry larger than `maxBytes` on its own is not kept at all. Entries are held
 * as JSON text, so every reader gets its own copy and the size is the exact serialized size.
 * It is the default store of `createEndpoints` (1000 entries, 64 MiB).
 *
 * @example
 * const ep = await createEndpoints({ sources, cache: memoryCache({ maxEntries: 200, maxBytes: 8 * 1024 * 1024 }) });
 */
export function memoryCache(options: MemoryCacheOptions = {}): MemoryCache {
  const maxEntries = options.maxEntries ?? DEFAULT_MEMORY_CACHE.maxEntries;
  const maxBytes = options.maxBytes ?? DEFAULT_MEMORY_CACHE.maxBytes;
  for (const [name, value] of [
    ['maxEntries', maxEntries],
    ['maxBytes', maxBytes],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new InvalidOptionError(`memoryCache.${name}`, `memoryCache: ${name} must be a positive integer, not ${describeValue(value)}.`);
    }
  }
  if (options.clock !== undefined && typeof options.clock !== 'function') {
    throw new InvalidOptionError('memoryCache.clock', 'memoryCache: clock must be a function returning milliseconds.');
  }
  const now = options.clock ?? realClock;
  // A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
  const slots = new Map<string, Slot>();
  let bytes = 0;

  const remove = (key: string) => {
    const slot = slots.get(key);
    if (!slot) return;
    slots.delete(key);
    bytes -= slot.bytes;
  };

  return {
    get entries() {
      return slots.size;
    },
    get bytes() {
      return bytes;
    },
    maxEntries,
    async get(key: string): Promise<CacheEntry | undefined> {
      const slot = slots.get(key);
      if (!slot) return undefined;
      slots.delete(key);
      if (slot.expiresAt <= now()) {
        bytes -= slot.bytes;
        return undefined;
      }
      slots.set(key, slot);
      const value: unknown = parseExactJson(slot.json);
      return isCacheEntry(value) ? value : undefined;
    },
    async set(key: string, value: CacheEntry, ttlSeconds: number): Promise<void> {
      remove(key);
      const json = stringifyExactJson(value);
      const size = Buffer.byteLength(key) + Buffer.byteLength(json);
      if (size > maxBytes || !(ttlSeconds > 0)) return;
      while (slots.size >= maxEntries || bytes + size > maxBytes) {
        const oldest = slots.keys().next().value as string;
        remove(oldest);
      }
      slots.set(key, { json, bytes: size, expiresAt: now() + ttlSeconds * 1000 });
      bytes += size;
    },
    async delete(key: string): Promise<void> {
      remove(key);
    },
  };
}
