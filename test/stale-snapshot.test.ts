import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { compactLogs } from '../src/compaction/compact';
import { SourceReader, staleSnapshot } from '../src/files/source-reader';
import { mergeSmallFiles } from '../src/managed/dataset-maintenance';
import { edgeLogs } from '../src/sources/built-ins';
import { edgeEvent, tempDir, writeLines } from './support/log-files';
import { createEndpoints } from '../src/index';

// docs/damaged-data.md: a data file its dataset's log names but that is not on disk is left out
// and named; one a newer commit removed after the query's snapshot (a merge) is no damage: the
// query takes a fresh snapshot instead of answering without its rows.
describe('a snapshot that names a file a newer commit removed', () => {
  const tmp = tempDir('le-stale-');
  afterAll(() => tmp.cleanup());

  const dayOfTwoFiles = async (name: string) => {
    const out = tmp.path(name, 'pq');
    for (const run of ['a', 'b']) {
      const input = writeLines(tmp.path(name, `${run}.ndjson`), [edgeEvent({ id: `${run}1`, timestamp: '2026-11-20T10:00:00Z' })]);
      await compactLogs({ source: 'edgeLogs', inputs: input, outDir: out });
    }
    const reader = new SourceReader([out], undefined, edgeLogs);
    const read = await reader.snapshot();
    expect(read.parquet).toHaveLength(2);
    return { out, reader, read };
  };

  it('is stale after a merge removed its files: verifyRows says so instead of leaving them out', async () => {
    const { out, reader, read } = await dayOfTwoFiles('merged');
    expect((await mergeSmallFiles(out, edgeLogs)).merged).toBeGreaterThan(0);
    const error = await reader.verifyRows(read).then(
      () => null,
      (e: unknown) => e,
    );
    expect(staleSnapshot(error)).toBe(true);
    expect(read.skipped).toEqual([]);
    // A fresh snapshot names the merged file, whole.
    const fresh = await reader.snapshot();
    expect(await reader.verifyRows(fresh)).toBe(0);
    expect(fresh.parquet).toHaveLength(1);
  });

  /** Runs `query` over a day of two files that a merge replaces right after the query's first snapshot. */
  const acrossMerge = async <T>(name: string, query: (ep: Awaited<ReturnType<typeof createEndpoints>>) => Promise<T>): Promise<T> => {
    const { out } = await dayOfTwoFiles(name);
    const ep = await createEndpoints({ sources: { edgeLogs: out }, now: () => new Date('2026-11-21T12:00:00Z'), cache: false });
    const snapshot = SourceReader.prototype.snapshot;
    let merged = false;
    const spy = vi.spyOn(SourceReader.prototype, 'snapshot').mockImplementation(async function (this: SourceReader, ...args) {
      const read = await snapshot.apply(this, args);
      if (!merged) merged = (await mergeSmallFiles(out, edgeLogs)).merged > 0;
      return read;
    });
    try {
      const answer = await query(ep);
      expect(merged).toBe(true);
      return answer;
    } finally {
      spy.mockRestore();
      await ep.close();
    }
  };

  it('a query whose snapshot a merge made stale answers every row, from a fresh snapshot', async () => {
    // logs.all checks each day's files as its newest-first walk reaches them.
    const page = await acrossMerge('page', (ep) => ep.query('logs.all', { project: 'abc', project_tier: 'PAYG' }));
    expect(page.result.map((r) => r.id).sort()).toEqual(['a1', 'b1']);
    expect(page.skippedFiles ?? []).toEqual([]);
    // usage.api-counts checks them with the snapshot (its rollups gone, the files' rows are read).
    const usage = await acrossMerge('usage', (ep) => ep.query('usage.api-counts', { project: 'abc', interval: 'daily' }));
    expect(usage.result.reduce((n, r) => n + Number(r.total_rest_requests), 0)).toBe(2);
    expect(usage.skippedFiles ?? []).toEqual([]);
  });

  it('a file the log still names but the disk lost is left out and named, as before', async () => {
    const { reader, read } = await dayOfTwoFiles('lost');
    rmSync(read.parquet[0]!.path);
    expect(await reader.verifyRows(read)).toBe(1);
    expect(read.skipped.map((s) => s.reason)).toEqual(['missing']);
    expect(read.parquet).toHaveLength(1);
  });
});
