import { afterAll, describe, expect, it, vi } from 'vitest';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { SharedDuckDB } from '../src/duckdb/shared-duckdb';
import { openDatabase } from '../src/duckdb/open-database';
import { withMemoryRetry } from '../src/duckdb/memory-retry';
import { createEndpoints } from '../src/index';
import { tempDir } from './support/log-files';
import { waitUntil } from './support/hang-guard';
import { census, CENSUS_NOW, censusEvents } from './support/census';

// docs/operations.md, "Memory": managed storage's compaction borrows connections of the queries'
// DuckDB instead of opening one of its own per run, the run's share of memory added to that
// instance's limit while it runs.

async function setting(connection: DuckDBConnection, name: string): Promise<string> {
  return String((await connection.runAndReadAll(`SELECT current_setting('${name}')`)).getRows()[0]![0]);
}

describe('a DuckDB that lends connections', () => {
  it("adds a loan's memory limit to the instance's while it is open, and applies none of its other settings", async () => {
    // Opened as the engine opens the queries' (the macros in its catalog).
    const { instance, connection: queries, close } = await openDatabase({ memoryLimit: '214MB', threads: 1 });
    await queries.run("SET TimeZone = 'America/New_York'");
    const tempBefore = await setting(queries, 'temp_directory');
    const shared = new SharedDuckDB(instance, '214MB');
    try {
      const run = await openDatabase({ memoryLimit: '80MB', threads: 4, tempDirectory: '/nowhere', shared });
      expect(run.instance).toBe(instance);
      expect(shared.limitBytes).toBe(294e6);
      expect(await setting(queries, 'memory_limit')).toBe('280.3 MiB');
      // Its session is UTC; the queries' sessions keep theirs, and the instance its threads and spill folder.
      expect(await setting(run.connection, 'TimeZone')).toBe('UTC');
      expect(await setting(queries, 'TimeZone')).toBe('America/New_York');
      expect(await setting(queries, 'threads')).toBe('1');
      expect(await setting(queries, 'temp_directory')).toBe(tempBefore);
      // The macros are the instance's: the source relations work on the loan.
      expect(await setting(run.connection, 'memory_limit')).toBe('280.3 MiB');
      expect(String((await run.connection.runAndReadAll("SELECT le_iso_cast('2026-01-01T00:00:00+02:00')")).getRows()[0]![0])).toBe('2025-12-31 22:00:00');
      await run.close();
      await run.close();
      expect(shared.limitBytes).toBe(214e6);
      expect(await setting(queries, 'memory_limit')).toBe('204.0 MiB');
    } finally {
      await close();
    }
  });

  it("gives a run retried out of memory twice its share on top of the instance's, then the instance's own limit back", async () => {
    const instance = await DuckDBInstance.create(':memory:', { memory_limit: '214MB', threads: '1' });
    const shared = new SharedDuckDB(instance, '214MB');
    const seen: number[] = [];
    try {
      const result = await withMemoryRetry({ memoryLimit: '80MB', shared }, async (settings) => {
        const db = await openDatabase(settings);
        try {
          seen.push(shared.limitBytes!);
          if (seen.length === 1) throw new Error('Out of Memory Error: could not allocate block');
          return 'done';
        } finally {
          await db.close();
        }
      });
      expect(result).toBe('done');
      expect(seen).toEqual([294e6, 374e6]);
      expect(shared.limitBytes).toBe(214e6);
    } finally {
      instance.closeSync();
    }
  });

  it('keeps the raised limit when lowering it fails (the instance holds more), and sets it again at the next loan', async () => {
    // DuckDB refuses a lower limit it cannot evict down to: a fake instance refuses the first lowering.
    const applied: string[] = [];
    let refuse = false;
    const connection = {
      run: async (sql: string) => {
        if (refuse && /memory_limit/.test(sql)) {
          refuse = false;
          throw new Error('Out of Memory Error: failed to change the memory limit');
        }
        if (/memory_limit/.test(sql)) applied.push(/'(\d+)B'/.exec(sql)![1]!);
      },
      closeSync: () => undefined,
    };
    const shared = new SharedDuckDB({ connect: async () => connection } as unknown as DuckDBInstance, '214MB');
    const first = await openDatabase({ memoryLimit: '80MB', shared });
    refuse = true;
    await first.close();
    expect(applied).toEqual(['294000000']);
    const second = await openDatabase({ memoryLimit: '80MB', shared });
    await second.close();
    expect(applied).toEqual(['294000000', '294000000', '214000000']);
    expect(shared.limitBytes).toBe(214e6);
  });

  it("leaves an instance with DuckDB's default limit as it is", async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const shared = new SharedDuckDB(instance);
    try {
      const before = await setting((await openDatabase({ shared })).connection, 'memory_limit');
      const run = await openDatabase({ memoryLimit: '80MB', shared });
      expect(shared.limitBytes).toBeNull();
      expect(await setting(run.connection, 'memory_limit')).toBe(before);
      await run.close();
    } finally {
      instance.closeSync();
    }
  });
});

describe("managed storage's compaction on the queries' DuckDB", () => {
  const tmp = tempDir('le-shared-duckdb-');
  afterAll(() => tmp.cleanup());

  /** Ingests twelve batches into small segments, waits for five compacted, and counts the DuckDB instances opened meanwhile. */
  async function compactedCounting(dataDir: string, compactionDuckdb?: { threads: number; memoryLimit: string }): Promise<{ opened: number; acked: string[] }> {
    const ep = await createEndpoints({ storage: { dataDir, maxSegmentBytes: 8 * 1024, compactionDuckdb }, now: () => new Date(CENSUS_NOW), cache: false });
    const create = vi.spyOn(DuckDBInstance, 'create');
    const acked: string[] = [];
    try {
      for (let batch = 0; batch < 12; batch++) {
        const events = censusEvents(`s${batch}`, 20);
        await ep.ingest('cloudflare.logs.prod', events);
        acked.push(...events.map((e) => e.id as string));
      }
      await waitUntil(() => ep.stats().storage!.compactedSegments >= 5);
      return { opened: create.mock.calls.length, acked };
    } finally {
      create.mockRestore();
      await ep.close();
    }
  }

  it('opens no DuckDB of its own for its runs and merges, and every event is read once after', async () => {
    const { opened, acked } = await compactedCounting(tmp.path('shared'));
    expect(opened).toBe(0);
    const again = await createEndpoints({ storage: { dataDir: tmp.path('shared') }, now: () => new Date(CENSUS_NOW), cache: false });
    try {
      expect(await census(again)).toEqual({ total: acked.length, ids: [...acked].sort() });
    } finally {
      await again.close();
    }
  });

  it('opens one of its own for its runs when storage.compactionDuckdb gives it settings', async () => {
    const { opened } = await compactedCounting(tmp.path('own'), { threads: 1, memoryLimit: '80MB' });
    expect(opened).toBeGreaterThan(0);
  });
});
