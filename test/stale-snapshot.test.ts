import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { compactLogs } from '../src/compaction/compact';
import { SourceReader, staleSnapshot } from '../src/files/source-reader';
import { mergeSmallFiles } from '../src/managed/dataset-maintenance';
import { edgeLogs } from '../src/sources/built-ins';
import { edgeEvent, tempDir, writeLines } from './support/log-files';

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
    expect(await mergeSmallFiles(out, edgeLogs)).toBeGreaterThan(0);
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

  it('a file the log still names but the disk lost is left out and named, as before', async () => {
    const { reader, read } = await dayOfTwoFiles('lost');
    rmSync(read.parquet[0]!.path);
    expect(await reader.verifyRows(read)).toBe(1);
    expect(read.skipped.map((s) => s.reason)).toEqual(['missing']);
    expect(read.parquet).toHaveLength(1);
  });
});
