import { describe, expect, it } from 'vitest';
import { InvalidOptionError, memoryCache, type CacheEntry } from '../src/index';

const entry = (n: number, pad = 0): CacheEntry => ({
  rows: [{ timestamp: '2026-11-21T10:00:00.000000Z', count: n, note: 'x'.repeat(pad), metadata: { a: { b: [1, null] } } }],
  computedAt: '2026-11-21T10:00:00.000Z',
  engineMs: 1.5,
});
const sizeOf = (key: string, value: CacheEntry) => Buffer.byteLength(key) + Buffer.byteLength(JSON.stringify(value));

describe('memoryCache', () => {
  it('gives back what was stored, as a copy that survives JSON', async () => {
    const cache = memoryCache();
    const value = entry(1);
    await cache.set('k', value, 60);
    const got = await cache.get('k');
    expect(got).toEqual(value);
    got!.rows.push({ count: 99 });
    expect(await cache.get('k')).toEqual(value);
    expect(cache.entries).toBe(1);
    expect(cache.bytes).toBe(sizeOf('k', value));
  });

  it('forgets an entry after its time to live, on its own clock', async () => {
    let t = Date.parse('2026-11-21T10:00:00Z');
    const cache = memoryCache({ clock: () => t });
    await cache.set('k', entry(1), 10);
    t += 9_999;
    expect(await cache.get('k')).toBeDefined();
    t += 1;
    expect(await cache.get('k')).toBeUndefined();
    expect(cache.entries).toBe(0);
    expect(cache.bytes).toBe(0);
  });

  it('deletes', async () => {
    const cache = memoryCache();
    await cache.set('k', entry(1), 60);
    await cache.delete('k');
    await cache.delete('never-there');
    expect(await cache.get('k')).toBeUndefined();
    expect(cache.bytes).toBe(0);
  });

  it('evicts the least recently used entry past maxEntries', async () => {
    const cache = memoryCache({ maxEntries: 2 });
    await cache.set('a', entry(1), 60);
    await cache.set('b', entry(2), 60);
    await cache.get('a'); // a is now more recent than b
    await cache.set('c', entry(3), 60);
    expect(await cache.get('b')).toBeUndefined();
    expect((await cache.get('a'))?.rows[0]?.count).toBe(1);
    expect((await cache.get('c'))?.rows[0]?.count).toBe(3);
    expect(cache.entries).toBe(2);
  });

  it('evicts by bytes, and never keeps an entry larger than maxBytes', async () => {
    const one = sizeOf('a', entry(1, 100));
    const cache = memoryCache({ maxBytes: one * 2 + 10 });
    await cache.set('a', entry(1, 100), 60);
    await cache.set('b', entry(2, 100), 60);
    await cache.set('c', entry(3, 100), 60);
    expect(await cache.get('a')).toBeUndefined();
    expect(cache.entries).toBe(2);
    await cache.set('huge', entry(4, one * 3), 60);
    expect(await cache.get('huge')).toBeUndefined();
    expect(cache.bytes).toBeLessThanOrEqual(one * 2 + 10);
  });

  it('never exceeds its bounds, whatever is stored', async () => {
    const maxEntries = 7;
    const maxBytes = 3000;
    const cache = memoryCache({ maxEntries, maxBytes });
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 500; i++) {
      const key = `k${Math.floor(random() * 20)}`;
      if (random() < 0.15) await cache.delete(key);
      else await cache.set(key, entry(i, Math.floor(random() * 1500)), 60);
      expect(cache.entries).toBeLessThanOrEqual(maxEntries);
      expect(cache.bytes).toBeLessThanOrEqual(maxBytes);
    }
    // The byte count is the sum of what is really held.
    let held = 0;
    for (let k = 0; k < 20; k++) {
      const value = await cache.get(`k${k}`);
      if (value) held += sizeOf(`k${k}`, value);
    }
    expect(held).toBe(cache.bytes);
  });

  it('refuses bounds that are not positive integers, naming the option', () => {
    expect(() => memoryCache({ maxEntries: 0 })).toThrow(expect.objectContaining({ code: 'invalid_option', option: 'memoryCache.maxEntries' }));
    expect(() => memoryCache({ maxBytes: 1.5 })).toThrow(InvalidOptionError);
    expect(() => memoryCache({ maxBytes: 1.5 })).toThrow(/maxBytes must be a positive integer, not 1\.5/);
    expect(() => memoryCache({ clock: 5 as never })).toThrow(expect.objectContaining({ option: 'memoryCache.clock' }));
  });

  it('expires on the real monotonic clock by default, and tells its entry bound', async () => {
    const cache = memoryCache({ maxEntries: 5 });
    expect(cache.maxEntries).toBe(5);
    await cache.set('k', entry(1), 3600);
    expect(await cache.get('k')).toBeDefined();
  });
});
