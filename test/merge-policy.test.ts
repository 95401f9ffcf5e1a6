import { describe, expect, it } from 'vitest';
import { mergeRowsFor } from '../src/managed/background-compactor';
import { daySettled, filesToMerge, MERGE_BELOW_BYTES, MERGE_FLOOR_BYTES, SETTLE_AFTER_DAY_END_MS, SETTLE_QUIET_MS, settledFilesToMerge } from '../src/managed/merge-policy';

const MIB = 1024 * 1024;
/** Files of these sizes in MiB, of 40 bytes an event (so 1 MiB holds 26,214 events). */
const files = (...mib: number[]) => mib.map((m, i) => ({ path: `date=2026-11-21/part-${i}.parquet`, bytes: Math.round(m * MIB), rows: Math.round((m * MIB) / 40) }));
const paths = (list: Array<{ path: string }>) => list.map((f) => f.path);

describe("managed storage merges a day's files by size", () => {
  it('merges files of about one size, smallest first, and leaves a much larger one alone', () => {
    expect(paths(filesToMerge(files(10, 12)))).toEqual(['date=2026-11-21/part-0.parquet', 'date=2026-11-21/part-1.parquet']);
    // 10 + 12 = 22: a file of 40 joins them (at most twice their total), one of 50 does not.
    expect(paths(filesToMerge(files(40, 10, 12)))).toEqual(['date=2026-11-21/part-1.parquet', 'date=2026-11-21/part-2.parquet', 'date=2026-11-21/part-0.parquet']);
    expect(paths(filesToMerge(files(50, 10, 12)))).toEqual(['date=2026-11-21/part-1.parquet', 'date=2026-11-21/part-2.parquet']);
    expect(filesToMerge(files(10, 30))).toEqual([]);
    expect(filesToMerge(files(10))).toEqual([]);
  });

  it('merges a few late events into a file of a few MB, never into a large one', () => {
    expect(filesToMerge(files(0.005, (2 * MERGE_FLOOR_BYTES) / MIB))).toHaveLength(2);
    expect(filesToMerge(files(0.005, (2 * MERGE_FLOOR_BYTES) / MIB + 0.1))).toEqual([]);
    // Two late-event files merge with each other.
    expect(filesToMerge(files(0.005, 0.004, 40))).toHaveLength(2);
  });

  it('leaves files of 64 MiB and more out, and at most five smaller ones', () => {
    expect(filesToMerge(files(MERGE_BELOW_BYTES / MIB, MERGE_BELOW_BYTES / MIB))).toEqual([]);
    // Each more than twice the one before it (the second above 4 MiB): nothing merges.
    expect(filesToMerge(files(0.5, 4.1, 8.3, 16.7, 33.5, MERGE_BELOW_BYTES / MIB))).toEqual([]);
    // A sixth small file merges with some of them, whatever its size.
    for (const sixth of [0.001, 3, 6, 12, 20, 40, 63]) expect(filesToMerge(files(0.5, 4.1, 8.3, 16.7, 33.5, sixth)).length).toBeGreaterThanOrEqual(2);
    // Two files of one size merge however small the smallest file of the day.
    expect(paths(filesToMerge(files(0.5, 4.1, 4.2)))).toEqual(['date=2026-11-21/part-1.parquet', 'date=2026-11-21/part-2.parquet']);
  });

  it('chooses the same files whatever their order', () => {
    const list = files(3, 3, 3, 30);
    expect(paths(filesToMerge([...list].reverse()))).toEqual(paths(filesToMerge(list)));
  });
});

describe("managed storage merges a settled day's files into one", () => {
  const dayEnd = Date.parse('2026-11-21T00:00:00Z');

  it('takes a day as settled once it ended an hour ago and no compaction wrote a file of it for a minute', () => {
    expect(daySettled('2026-11-20', dayEnd + SETTLE_AFTER_DAY_END_MS, Infinity)).toBe(true);
    expect(daySettled('2026-11-20', dayEnd + SETTLE_AFTER_DAY_END_MS - 1, Infinity)).toBe(false);
    // Late events written lately: not yet, however long ago the day ended.
    expect(daySettled('2026-11-20', dayEnd + 30 * 86_400_000, SETTLE_QUIET_MS - 1)).toBe(false);
    expect(daySettled('2026-11-20', dayEnd + 30 * 86_400_000, SETTLE_QUIET_MS)).toBe(true);
  });

  it('merges every file below 64 MiB, whatever their sizes, and leaves larger ones and a lone file alone', () => {
    // A file of a few late events beside one of 23 MiB: the size tiers keep both, a settled day merges them.
    expect(filesToMerge(files(0.01, 23))).toEqual([]);
    expect(paths(settledFilesToMerge(files(23, 0.01)))).toEqual(['date=2026-11-21/part-1.parquet', 'date=2026-11-21/part-0.parquet']);
    expect(paths(settledFilesToMerge(files(MERGE_BELOW_BYTES / MIB, 0.5, 40)))).toEqual(['date=2026-11-21/part-1.parquet', 'date=2026-11-21/part-2.parquet']);
    expect(settledFilesToMerge(files(MERGE_BELOW_BYTES / MIB, 0.5))).toEqual([]);
    expect(settledFilesToMerge(files(3))).toEqual([]);
  });
});

