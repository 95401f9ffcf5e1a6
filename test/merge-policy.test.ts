import { describe, expect, it } from 'vitest';
import { daySettled, filesToMerge, MERGE_BELOW_BYTES, MERGE_FLOOR_BYTES, SETTLE_AFTER_DAY_END_MS, SETTLE_QUIET_MS, settledFilesToMerge } from '../src/managed/merge-policy';

const MIB = 1024 * 1024;
const files = (...mib: number[]) => mib.map((m, i) => ({ path: `date=2026-11-21/part-${i}.parquet`, bytes: Math.round(m * MIB) }));
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
    expect(paths(settledFilesToMerge(files(23, 0.01)))).toEqual(['date=2026-11-21/part-0.parquet', 'date=2026-11-21/part-1.parquet']);
    expect(paths(settledFilesToMerge(files(MERGE_BELOW_BYTES / MIB, 0.5, 40)))).toEqual(['date=2026-11-21/part-1.parquet', 'date=2026-11-21/part-2.parquet']);
    expect(settledFilesToMerge(files(MERGE_BELOW_BYTES / MIB, 0.5))).toEqual([]);
    expect(settledFilesToMerge(files(3))).toEqual([]);
  });
});
