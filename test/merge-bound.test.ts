import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { readDatasetStateStable } from '../src/dataset/dataset-log';
import { openDatabase } from '../src/duckdb/open-database';
import { sqlStringList } from '../src/duckdb/sql-literal';
import { Prng } from '../src/fixtures/prng';
import { filesToMerge, settledFilesToMerge } from '../src/managed/merge-policy';
import { CENSUS_NOW } from './support/census';
import { fakeLog, gatewayCompactor } from './support/fake-log';
import { tempDir } from './support/log-files';
import { BUILDERS } from './support/supabase/vector-events';

// docs/ingest.md, "Layout, compaction and retention": no merge of a day's files takes more than
// fits its DuckDB's memory limit (a day whose files do not fit one merge is merged in parts), and
// a merge that still runs out of memory at the retry's ceiling is followed by one of half its events.

/** Every merge `mergeSmallFiles` starts (its files' events, its DuckDB's memory limit), and merges of more than `failAbove` events run out of memory. */
const merges = vi.hoisted(() => ({ attempts: [] as Array<{ rows: number; limit: string | undefined; failed: boolean }>, failAbove: Infinity }));
vi.mock('../src/managed/dataset-maintenance', async (importOriginal) => {
  const real = await importOriginal<typeof import('../src/managed/dataset-maintenance')>();
  return {
    ...real,
    mergeSmallFiles: (...[root, source, duckdb, settled, typedColumns, bound = {}]: Parameters<typeof real.mergeSmallFiles>) =>
      real.mergeSmallFiles(root, source, duckdb, settled, typedColumns, {
        ...bound,
        merging: (rows: number) => {
          bound.merging?.(rows);
          const failed = rows > merges.failAbove;
          merges.attempts.push({ rows, limit: duckdb?.memoryLimit, failed });
          // What DuckDB says when a statement does not fit its memory limit (memory-retry.ts reads it).
          if (failed) throw new Error('Out of Memory Error: failed to allocate data of size 16.0 MiB (68.6 MiB/76.2 MiB used)');
        },
      }),
  };
});

