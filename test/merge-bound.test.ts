import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { readDatasetStateStable } from '../src/dataset/dataset-log';
import { openDatabase } from '../src/duckdb/open-database';
import { sqlStringList } from '../src/duckdb/sql-literal';
import { Prng } from '../src/fixtures/prng';
import { mergeSmallFiles } from '../src/managed/dataset-maintenance';
import { edgeLogs } from '../src/sources/built-ins';
import { CENSUS_NOW } from './support/census';
import { fakeLog, gatewayCompactor } from './support/fake-log';
import { tempDir } from './support/log-files';
import { BUILDERS } from './support/supabase/vector-events';

// docs/ingest.md, "Layout, compaction and retention": a merge of a day's files sorts no more events
// at once than fit its DuckDB's memory limit (a merge of more sorts them in slices, and writes the
// same file), so a day's files merge into one whatever its events; a merge that still runs out of
// memory at the retry's ceiling is followed by one of half its events.

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

describe("managed storage bounds what a merge of a day's files sorts at once by its DuckDB's memory limit", () => {
  const tmp = tempDir('le-merge-bound-');
  afterAll(() => tmp.cleanup());

  /** `count` closed segments of gateway events of one day (ids `<name>-<i>`, `stepMs` apart), compacted one a run into a file each. */
  function burst(name: string, count: number, perSegment = 1500, stepMs = 1) {
    const walDir = tmp.path(name, 'wal');
    const datasetDir = tmp.path(name, 'parquet');
    const wal = fakeLog(walDir);
    const prng = new Prng(11);
    const ids: string[] = [];
    for (let s = 0; s < count; s++) {
      // The gateway's events as Vector sends them, `stepMs` apart on one day.
      const events = Array.from({ length: perSegment }, (_, k) => ({
        ...BUILDERS.edge_logs(prng, { micros: Date.parse('2026-11-21T10:00:00Z') * 1000 + (s * perSegment + k) * 1000 * stepMs, nanos: 0 }),
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

  /** A burst's segments compacted by a compactor that merges nothing (no two files fit one event): a file of the day each. */
  async function unmergedBurst(...args: Parameters<typeof burst>): Promise<ReturnType<typeof burst>> {
    const made = burst(...args);
    const compacting = gatewayCompactor({ ...made.options, now: () => new Date(CENSUS_NOW), maxMergeRows: 1 });
    compacting.trigger();
    await compacting.settled();
    await compacting.stop();
    expect(made.errors).toEqual([]);
    expect(files(made.datasetDir)).toHaveLength(args[1]);
    return made;
  }

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

  it('under a small memory limit, a day of more events than one sort fits ends in one file, by merges that each fit that limit, with the same rows', async () => {
    // 40MB: a merge sorts 5,000 events at once (mergeRowsFor); sixteen files of 1,500, spread over
    // seven hours, are more: the merge sorts them in slices.
    const limit = '40MB';
    for (const [name, now] of [
      ['today', CENSUS_NOW],
      // Two days later the day is settled: merged whole.
      ['settled', '2026-11-23T12:00:00Z'],
    ] as const) {
      merges.attempts.length = 0;
      merges.failAbove = Infinity;
      const { datasetDir, errors, options, ids } = burst(name, 16, 1500, 1000);
      const compactor = gatewayCompactor({ ...options, now: () => new Date(now), duckdb: { threads: 1, memoryLimit: limit } });
      try {
        compactor.trigger();
        await compactor.settled();
        expect(errors).toEqual([]);
        expect(compactor.counters.compactedSegments).toBe(16);
        // Every merge fit the configured limit (none retried at twice it), one of them of more events than one sort takes.
        for (const attempt of merges.attempts) expect(attempt).toEqual({ rows: attempt.rows, limit, failed: false });
        expect(Math.max(...merges.attempts.map((a) => a.rows))).toBeGreaterThan(20_000);
        expect(files(datasetDir).map((f) => f.rows)).toEqual([24_000]);
        expect(await storedIds(datasetDir)).toEqual(ids);
      } finally {
        await compactor.stop();
      }
    }
  });

  it('a merge sorted in slices writes the file a merge sorted at once writes: the same rows in the same order, the same head and stored rollups', async () => {
    merges.failAbove = Infinity;
    // Two projects' events over seven hours, in eight files that nothing merged yet.
    const { datasetDir } = await unmergedBurst('slices', 8, 1500, 2000);
    const merged: Record<string, unknown[][]> = {};
    for (const [copy, sliceRows] of [
      ['at-once', Infinity],
      ['sliced', 1000],
    ] as const) {
      const root = tmp.path('slices', copy);
      await cp(datasetDir, root, { recursive: true });
      await mergeSmallFiles(root, edgeLogs, { threads: 1 }, () => true, true, { sliceRows });
      const [file, ...others] = files(root);
      expect(others).toEqual([]);
      expect(file!.rows).toBe(12_000);
      const { instance, connection } = await openDatabase();
      try {
        const read = async (path: string, order: string) => (await connection.runAndReadAll(`SELECT * FROM read_parquet(${sqlStringList([join(root, path)])}) ORDER BY ${order}`)).getRows();
        merged[copy] = [
          // The data file's rows in the file's own order.
          ...(await read(file!.path, 'file_row_number')),
          ...(await read(file!.head!.path, 'file_row_number')),
          ...(await Promise.all(Object.values(file!.rollups!).map((r) => read(r.path, 'ALL')))).flat(),
        ];
        expect(Object.keys(file!.rollups!).sort()).toEqual(Object.keys(edgeLogs.rollups).sort());
      } finally {
        connection.closeSync();
        instance.closeSync();
      }
    }
    expect(merged.sliced!.length).toBeGreaterThan(12_000);
    expect(merged.sliced).toEqual(merged['at-once']);
  });

  it('after a merge that runs out of memory at the retry ceiling, the next takes half its events, at once; after merges that fit, it takes more again', async () => {
    // Compacted first by a compactor that merges nothing: eight files of 1,500 events.
    const { datasetDir, errors, options, ids } = await unmergedBurst('halving', 8);
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
