import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEndpoints, type Endpoints } from '../src/index';
import { compactLogs } from '../src/compaction/compact';
import { appendCommit, checkpointIfDue, readDatasetStateStable, readNewest } from '../src/dataset/dataset-log';
import { forgetDeletedInputs, mergeSmallFiles } from '../src/managed/dataset-maintenance';
import { census, CENSUS_NOW, censusEvents, idRange } from './support/census';
import { HANG_MS } from './support/hang-guard';
import { endpointsAt, tempDir, writeLines } from './support/log-files';
import { edgeLogs } from '../src/sources/built-ins';

const tmp = tempDir('le-commit-log-');
afterAll(() => tmp.cleanup());

const commit = (n: number) => `${String(n).padStart(20, '0')}.json`;
const logOf = (dataset: string) =>
  readdirSync(join(dataset, '_compact'))
    .filter((f) => /^\d{20}\.json$/.test(f))
    .sort();

async function served(dataset: string): Promise<{ total: number; ids: string[]; skipped: Array<{ reason: string; message: string }> }> {
  const { ep } = await endpointsAt({ edgeLogs: dataset }, CENSUS_NOW);
  try {
    const answer = await ep.query('usage.api-counts', { project: '.', interval: 'daily' });
    return { ...(await census(ep)), skipped: answer.skippedFiles.map(({ reason, message }) => ({ reason, message })) };
  } finally {
    await ep.close();
  }
}

/** A dataset of three compaction runs (commits 1, 2, 3) over a.ndjson, b.ndjson, c.ndjson, inputs deleted. */
async function threeRuns(name: string): Promise<string> {
  const out = tmp.path(name, 'out');
  for (const [i, prefix] of ['a', 'b', 'c'].entries()) {
    writeLines(tmp.path(name, `${prefix}.ndjson`), censusEvents(prefix, 40 + 20 * i));
    await compactLogs({ source: 'edgeLogs', inputs: tmp.path(name, `${prefix}.ndjson`), outDir: out, deleteSource: true });
  }
  expect(logOf(out)).toEqual([commit(1), commit(2), commit(3)]);
  return out;
}
const everyone = () => [...idRange('a', 0, 40), ...idRange('b', 0, 60), ...idRange('c', 0, 80)].sort();

