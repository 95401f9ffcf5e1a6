import { afterAll, describe, expect, it, vi } from 'vitest';
import { ALLOCATOR_SETTINGS, ceilingFor, IDLE_TRIM_MS, MemoryRelief, openDatabase, TRIM_SLACK_BYTES } from '../src/duckdb/open-database';

// What the relief does is measured in `npm run bench` (peak RSS under a burst); here: when it runs.
describe('MemoryRelief', () => {
  const opened: Array<Awaited<ReturnType<typeof openDatabase>>> = [];
  afterAll(() => {
    for (const { instance } of opened) instance.closeSync();
  });

  const open = async (memoryLimit?: string) => {
    const db = await openDatabase({ threads: 2, memoryLimit });
    opened.push(db);
    return db;
  };
  const threadsOf = async (db: Awaited<ReturnType<typeof openDatabase>>) => Number((await db.connection.runAndReadAll("SELECT current_setting('threads')")).getRows()[0]![0]);

  it("comes with a memory limit, and only then, with the process's ceiling as its budget", async () => {
    expect((await open()).relief).toBeNull();
    // Not DuckDB's limit: above it but within the process's budget, a trim after each query gave
    // back pages the next query faulted in again (docs/operations.md, "Memory").
    const { relief } = await open('256MB');
    expect(relief).toBeInstanceOf(MemoryRelief);
    expect(relief!.budgetBytes).toBe(ceilingFor(256e6));
    expect(relief!.budgetBytes).toBeGreaterThan(256e6);
    await relief!.close();
    const budgeted = await openDatabase({ threads: 2, memoryLimit: '214MB', memoryCeilingBytes: 512 * 2 ** 20 });
    opened.push(budgeted);
    expect(budgeted.relief!.budgetBytes).toBe(512 * 2 ** 20);
    await budgeted.relief!.close();
  });

  it('trims only when the process is above its budget, one trim at a time, and leaves the thread count as it was', async () => {
    const db = await open('256MB');
    let resident = 100e6;
    const relief = new MemoryRelief(db.instance, 2, 256e6, () => resident);
    relief.afterQuery();
    await relief.close().then(() => undefined); // nothing was running
    expect(relief.trims).toBe(0);

    const active = new MemoryRelief(db.instance, 2, 256e6, () => resident);
    resident = 300e6;
    active.afterQuery();
    active.afterQuery(); // one is already running: no second
    await active.close();
    expect(active.trims).toBe(1);
    expect(await threadsOf(db)).toBe(2);
    active.afterQuery(); // closed: never again
    expect(active.trims).toBe(1);
  });

  it('after a trim that left the process above its budget, waits for 16 MiB more growth', async () => {
    const db = await open('256MB');
    let resident = 300e6; // the application around the engine holds more than the limit
    const relief = new MemoryRelief(db.instance, 2, 256e6, () => resident);
    const trimmed = async () => {
      relief.afterQuery();
      await relief.settled();
      return relief.trims;
    };
    expect(await trimmed()).toBe(1);
    expect(await trimmed()).toBe(1); // still 300e6: nothing more to gain
    resident = 300e6 + TRIM_SLACK_BYTES + 1;
    expect(await trimmed()).toBe(2);
    await relief.close();
  });

  it('trims while idle too: when grown since the last trim, and every third look while above its idle size', async () => {
    const db = await open('256MB');
    let resident = 150e6;
    const relief = new MemoryRelief(db.instance, 2, 256e6, () => resident);
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const tick = async () => {
        vi.advanceTimersByTime(IDLE_TRIM_MS);
        await relief.settled();
        return relief.trims;
      };
      relief.startIdleTrims();
      // Idle as it started: nothing to give back.
      expect([await tick(), await tick(), await tick()]).toEqual([0, 0, 0]);
      // Load: grown past the last trim (none yet) by the slack, trimmed at the next look.
      resident = 150e6 + 2 * TRIM_SLACK_BYTES;
      expect(await tick()).toBe(1);
      // The same size (freed memory that a trim would return shows no growth): every third look.
      expect([await tick(), await tick()]).toEqual([1, 2]);
      // Back within the slack of idle: never again.
      resident = 150e6 + TRIM_SLACK_BYTES / 2;
      expect([await tick(), await tick(), await tick()]).toEqual([2, 2, 2]);
      await relief.close();
      expect(await tick()).toBe(2);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('DuckDB\'s allocator gives memory back (docs/performance.md, "Footprint")', () => {
  it('every instance opens with a 16 MB flush threshold and the background purge thread, whatever else it is given', async () => {
    expect(ALLOCATOR_SETTINGS).toEqual({ allocator_flush_threshold: '16MB', allocator_background_threads: 'true' });
    for (const settings of [{}, { threads: 1, memoryLimit: '80MB' }, { memoryLimit: '214MB' }]) {
      const { instance, connection, relief } = await openDatabase(settings);
      try {
        const [row] = (await connection.runAndReadAll("SELECT current_setting('allocator_flush_threshold') AS flush, current_setting('allocator_background_threads') AS background")).getRowObjects();
        // DuckDB reads 16MB as 16 * 10^6 bytes and says it in MiB.
        expect(row).toEqual({ flush: '15.2 MiB', background: true });
      } finally {
        await relief?.close();
        connection.closeSync();
        instance.closeSync();
      }
    }
  });
});
