import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { compactLogs } from '../src/compaction/compact';
import { readDatasetStateStable, type DataFile } from '../src/dataset/dataset-log';
import { arraysFreeFiles } from '../src/duckdb/arrays-free-files';
import { mergeSmallFiles } from '../src/managed/dataset-maintenance';
import { edgeLogs } from '../src/sources/edge-logs';
import { edgeEvent, tempDir, writeLines } from './support/log-files';

/**
 * The arrays flag recorded when a file is written (docs/performance.md, "The arrays flag recorded
 * when a file is written"): compaction and merges record in the commit whether any row of a typed
 * file has `arrays:metadata` true, and a query reads that record instead of the file's footer;
 * an entry written before the record existed still gets the footer's answer. The answers are the
 * events' either way.
 */

const tmp = tempDir('le-arrays-recorded-');
afterAll(() => tmp.cleanup());

/** Gateway events of 2026-11-20 (no '[' in any metadata) and of 2026-11-21 (one event's `request` an array). */
function twoDays(part: string, withArray: boolean): Array<Record<string, unknown>> {
  return [
    ...Array.from({ length: 3 }, (_, i) => edgeEvent({ timestamp: `2026-11-20T10:0${i}:00Z`, project: 'p', path: `/rest/v1/${part}${i % 2}` })),
    edgeEvent({ timestamp: '2026-11-21T10:00:00Z', project: 'p', path: `/rest/v1/${part}` }),
    ...(withArray ? [edgeEvent({ timestamp: '2026-11-21T10:01:00Z', project: 'p', extra: { request: [{ path: '/a' }, { path: '/b' }] } })] : []),
  ];
}

/** The dataset's entries by day. */
function entriesByDay(root: string): Record<string, DataFile> {
  return Object.fromEntries([...readDatasetStateStable(root).files.values()].map((f) => [f.day!, f]));
}

/** What the files' footers say, the query path's fallback (arrays-free-files.ts). */
async function footersSay(root: string, files: readonly DataFile[]): Promise<boolean[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const paths = files.map((f) => join(root, f.path));
    const free = await arraysFreeFiles(connection, paths);
    return paths.map((p) => free.has(p));
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

describe('the arrays flag recorded when a file is written', () => {
  it("records on a compacted file's entry whether any of its rows has the flag: false for the day with an array, true for the other, as the footers say", async () => {
    const dir = tmp.path('compacted');
    writeLines(join(dir, 'in.ndjson'), twoDays('t', true));
    await compactLogs({ source: 'edgeLogs', inputs: join(dir, 'in.ndjson'), outDir: join(dir, 'dataset') });
    const days = entriesByDay(join(dir, 'dataset'));
    expect(days['2026-11-20']!.arraysFree).toBe(true);
    expect(days['2026-11-21']!.arraysFree).toBe(false);
    expect(await footersSay(join(dir, 'dataset'), [days['2026-11-20']!, days['2026-11-21']!])).toEqual([true, false]);
  });

  it('records nothing on a file without typed columns (it has no flag)', async () => {
    const dir = tmp.path('untyped');
    writeLines(join(dir, 'in.ndjson'), twoDays('t', true));
    await compactLogs({ source: 'edgeLogs', inputs: join(dir, 'in.ndjson'), outDir: join(dir, 'dataset'), typedColumns: false });
    const files = [...readDatasetStateStable(join(dir, 'dataset')).files.values()];
    expect(files).toHaveLength(2);
    for (const file of files) {
      expect(file.typedFields).toBeUndefined();
      expect(file).not.toHaveProperty('arraysFree');
    }
  });

  it("records it on a merged file's entry: true where no merged file had an array, false where one had", async () => {
    const dir = tmp.path('merged');
    const root = join(dir, 'dataset');
    // Two runs, each writing a small file per day; only the second run's 2026-11-21 has an array.
    writeLines(join(dir, 'in-1.ndjson'), twoDays('a', false));
    writeLines(join(dir, 'in-2.ndjson'), twoDays('b', true));
    await compactLogs({ source: 'edgeLogs', inputs: join(dir, 'in-1.ndjson'), outDir: root });
    await compactLogs({ source: 'edgeLogs', inputs: join(dir, 'in-2.ndjson'), outDir: root });
    const before = [...readDatasetStateStable(root).files.values()];
    expect(before.map((f) => [f.day, f.arraysFree]).sort()).toEqual([
      ['2026-11-20', true],
      ['2026-11-20', true],
      ['2026-11-21', false],
      ['2026-11-21', true],
    ]);
    expect((await mergeSmallFiles(root, edgeLogs)).merged).toBe(4);
    const days = entriesByDay(root);
    expect(readDatasetStateStable(root).files.size).toBe(2);
    expect(before.map((f) => f.path)).not.toContain(days['2026-11-20']!.path);
    expect(days['2026-11-20']!.arraysFree).toBe(true);
    expect(days['2026-11-21']!.arraysFree).toBe(false);
    expect(await footersSay(root, [days['2026-11-20']!, days['2026-11-21']!])).toEqual([true, false]);
  });
});
