// The `log-endpoints/redis` entry: the Redis result cache. It needs the optional peer dependency `redis`.
export { redisCache } from './redis/redis-cache';
export type { RedisCacheClient, RedisCacheOptions } from './redis/redis-cache';