describe('the commit log: damage is detected and reported, and never followed by deletion', () => {
  const damages: Record<string, { damage: (out: string) => void; commit: number; message: RegExp }> = {
    'the newest commit deleted': { damage: (out) => rmSync(join(out, '_compact', commit(3))), commit: 3, message: /commit 3 is missing: the log names 3 as its newest/ },
    'the newest commit cut short': { damage: (out) => truncateSync(join(out, '_compact', commit(3)), 200), commit: 3, message: /commit 3 is damaged/ },
    'a middle commit missing': { damage: (out) => rmSync(join(out, '_compact', commit(2))), commit: 2, message: /commit 2 is missing/ },
    'a middle commit garbled (one byte changed)': {
      damage: (out) => {
        const path = join(out, '_compact', commit(2));
        writeFileSync(path, readFileSync(path, 'utf8').replace('"rows":60', '"rows":61'));
      },
      commit: 2,
      message: /commit 2 is damaged: its checksum does not match/,
    },
  };

  for (const [kind, { damage, commit: lost, message }] of Object.entries(damages)) {
    it(`${kind}: reported, its files kept, then put back by the next compaction; its number never reused`, async () => {
      const out = await threeRuns(kind.replace(/\W+/g, '-'));
      damage(out);
      const lostPrefix = lost === 3 ? 'c' : 'b';
      // Queries answer from the rest of the log and say what is wrong with it (never a 500).
      const before = await served(out);
      expect(before.ids).toEqual(everyone().filter((id) => !id.startsWith(`${lostPrefix}-`)));
      expect(before.skipped).toEqual([{ reason: 'damaged_log', message: expect.stringMatching(message) }]);
      // The next run (over a new input) puts the lost commit's files back instead of deleting them.
      writeLines(tmp.path(kind.replace(/\W+/g, '-'), 'd.ndjson'), censusEvents('d', 10));
      const result = await compactLogs({ source: 'edgeLogs', inputs: tmp.path(kind.replace(/\W+/g, '-'), 'd.ndjson'), outDir: out });
      expect(result.orphans!.restored.length).toBeGreaterThan(0);
      expect(result.orphans!.deleted).toEqual([]);
      expect(await served(out)).toEqual({ total: 190, ids: [...everyone(), ...idRange('d', 0, 10)].sort(), skipped: [] });
      const numbers = logOf(out).map((f) => Number(f.slice(0, 20)));
      // Restored as 4, the new run as 5, then 6 computes the restored files' stored rollups again
      // (a rollup found on disk has no known definition): nothing took a lost number again.
      expect(numbers.at(-1)).toBe(6);
      expect(readDatasetStateStable(out).damage).toEqual([]);
    });
  }

  it('keeps reading logs written before checksums existed', async () => {
    const out = await threeRuns('legacy');
    for (const name of logOf(out)) {
      const path = join(out, '_compact', name);
      const sealed = JSON.parse(readFileSync(path, 'utf8')) as { sha256: string; entry: unknown };
      writeFileSync(path, JSON.stringify(sealed.entry));
    }
    rmSync(join(out, '_compact', 'NEWEST'));
    expect(await served(out)).toEqual({ total: 180, ids: everyone(), skipped: [] });
  });

  it('a lost merge commit (its small files deleted after it): the merged file is put back', async () => {
    const out = tmp.path('merge', 'out');
    // Eight runs of one day each: eight small files of that day, merged into one.
    for (let i = 0; i < 8; i++) {
      writeLines(
        tmp.path('merge', `${i}.ndjson`),
        censusEvents(`g${i}`, 5).map((e) => ({ ...e, timestamp: `2026-11-20T1${i}:00:00Z` })),
      );
      await compactLogs({ source: 'edgeLogs', inputs: tmp.path('merge', `${i}.ndjson`), outDir: out, deleteSource: true });
    }
    expect((await mergeSmallFiles(out, edgeLogs)).merged).toBe(8);
    const merge = logOf(out).at(-1)!;
    rmSync(join(out, '_compact', merge));
    const ids = Array.from({ length: 8 }, (_, i) => idRange(`g${i}`, 0, 5))
      .flat()
      .sort();
    // The small files the log names again are gone: named missing, nothing served, nothing deleted.
    const before = await served(out);
    expect(before.total).toBe(0);
    expect(before.skipped.filter((s) => s.reason === 'missing')).toHaveLength(8);
    const result = await compactLogs({ source: 'edgeLogs', inputs: tmp.path('merge', 'none.ndjson'), outDir: out });
    expect(result.orphans).toMatchObject({ restored: [expect.stringMatching(/^date=2026-11-20\/part-/)], deleted: [] });
    expect(await served(out)).toEqual({ total: 40, ids, skipped: [] });
  });

  it('a merge killed after its commit: its small files are deleted, never put back, after their records were forgotten and the log folded', async () => {
    const out = tmp.path('merge-killed', 'out');
    const saved = tmp.path('merge-killed', 'saved');
    for (let i = 0; i < 8; i++) {
      writeLines(
        tmp.path('merge-killed', 'in', `${i}.ndjson`),
        censusEvents(`k${i}`, 5).map((e) => ({ ...e, timestamp: `2026-11-20T1${i}:00:00Z` })),
      );
      await compactLogs({ source: 'edgeLogs', inputs: tmp.path('merge-killed', 'in', `${i}.ndjson`), outDir: out, deleteSource: true });
    }
    const small = [...readDatasetStateStable(out).files.values()];
    for (const f of small) cpSync(join(out, f.path), join(saved, f.path));
    expect((await mergeSmallFiles(out, edgeLogs)).merged).toBe(8);
    // Killed after the merge's commit: the small files are still there (as the server left them).
    for (const f of small) cpSync(join(saved, f.path), join(out, f.path));
    // The log's cleanup: the records of the deleted inputs forgotten, then a checkpoint folds the commits.
    expect(await forgetDeletedInputs(out, 'edgeLogs', tmp.path('merge-killed', 'in') + sep, 1)).toBe(8);
    for (let i = 0; i < 32; i++) expect(await appendCommit(readDatasetStateStable(out), { source: 'edgeLogs', add: [], remove: [], inputs: [] })).toBe(true);
    await checkpointIfDue(readDatasetStateStable(out));
    expect(logOf(out)).toEqual([]);
    const ids = Array.from({ length: 8 }, (_, i) => idRange(`k${i}`, 0, 5))
      .flat()
      .sort();
    expect(await served(out)).toEqual({ total: 40, ids, skipped: [] });
    const result = await compactLogs({ source: 'edgeLogs', inputs: tmp.path('merge-killed', 'none.ndjson'), outDir: out });
    expect(result.orphans).toMatchObject({ restored: [], deleted: expect.arrayContaining(small.map((f) => f.path)) });
    expect(await served(out)).toEqual({ total: 40, ids, skipped: [] });
    // Gone from disk, they leave the next checkpoint's record of removed files.
    for (let i = 0; i < 32; i++) expect(await appendCommit(readDatasetStateStable(out), { source: 'edgeLogs', add: [], remove: [], inputs: [] })).toBe(true);
    await checkpointIfDue(readDatasetStateStable(out));
    expect(readDatasetStateStable(out).removed.size).toBe(0);
  });

  it('a run killed before its commit (log intact) still leaves nothing behind', async () => {
    const out = await threeRuns('killed');
    // What a run killed between its publish and its commit leaves: files whose inputs the log holds already.
    const state = readDatasetStateStable(out);
    const [file] = [...state.files.values()];
    const copy = file!.path.replace(/part-[0-9a-f]{16}/, 'part-0123456789abcdef');
    writeFileSync(join(out, copy), readFileSync(join(out, file!.path)));
    const result = await compactLogs({ source: 'edgeLogs', inputs: tmp.path('killed', 'none.ndjson'), outDir: out });
    expect(result.orphans).toMatchObject({ restored: [], deleted: [copy] });
    expect(existsSync(join(out, copy))).toBe(false);
    expect((await served(out)).total).toBe(180);
  });
});

