import { cpSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { compactLogs } from '../src/compaction/compact';
import { withDatasetLock } from '../src/dataset/dataset-lock';
import type { Endpoints } from '../src/index';
import { mergeSmallFiles } from '../src/managed/dataset-maintenance';
import { edgeLogs } from '../src/sources/built-ins';
import { census, CENSUS_NOW, censusEvents, idRange } from './support/census';
import { endpointsAt, tempDir, writeLines } from './support/log-files';

// A query's snapshot reuses the dataset's state it read before while nothing can have been
// committed since (src/dataset/dataset-state-memo.ts): every request after a commit, a merge, or
// another process's commit still answers from the new state, exactly once. The system's date is
// set an hour on (the log folders then look settled, as a dataset nobody wrote to for a while:
// the state is kept), and a folder is dated an hour back before a write this process does not
// count, so that write dates it now.

const tmp = tempDir('le-state-reuse-');
afterAll(() => tmp.cleanup());
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(Date.now() + 3_600_000);
});
afterEach(() => vi.useRealTimers());

const settle = (root: string) => {
  const past = (Date.now() - 2 * 3_600_000) / 1000;
  utimesSync(join(root, '_compact'), past, past);
};

/** One run of `compact` over `count` census events named `${prefix}-…`, all on 2026-11-20. */
async function run(out: string, prefix: string, count: number): Promise<void> {
  const input = writeLines(
    tmp.path(`${prefix}.ndjson`),
    censusEvents(prefix, count).map((e) => ({ ...e, timestamp: `2026-11-20T1${prefix.length % 10}:00:00Z` })),
  );
  await compactLogs({ source: 'edgeLogs', inputs: input, outDir: out });
}

/** What a caller's SQL counts, asked with the same text every time (its checked text and compiled texts reused). */
async function counted(ep: Endpoints): Promise<number> {
  const { result } = await ep.query('logs.all', { project: 'p0', project_tier: 'PAYG' }, { sql: 'select count(*) as n from edge_logs' });
  return Number((result as Array<{ n: number }>)[0]!.n);
}

const sorted = (...ranges: string[][]) => ranges.flat().sort();

describe('requests over a dataset whose state is reused while nothing is committed', () => {
  it('see a commit of this process, a merge, and a commit of another process at the next request, each event once', async () => {
    const out = tmp.path('own', 'pq');
    await run(out, 'a', 30);
    const { ep } = await endpointsAt({ edgeLogs: out }, CENSUS_NOW, { sandboxable: ['logs.all'] });
    try {
      expect(await census(ep)).toEqual({ total: 30, ids: idRange('a', 0, 30) });
      expect(await census(ep)).toEqual({ total: 30, ids: idRange('a', 0, 30) });
      expect(await counted(ep)).toBe(3);
      // A commit of this process.
      await run(out, 'bb', 20);
      expect(await census(ep)).toEqual({ total: 50, ids: sorted(idRange('a', 0, 30), idRange('bb', 0, 20)) });
      expect(await counted(ep)).toBe(5);
      // A merge: its two files become one, read once.
      expect((await mergeSmallFiles(out, edgeLogs)).merged).toBe(2);
      expect(await census(ep)).toEqual({ total: 50, ids: sorted(idRange('a', 0, 30), idRange('bb', 0, 20)) });
      expect(await counted(ep)).toBe(5);
      // Another process's commit: its files and log entries appear in the folder, as its
      // renames leave them (here copied from the same dataset compacted once more elsewhere).
      const other = tmp.path('other', 'pq');
      cpSync(out, other, { recursive: true });
      await run(other, 'ccc', 10);
      settle(out);
      expect(await census(ep)).toEqual({ total: 50, ids: sorted(idRange('a', 0, 30), idRange('bb', 0, 20)) });
      cpSync(other, out, { recursive: true });
      expect(await census(ep)).toEqual({ total: 60, ids: sorted(idRange('a', 0, 30), idRange('bb', 0, 20), idRange('ccc', 0, 10)) });
      expect(await counted(ep)).toBe(6);
    } finally {
      await ep.close();
    }
  });

  it('name an entry of the log damaged in place once its folder changes next (a new reader at once)', async () => {
    const out = tmp.path('damaged', 'pq');
    await run(out, 'a', 30);
    await run(out, 'bb', 20);
    const { ep } = await endpointsAt({ edgeLogs: out }, CENSUS_NOW);
    try {
      const skipped = async () => (await ep.query('usage.api-counts', { project: '.', interval: 'daily' })).skippedFiles.map((s) => s.reason);
      expect(await skipped()).toEqual([]);
      // The second commit garbled in place (no file created or removed in the folder): the state read before stands.
      const path = join(out, '_compact', `${String(2).padStart(20, '0')}.json`);
      writeFileSync(path, readFileSync(path, 'utf8').replace('"rows":20', '"rows":21'));
      expect(await skipped()).toEqual([]);
      expect((await census(ep)).total).toBe(50);
      const fresh = await endpointsAt({ edgeLogs: out }, CENSUS_NOW);
      try {
        expect((await census(fresh.ep)).total).toBe(30);
      } finally {
        await fresh.ep.close();
      }
      // A writer taking the dataset's lock (a compaction starting) changes the folder: read again, the damage named.
      await withDatasetLock(out, 'test', async () => undefined);
      expect(await skipped()).toEqual(['damaged_log']);
      expect((await census(ep)).total).toBe(30);
    } finally {
      await ep.close();
    }
  });
});
