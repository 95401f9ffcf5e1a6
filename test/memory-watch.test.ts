import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { MemoryWatch } from '../src/engine/duckdb/memory-watch';
import { ConnectionPool } from '../src/engine/duckdb/connection-pool';
import { ceilingFor, type MemoryRelief } from '../src/duckdb/open-database';
import { EngineError } from '../src/errors';

describe('memory watch (docs/sandboxing.md, "Limits")', () => {
  it('interrupts a watched query once the process is past its ceiling, and tells it was stopped', async () => {
    const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
    const connection = await instance.connect();
    let resident = 100;
    const watch = new MemoryWatch(1000, () => resident);
    try {
      // A query that never ends by itself: only an interrupt stops it.
      const unwatch = watch.watch(connection);
      const running = connection.run('WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t) SELECT count(*) FROM t').then(
        () => 'finished',
        (error: Error) => error.message,
      );
      resident = 1001;
      expect(await running).toMatch(/interrupt/i);
      expect(unwatch()).toBe(true);
      expect(watch.stopped).toBe(1);
      // Below the ceiling, a watched query runs to its end and is not counted as stopped.
      resident = 100;
      const next = watch.watch(connection);
      await connection.run('SELECT 1');
      expect(next()).toBe(false);
      expect(watch.stopped).toBe(1);
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });

  it("answers a query it stopped only once the trim it started has given memory back, so the next caller's query starts below the ceiling", async () => {
    const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
    let resident = 100;
    const watch = new MemoryWatch(1000, () => resident);
    // A trim that takes a while, and brings the process back under its ceiling when done.
    let trimming: Promise<void> | null = null;
    const relief = {
      afterQuery: () => {
        if (resident > 1000) trimming ??= new Promise<void>((done) => setTimeout(() => ((resident = 100), done()), 50));
      },
      settled: async () => trimming ?? undefined,
    } as unknown as MemoryRelief;
    const pool = new ConnectionPool(instance, 60_000, () => false, relief, watch);
    try {
      const bomb = pool.withConnection((connection) => connection.run('WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t) SELECT count(*) FROM t'), true);
      resident = 1001;
      const error = (await bomb.catch((e: unknown) => e)) as EngineError;
      expect(error).toBeInstanceOf(EngineError);
      expect(error.code).toBe('memory_limit');
      // Answered after the trim: the process is back under its ceiling, and the next query runs.
      expect(resident).toBe(100);
      expect(Number((await pool.withConnection((connection) => connection.runAndReadAll('SELECT 42 AS n'), true)).getRowObjects()[0]!.n)).toBe(42);
    } finally {
      pool.closeIdle();
      instance.closeSync();
    }
  });

  it('sets the ceiling at the memory limit and half again, plus 256 MiB for the process around it', () => {
    expect(ceilingFor(1e9)).toBe(1.5e9 + 256 * 2 ** 20);
  });
});