describe('managed storage with the newest of two commits deleted', () => {
  const open = (dataDir: string) => createEndpoints({ storage: { dataDir }, now: () => new Date(CENSUS_NOW), cache: false });
  /** Closes, reopens: the segment left by the previous process is compacted at start (one commit). */
  const reopen = async (ep: Endpoints, dataDir: string) => {
    await ep.close();
    const again = await open(dataDir);
    await expect.poll(() => again.stats().storage!.compactedSegments, { timeout: HANG_MS }).toBeGreaterThan(0);
    return again;
  };

  it('all 200 acknowledged events are served after the next compaction (the orphan is put back, never deleted)', async () => {
    const dataDir = tmp.path('managed');
    const dataset = join(dataDir, 'edgeLogs', 'parquet');
    let ep = await open(dataDir);
    await ep.ingest('cloudflare.logs.prod', censusEvents('m', 40));
    ep = await reopen(ep, dataDir);
    await ep.ingest('cloudflare.logs.prod', censusEvents('m', 160, 40));
    ep = await reopen(ep, dataDir);
    await ep.close();
    const commits = logOf(dataset);
    expect(commits.length).toBeGreaterThanOrEqual(2);
    rmSync(join(dataset, '_compact', commits.at(-1)!));
    // Its segments are gone: the orphan Parquet holds the only copy of those events.
    ep = await open(dataDir);
    try {
      await expect.poll(async () => (await census(ep)).total, { timeout: HANG_MS }).toBe(200);
      expect(await census(ep)).toEqual({ total: 200, ids: idRange('m', 0, 200) });
      expect((await ep.query('logs.all', { project: 'p0', project_tier: 'PAYG' })).skippedFiles).toEqual([]);
    } finally {
      await ep.close();
    }
    expect(logOf(dataset)).not.toContain(commits.at(-1));
  });
});

describe('NEWEST, read through a cache of its version (every query reads it)', () => {
  let folders = 0;
  const folder = () => {
    const dir = tmp.path(`newest-${++folders}`);
    mkdirSync(dir, { recursive: true });
    return dir;
  };
  const later = () => Date.now() + 3_600_000;

  it('a rewrite in place within the same instant is read at once (a fresh file is never trusted to its stats)', () => {
    const dir = folder();
    writeFileSync(join(dir, 'NEWEST'), '3\n');
    expect(readNewest(dir)).toBe(3);
    // Same size, same inode, most likely the same timestamp tick.
    writeFileSync(join(dir, 'NEWEST'), '4\n');
    expect(readNewest(dir)).toBe(4);
  });

  it('a file replaced (as commits replace it: a rename) is read again, however old its stats look', () => {
    const dir = folder();
    writeFileSync(join(dir, 'NEWEST'), '3\n');
    expect(readNewest(dir, later())).toBe(3);
    writeFileSync(join(dir, 'NEWEST.tmp'), '12\n');
    renameSync(join(dir, 'NEWEST.tmp'), join(dir, 'NEWEST'));
    expect(readNewest(dir, later())).toBe(12);
    rmSync(join(dir, 'NEWEST'));
    expect(readNewest(dir, later())).toBe(0);
    writeFileSync(join(dir, 'NEWEST'), '5\n');
    expect(readNewest(dir, later())).toBe(5);
  });
});
