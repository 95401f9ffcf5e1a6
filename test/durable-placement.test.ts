import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { tempDir } from './support/log-files';
import { crc32 } from '../src/util/crc32';

// What a run's files cost in fsyncs when they are placed into a dataset (durable-placement.ts):
// each file once, each folder it changed once, the parents of folders made for them once.
const synced = vi.hoisted(() => ({ files: [] as string[], dirs: [] as string[] }));
vi.mock('../src/util/durable-fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('../src/util/durable-fs')>();
  return {
    ...real,
    fsyncFile: async (path: string) => {
      synced.files.push(path);
      await real.fsyncFile(path);
    },
    fsyncDir: async (path: string) => {
      synced.dirs.push(path);
      await real.fsyncDir(path);
    },
  };
});
const { DurablePlacement } = await import('../src/dataset/durable-placement');

describe('placing files into a dataset', () => {
  const tmp = tempDir('le-placement-');
  afterAll(() => tmp.cleanup());
  beforeEach(() => {
    synced.files.length = 0;
    synced.dirs.length = 0;
  });

  it('moves each file with its size and CRC-32, fsyncing each file once before its rename and each changed folder once at the flush', async () => {
    const root = tmp.path('one');
    mkdirSync(join(root, 'date=2026-11-21'), { recursive: true });
    mkdirSync(join(root, 'staging'));
    const names = ['a.parquet', 'b.parquet', 'c.parquet'];
    for (const [i, name] of names.entries()) writeFileSync(join(root, 'staging', name), 'x'.repeat(10 + i));
    const placement = new DurablePlacement();
    // Two files into a folder that exists, one into a folder made for it (two levels deep).
    const moves = [
      { from: join(root, 'staging', 'a.parquet'), to: join(root, 'date=2026-11-21', 'a.parquet') },
      { from: join(root, 'staging', 'b.parquet'), to: join(root, 'date=2026-11-21', 'b.parquet') },
      { from: join(root, 'staging', 'c.parquet'), to: join(root, '_rollups', 'r', 'c.parquet') },
    ];
    const placed = await placement.place(moves);
    expect(placed).toEqual(names.map((_, i) => ({ bytes: 10 + i, crc32: crc32(Buffer.from('x'.repeat(10 + i))) })));
    for (const { from, to } of moves) {
      expect(existsSync(from)).toBe(false);
      expect(readFileSync(to, 'utf8')).toMatch(/^x+$/);
    }
    expect(synced.files.sort()).toEqual(moves.map((m) => m.from).sort());
    expect(synced.dirs).toEqual([]);
    // The folders renamed into, and the parents of the two made (`_rollups` and `_rollups/r`).
    expect(placement.pendingDirs()).toEqual([root, join(root, '_rollups'), join(root, '_rollups', 'r'), join(root, 'date=2026-11-21')].sort());
    await placement.flush();
    expect(synced.dirs.sort()).toEqual([root, join(root, '_rollups'), join(root, '_rollups', 'r'), join(root, 'date=2026-11-21')].sort());
    expect(placement.pendingDirs()).toEqual([]);
  });

  it('fsyncs a folder once however many batches went into it', async () => {
    const root = tmp.path('two');
    mkdirSync(join(root, 'staging'), { recursive: true });
    mkdirSync(join(root, 'date=2026-11-21'));
    const placement = new DurablePlacement();
    for (const name of ['a', 'b', 'c']) {
      writeFileSync(join(root, 'staging', name), name);
      await placement.place([{ from: join(root, 'staging', name), to: join(root, 'date=2026-11-21', name) }]);
    }
    await placement.flush();
    expect(synced.files).toHaveLength(3);
    expect(synced.dirs).toEqual([join(root, 'date=2026-11-21')]);
  });
});
