import { randomUUID } from 'node:crypto';
import type { SetOptions } from 'redis';
import { isCacheEntry, type CacheEntry, type CacheLock, type ResultCache } from '../cache/result-cache';

/**
 * The part of a node-redis v5 client the cache uses. A client from `createClient()` (RESP2 or 3)
 * or a cluster from `createCluster()` fits; the cache never connects or closes it, you do.
 */
export interface RedisCacheClient {
  get(key: string): Promise<unknown>;
  set(key: string, value: string, options?: SetOptions): Promise<unknown>;
  del(key: string): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

/** Options of `redisCache`. */
export interface RedisCacheOptions {
  /** A connected node-redis v5 client (`createClient()` or `createCluster()`). */
  client: RedisCacheClient;
  /** Prefix of every key this cache writes (default `log-endpoints:`). */
  prefix?: string;
}

/** Deletes the lock only while it still holds our token, so an expired-and-retaken lock is left alone. */
const RELEASE_SCRIPT = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

/**
 * A `ResultCache` in Redis, for several instances behind a load balancer: they share results, and
 * each warming refresh of a key runs in one instance only (a `SET NX PX` lock), the others read
 * the refreshed value. Entries are JSON with a Redis expiry of their remaining lifetime.
 *
 * @example
 * import { createClient } from 'redis';
 * import { createEndpoints } from 'log-endpoints';
 * import { redisCache } from 'log-endpoints/redis';
 *
 * const client = await createClient({ url: 'redis://127.0.0.1:6379' }).connect();
 * const ep = await createEndpoints({ sources, cache: redisCache({ client, prefix: 'logs:' }) });
 * // ...
 * await ep.close();
 * await client.quit();
 */
export function redisCache(options: RedisCacheOptions): ResultCache {
  const { client } = options;
  const prefix = options.prefix ?? 'log-endpoints:';
  const entryKey = (key: string) => `${prefix}entry:${key}`;
  const lockKey = (key: string) => `${prefix}lock:${key}`;
  const millis = (seconds: number) => Math.max(1, Math.ceil(seconds * 1000));

  return {
    shared: true,
    async get(key: string): Promise<CacheEntry | undefined> {
      const text = asText(await client.get(entryKey(key)));
      if (text === null) return undefined;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        return undefined;
      }
      return isCacheEntry(value) ? value : undefined;
    },
    async set(key: string, value: CacheEntry, ttlSeconds: number): Promise<void> {
      await client.set(entryKey(key), JSON.stringify(value), { expiration: { type: 'PX', value: millis(ttlSeconds) } });
    },
    async delete(key: string): Promise<void> {
      await client.del(entryKey(key));
    },
    async tryLock(key: string, ttlSeconds: number): Promise<CacheLock | null> {
      const token = randomUUID();
      const name = lockKey(key);
      const reply = await client.set(name, token, { condition: 'NX', expiration: { type: 'PX', value: millis(ttlSeconds) } });
      if (asText(reply) !== 'OK') return null;
      return {
        release: async () => {
          await client.eval(RELEASE_SCRIPT, { keys: [name], arguments: [token] });
        },
      };
    },
  };
}

/** Replies are strings, or Buffers when the client maps types that way. */
function asText(reply: unknown): string | null {
  if (typeof reply === 'string') return reply;
  if (Buffer.isBuffer(reply)) return reply.toString('utf8');
  return null;
}