describe("a merge takes no more of a day's files than fit its DuckDB's memory limit", () => {
  type File = { path: string; bytes: number; rows: number };
  /** Merges as `mergeSmallFiles` does, on sizes alone (a merged file is its files' total), until `choose` takes none; each merge's events. */
  const mergeAll = (start: File[], choose: (files: File[]) => File[]) => {
    let day = [...start];
    const merges: number[] = [];
    for (let files = choose(day); files.length; files = choose(day)) {
      // Never a file with itself, and a file less at least each time: it ends.
      expect(new Set(files.map((f) => f.path)).size).toBe(files.length);
      expect(files.length).toBeGreaterThanOrEqual(2);
      const rows = files.reduce((n, f) => n + f.rows, 0);
      merges.push(rows);
      day = [...day.filter((f) => !files.includes(f)), { path: `date=2026-11-21/merged-${merges.length}.parquet`, bytes: files.reduce((n, f) => n + f.bytes, 0), rows }];
      expect(merges.length).toBeLessThan(start.length);
    }
    return { day, merges };
  };

  it('is an event per 4,000 bytes of the limit past 20 MB, one per 20,000 bytes at least (15,000 of the default 80MB), none when no limit is set', () => {
    expect(mergeRowsFor({ memoryLimit: '80MB' })).toBe(15_000);
    expect(mergeRowsFor({ memoryLimit: '160MB' })).toBe(35_000);
    expect(mergeRowsFor({ memoryLimit: '40MB' })).toBe(5000);
    expect(mergeRowsFor({ memoryLimit: '16MB' })).toBe(800);
    expect(mergeRowsFor(undefined)).toBe(Infinity);
    expect(mergeRowsFor({})).toBe(Infinity);
  });

  it('merges a day of 89 equal files (a burst) in merges that each fit, three by three, and stops when no two fit one', () => {
    // A bound on a merge's events (`maxRows`, after one ran out of memory at the retry's ceiling).
    const bound = 60_000;
    // 89 files of 18,000 events: unbounded, the size tiers take all of them in one merge.
    const burst = Array.from({ length: 89 }, (_, i) => ({ path: `date=2026-11-21/part-${String(i).padStart(2, '0')}.parquet`, bytes: 725_000, rows: 18_000 }));
    expect(filesToMerge(burst)).toHaveLength(89);
    const { day, merges } = mergeAll(burst, (f) => filesToMerge(f, bound));
    expect(merges.length).toBeGreaterThan(0);
    for (const rows of merges) expect(rows).toBeLessThanOrEqual(bound);
    // Each three make a file of 54,000 events, which no other file joins: 29 of them and the last two's.
    expect(day).toHaveLength(30);
    expect(day.map((f) => f.rows)).toEqual([...Array.from({ length: 29 }, () => 54_000), 36_000]);
    expect(filesToMerge(day, bound)).toEqual([]);
    // A larger limit: the same rule, fewer files, each merge within its bound.
    const larger = 380_000;
    const merged = mergeAll(burst, (f) => filesToMerge(f, larger));
    for (const rows of merged.merges) expect(rows).toBeLessThanOrEqual(larger);
    expect(merged.day.length).toBeLessThan(day.length);
  });

  it('keeps the size tiers where the bound allows them, and chooses the same files whatever their order', () => {
    const list = files(3, 3, 3, 30);
    const rowsOf = (mib: number) => Math.round((mib * MIB) / 40);
    expect(paths(filesToMerge(list, rowsOf(9)))).toEqual(paths(filesToMerge(list)));
    expect(paths(filesToMerge(list, rowsOf(6)))).toEqual(['date=2026-11-21/part-0.parquet', 'date=2026-11-21/part-1.parquet']);
    expect(paths(filesToMerge([...list].reverse(), rowsOf(6)))).toEqual(paths(filesToMerge(list, rowsOf(6))));
    // Two files that do not fit one merge are left alone, however small.
    const pair = files(1, 1);
    expect(filesToMerge(pair, pair[0]!.rows + pair[1]!.rows - 1)).toEqual([]);
    expect(filesToMerge(pair, pair[0]!.rows + pair[1]!.rows)).toHaveLength(2);
    // Late-event files still merge into a file of a few MB while they fit.
    expect(filesToMerge(files(0.005, 2), rowsOf(2.1))).toHaveLength(2);
    // Files of few events but many bytes each (wide events) merge by their events.
    expect(
      filesToMerge(
        [
          { path: 'a', bytes: 3 * MIB, rows: 10 },
          { path: 'b', bytes: 3 * MIB, rows: 10 },
        ],
        20,
      ),
    ).toHaveLength(2);
  });

  it('merges a settled day in parts, smallest first, when its files do not all fit one merge; it ends', () => {
    const day = files(0.5, 0.5, 0.5, 0.5, 1.5, 30);
    const bound = Math.round((2 * MIB) / 40);
    expect(paths(settledFilesToMerge(day, bound))).toEqual(['date=2026-11-21/part-0.parquet', 'date=2026-11-21/part-1.parquet', 'date=2026-11-21/part-2.parquet', 'date=2026-11-21/part-3.parquet']);
    const merged = mergeAll(day, (f) => settledFilesToMerge(f, bound));
    for (const rows of merged.merges) expect(rows).toBeLessThanOrEqual(bound);
    // 2 MiB of the four small files, then nothing fits with it: 2, 1.5 and 30 are left.
    expect(merged.day.map((f) => f.bytes / MIB).sort((a, b) => a - b)).toEqual([1.5, 2, 30]);
    // Unbounded, every small file in one merge, as before.
    expect(settledFilesToMerge(day)).toHaveLength(6);
    expect(paths(settledFilesToMerge([...day].reverse(), bound))).toEqual(paths(settledFilesToMerge(day, bound)));
  });
});
