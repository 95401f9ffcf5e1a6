import { randomUUID } from 'node:crypto';
import type { SetOptions } from 'redis';
import { isCacheEntry, type CacheEntry, type CacheLock, type ResultCache } from '../cache/result-cache';
import { parseExactJson, stringifyExactJson } from '../util/exact-json';
import { EngineError } from '../errors';

/**
 * The part of a node-redis v5 client the cache uses. A client from `createClient()` (RESP2 or 3)
 * or a cluster from `createCluster()` fits; the cache never connects or closes it, you do.
 */
export interface RedisCacheClient {
  get(key: string): Promise<unknown>;
  set(key: string, value: string, options?: SetOptions): Promise<unknown>;
  del(key: string): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  /** False while the client is (re)connecting: the cache then fails at once instead of queueing. */
  readonly isReady?: boolean;
  /** The cache listens for `error`, so a Redis outage never crashes the process. */
  on?(event: 'error', listener: (error: Error) => void): unknown;
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
 * While Redis is unreachable nothing waits for it: a client that is reconnecting (`isReady`
 * false) makes every operation fail at once rather than sit in node-redis's offline queue, and
 * any operation is bounded by the endpoints' `storeTimeoutMs`; the answer is computed instead
 * and counted in `stats().cacheErrors`. The cache adds an `error` listener to the client, so an
 * outage never crashes the process (node-redis throws `error` events nobody listens to).
 *
 * @example
 * import { createClient } from 'redis';
 * import { createEndpoints } from 'log-endpoints';
 * import { redisCache } from 'log-endpoints/redis';
 *
 * const client = createClient({ url: 'redis://127.0.0.1:6379' });
 * client.on('error', (error) => console.error('redis:', error.message));
 * await client.connect();
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
  listenForErrors(client);
  /** The client, or an immediate failure while it is not connected (never the offline queue). */
  const ready = (): RedisCacheClient => {
    if (client.isReady === false) throw new EngineError('overloaded', 'Redis is not connected.');
    return client;
  };

  return {
    shared: true,
    async get(key: string): Promise<CacheEntry | undefined> {
      const text = asText(await ready().get(entryKey(key)));
      if (text === null) return undefined;
      let value: unknown;
      try {
        value = parseExactJson(text);
      } catch {
        return undefined;
      }
      return isCacheEntry(value) ? value : undefined;
    },
    async set(key: string, value: CacheEntry, ttlSeconds: number): Promise<void> {
      await ready().set(entryKey(key), stringifyExactJson(value), { expiration: { type: 'PX', value: millis(ttlSeconds) } });
    },
    async delete(key: string): Promise<void> {
      await ready().del(entryKey(key));
    },
    async tryLock(key: string, ttlSeconds: number): Promise<CacheLock | null> {
      const token = randomUUID();
      const name = lockKey(key);
      const reply = await ready().set(name, token, { condition: 'NX', expiration: { type: 'PX', value: millis(ttlSeconds) } });
      if (asText(reply) !== 'OK') return null;
      return {
        release: async () => {
          await ready().eval(RELEASE_SCRIPT, { keys: [name], arguments: [token] });
        },
      };
    },
  };
}

const listened = new WeakSet<object>();

/** One no-op `error` listener per client: node-redis reconnects by itself, the endpoints count the failures. */
function listenForErrors(client: RedisCacheClient): void {
  if (typeof client.on !== 'function' || listened.has(client)) return;
  listened.add(client);
  client.on('error', () => undefined);
}

/** Replies are strings, or Buffers when the client maps types that way. */
function asText(reply: unknown): string | null {
  if (typeof reply === 'string') return reply;
  if (Buffer.isBuffer(reply)) return reply.toString('utf8');
  return null;
}
