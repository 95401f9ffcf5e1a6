import { describe, expect, it } from 'vitest';
import { QueryGate } from '../src/util/query-gate';
import { threadsWithin } from '../src/duckdb/open-database';
import { settle } from './support/cache-harness';

class OutOfMemory extends Error {}
const retryAloneWhen = (error: unknown) => error instanceof OutOfMemory;

/** A promise the test settles by hand. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('QueryGate: a task out of memory beside others runs again alone', () => {
  it('retries it once nothing else runs, holding new tasks back until it has run', async () => {
    const gate = new QueryGate({ maxConcurrent: 2, maxQueued: 10, retryAloneWhen });
    const order: string[] = [];
    const other = deferred();
    const running = gate.run(async () => {
      order.push('other');
      await other.promise;
      order.push('other done');
    });
    let attempts = 0;
    const hungry = gate.run(async () => {
      attempts++;
      order.push(`hungry ${attempts}`);
      if (attempts === 1) throw new OutOfMemory('Out of Memory Error');
      return 'fits alone';
    });
    await settle();
    expect(order).toEqual(['other', 'hungry 1']);
    const later = gate.run(async () => void order.push('later'));
    await settle();
    // The lone retry waits for `other`; `later` waits for the lone retry.
    expect(order).toEqual(['other', 'hungry 1']);
    expect(gate.load).toEqual({ running: 1, queued: 2 });
    other.resolve();
    expect(await hungry).toBe('fits alone');
    await Promise.all([running, later]);
    expect(order).toEqual(['other', 'hungry 1', 'other done', 'hungry 2', 'later']);
    expect(gate.load).toEqual({ running: 0, queued: 0 });
  });

  it('fails for good when it already ran alone, or for any other error', async () => {
    const gate = new QueryGate({ maxConcurrent: 2, maxQueued: 10, retryAloneWhen });
    let attempts = 0;
    await expect(
      gate.run(async () => {
        attempts++;
        throw new OutOfMemory('alone');
      }),
    ).rejects.toThrow('alone');
    expect(attempts).toBe(1);
    const other = deferred();
    const running = gate.run(() => other.promise);
    await expect(
      gate.run(async () => {
        attempts++;
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(attempts).toBe(2);
    other.resolve();
    await running;
  });

  it('counts a task as shared when another started while it ran', async () => {
    const gate = new QueryGate({ maxConcurrent: 2, maxQueued: 10, retryAloneWhen });
    const inside = deferred();
    const fail = deferred();
    let attempts = 0;
    const hungry = gate.run(async () => {
      attempts++;
      if (attempts > 1) return 'second try';
      inside.resolve();
      await fail.promise;
      throw new OutOfMemory('Out of Memory Error');
    });
    await inside.promise;
    await gate.run(async () => undefined); // started and finished while `hungry` ran
    fail.resolve();
    expect(await hungry).toBe('second try');
  });
});

describe('threads under a memory limit', () => {
  it('gives one DuckDB thread per 128 MiB of the limit, at least one, at most the cores', () => {
    expect(threadsWithin(256e6, 2)).toBe(1);
    expect(threadsWithin(512 * 2 ** 20, 2)).toBe(2);
    expect(threadsWithin(64e6, 8)).toBe(1);
    expect(threadsWithin(4e9, 8)).toBe(8);
  });
});