describe("managed storage bounds each merge of a day's files by its DuckDB's memory limit", () => {
  const tmp = tempDir('le-merge-bound-');
  afterAll(() => tmp.cleanup());

  /** `count` closed segments of gateway events of one day (ids `<name>-<i>`), compacted one a run into a file each. */
  function burst(name: string, count: number, perSegment = 1500) {
    const walDir = tmp.path(name, 'wal');
    const datasetDir = tmp.path(name, 'parquet');
    const wal = fakeLog(walDir);
    const prng = new Prng(11);
    const ids: string[] = [];
    for (let s = 0; s < count; s++) {
      // The gateway's events as Vector sends them, a millisecond apart on one day.
      const events = Array.from({ length: perSegment }, (_, k) => ({
        ...BUILDERS.edge_logs(prng, { micros: Date.parse('2026-11-21T10:00:00Z') * 1000 + (s * perSegment + k) * 1000, nanos: 0 }),
        id: `${name}-${s * perSegment + k}`,
      }));
      ids.push(...events.map((e) => e.id));
      wal.add(`${String(s).padStart(20, '0')}.ndjson`, events);
    }
    const errors: unknown[] = [];
    // One segment a run: a file of the day each, as a burst's runs leave them.
    const options = { datasetDir, walDir, wal, onError: (e: unknown) => errors.push(e), maxRunBytes: 1 };
    return { datasetDir, wal, errors, options, ids: ids.sort() };
  }

  const files = (datasetDir: string) => [...readDatasetStateStable(datasetDir).files.values()];

  /** The ids of every row the dataset's files hold, sorted (each once: nothing lost, nothing doubled). */
  async function storedIds(datasetDir: string): Promise<string[]> {
    const { instance, connection } = await openDatabase();
    try {
      const paths = files(datasetDir).map((f) => join(datasetDir, f.path));
      const rows = (await connection.runAndReadAll(`SELECT id FROM read_parquet(${sqlStringList(paths)}) ORDER BY id`)).getRowObjects();
      return rows.map((r) => String(r.id)).sort();
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  }

  it('under a small memory limit, a day of many files ends merged into files within the bound, by merges that each fit it at that limit, with the same rows', async () => {
    // 40MB: each merge takes 20,000 events at most (mergeRowsFor); sixteen files of 1,500 are more.
    const bound = 20_000;
    const limit = '40MB';
    for (const [name, now] of [
      ['today', CENSUS_NOW],
      // Two days later the day is settled: merged whole where the bound allows, in parts where it does not.
      ['settled', '2026-11-23T12:00:00Z'],
    ] as const) {
      merges.attempts.length = 0;
      merges.failAbove = Infinity;
      const { datasetDir, errors, options, ids } = burst(name, 16);
      const compactor = gatewayCompactor({ ...options, now: () => new Date(now), duckdb: { threads: 1, memoryLimit: limit } });
      try {
        compactor.trigger();
        await compactor.settled();
        expect(errors).toEqual([]);
        expect(compactor.counters.compactedSegments).toBe(16);
        // Merged in several merges, each within the bound and fitting the configured limit (none retried at twice it).
        expect(merges.attempts.length).toBeGreaterThan(1);
        for (const attempt of merges.attempts) expect(attempt).toEqual({ rows: attempt.rows, limit, failed: false });
        for (const attempt of merges.attempts) expect(attempt.rows).toBeLessThanOrEqual(bound);
        const day = files(datasetDir);
        expect(day.length).toBeGreaterThan(1);
        expect(day.length).toBeLessThan(16);
        expect(name === 'today' ? filesToMerge(day, bound) : settledFilesToMerge(day, bound)).toEqual([]);
        expect(await storedIds(datasetDir)).toEqual(ids);
      } finally {
        await compactor.stop();
      }
    }
  });

  it('after a merge that runs out of memory at the retry ceiling, the next takes half its events, at once; after merges that fit, it takes more again', async () => {
    const { datasetDir, errors, options, ids } = burst('halving', 8);
    // Compacted first by a compactor that merges nothing (no two files fit one event): eight files of 1,500 events.
    const compacting = gatewayCompactor({ ...options, now: () => new Date(CENSUS_NOW), maxMergeRows: 1 });
    compacting.trigger();
    await compacting.settled();
    await compacting.stop();
    expect(errors).toEqual([]);
    expect(files(datasetDir)).toHaveLength(8);
    // Unbounded, the size tiers take all eight in one merge; merges of more than two files run out of memory at any limit.
    merges.attempts.length = 0;
    merges.failAbove = 3000;
    const compactor = gatewayCompactor({ ...options, now: () => new Date(CENSUS_NOW), duckdb: { threads: 1, memoryLimit: '80MB' }, maxMergeRows: 1e9 });
    try {
      compactor.trigger();
      await compactor.settled();
      const failed = (rows: number, limit: string) => ({ rows, limit, failed: true });
      // All eight, at 80MB then at 160MB (memory-retry.ts); then, at once, half their events (four
      // files), at both limits too; then half of those: two files, which fit, and so do the next pairs.
      expect(merges.attempts).toEqual([
        failed(12_000, '80MB'),
        failed(12_000, '160MB'),
        failed(6000, '80MB'),
        failed(6000, '160MB'),
        ...Array.from({ length: 4 }, () => ({ rows: 3000, limit: '80MB', failed: false })),
      ]);
      // Each failure was told once.
      expect(errors).toHaveLength(2);
      for (const error of errors) expect(String(error)).toMatch(/Out of Memory/);
      expect(files(datasetDir).map((f) => f.rows)).toEqual([3000, 3000, 3000, 3000]);
      expect(await storedIds(datasetDir)).toEqual(ids);
      // Merges fit again: the pass that merged files brought the bound back up (twice as much), so
      // the next pass merges two files of 3,000 events; the one after it, at 12,000, the rest.
      merges.failAbove = Infinity;
      merges.attempts.length = 0;
      compactor.trigger();
      await compactor.settled();
      expect(merges.attempts.map((a) => a.rows)).toEqual([6000, 6000]);
      compactor.trigger();
      await compactor.settled();
      expect(merges.attempts.map((a) => a.rows)).toEqual([6000, 6000, 12_000]);
      expect(files(datasetDir).map((f) => f.rows)).toEqual([12_000]);
      expect(errors).toHaveLength(2);
      expect(await storedIds(datasetDir)).toEqual(ids);
    } finally {
      await compactor.stop();
    }
  });
});
