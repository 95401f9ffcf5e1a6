import { afterAll, describe, expect, it, vi } from 'vitest';
import { join } from 'node:path';
import { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { compactLogs } from '../src/compaction/compact';
import { appendCommit, readDatasetStateStable, type DataFile } from '../src/dataset/dataset-log';
import { arraysFreeFiles } from '../src/duckdb/arrays-free-files';
import { arraysAggregate, arraysFreeWritten } from '../src/duckdb/parquet-layout';
import { mergeSmallFiles } from '../src/managed/dataset-maintenance';
import { edgeLogs } from '../src/sources/edge-logs';
import { edgeEvent, endpointsAt, tempDir, writeLines } from './support/log-files';

/**
 * The arrays flag recorded when a file is written (docs/performance.md, "The arrays flag recorded
 * when a file is written"): compaction and merges record in the commit whether any row of a typed
 * file has `arrays:metadata` true, and a query reads that record instead of the file's footer;
 * an entry written before the record existed still gets the footer's answer. The answers are the
 * events' either way.
 */

const tmp = tempDir('le-arrays-recorded-');
afterAll(() => tmp.cleanup());

const NOW = '2026-11-21T12:00:00Z';
const OPTIONS = { sandboxable: ['logs.all'], tierWindow: false, sqlDialect: 'bigquery' as const };
const TOP_PATHS = 'select r.path as path, count(timestamp) as c from edge_logs cross join unnest(metadata) as m cross join unnest(m.request) as r group by path order by c desc, path limit 100';

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

/**
 * Runs Top Paths over the compacted dataset and over the same events as NDJSON: the answers, the
 * statements that read a footer's statistics, and how each day's file reads the flag (the constant
 * false, or its column).
 */
async function topPaths(root: string, ndjson: string): Promise<{ footerReads: number; flag: Record<string, 'constant' | 'column'> }> {
  const { ep: compacted } = await endpointsAt({ edgeLogs: root }, NOW, OPTIONS);
  const { ep: events } = await endpointsAt({ edgeLogs: ndjson }, NOW, OPTIONS);
  const prepared: string[] = [];
  const ran: string[] = [];
  const prepare = DuckDBConnection.prototype.prepare;
  const runAndReadAll = DuckDBConnection.prototype.runAndReadAll;
  const prepareSpy = vi.spyOn(DuckDBConnection.prototype, 'prepare').mockImplementation(function (this: DuckDBConnection, text: string) {
    prepared.push(text);
    return prepare.call(this, text);
  });
  const runSpy = vi.spyOn(DuckDBConnection.prototype, 'runAndReadAll').mockImplementation(function (this: DuckDBConnection, ...args: Parameters<DuckDBConnection['runAndReadAll']>) {
    ran.push(String(args[0]));
    return runAndReadAll.apply(this, args);
  });
  try {
    const answer = (await compacted.query('logs.all', { project: 'p' }, { sql: TOP_PATHS })).result;
    prepareSpy.mockRestore();
    runSpy.mockRestore();
    expect(answer).toEqual((await events.query('logs.all', { project: 'p' }, { sql: TOP_PATHS })).result);
    const text = prepared.find((t) => t.includes('read_parquet'))!;
    const flag = Object.fromEntries(
      ['2026-11-20', '2026-11-21'].map((day) => {
        const before = text
          .slice(0, text.indexOf(`date=${day}/`))
          .split('SELECT ')
          .at(-1)!;
        expect(before).toContain('"arrays:metadata"');
        return [day, before.includes('false AS "arrays:metadata"') ? 'constant' : 'column'] as const;
      }),
    );
    return { footerReads: ran.filter((t) => t.includes('parquet_metadata(')).length, flag };
  } finally {
    prepareSpy.mockRestore();
    runSpy.mockRestore();
    await compacted.close();
    await events.close();
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

  it('records what the count saw: any true row makes it false, false or NULL rows true; nothing for a file the count did not see, nor without typed columns', () => {
    expect(arraysFreeWritten(edgeLogs, true, true)).toEqual({ arraysFree: false });
    expect(arraysFreeWritten(edgeLogs, true, false)).toEqual({ arraysFree: true });
    expect(arraysFreeWritten(edgeLogs, true, null)).toEqual({ arraysFree: true });
    expect(arraysFreeWritten(edgeLogs, true, undefined)).toEqual({});
    expect(arraysFreeWritten(edgeLogs, false, true)).toEqual({});
    expect(arraysAggregate(edgeLogs, true)).toBe(', bool_or("arrays:metadata") AS arrays');
    expect(arraysAggregate(edgeLogs, false)).toBe('');
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

  it('is what a query reads: no footer is read, and a record that says otherwise than the footer decides', async () => {
    const dir = tmp.path('read');
    const root = join(dir, 'dataset');
    writeLines(join(dir, 'in.ndjson'), twoDays('t', true));
    await compactLogs({ source: 'edgeLogs', inputs: join(dir, 'in.ndjson'), outDir: root });
    expect(await topPaths(root, join(dir, 'in.ndjson'))).toEqual({ footerReads: 0, flag: { '2026-11-20': 'constant', '2026-11-21': 'column' } });
    // 2026-11-20's footer says its flag is never true; its entry now says otherwise, and is believed
    // (its column read, all false: the same answers).
    const day20 = entriesByDay(root)['2026-11-20']!;
    expect(await appendCommit(readDatasetStateStable(root), { source: 'edgeLogs', add: [{ ...day20, arraysFree: false }], remove: [], inputs: [] })).toBe(true);
    expect(await topPaths(root, join(dir, 'in.ndjson'))).toEqual({ footerReads: 0, flag: { '2026-11-20': 'column', '2026-11-21': 'column' } });
  });

  it('is asked of the footers for an entry written before it was recorded, with the same answers', async () => {
    const dir = tmp.path('old-entries');
    const root = join(dir, 'dataset');
    writeLines(join(dir, 'in.ndjson'), twoDays('t', true));
    await compactLogs({ source: 'edgeLogs', inputs: join(dir, 'in.ndjson'), outDir: root });
    const old = [...readDatasetStateStable(root).files.values()].map(({ arraysFree: _, ...entry }) => entry);
    expect(await appendCommit(readDatasetStateStable(root), { source: 'edgeLogs', add: old, remove: [], inputs: [] })).toBe(true);
    expect([...readDatasetStateStable(root).files.values()].every((f) => f.typedFields?.length && !('arraysFree' in f))).toBe(true);
    expect(await topPaths(root, join(dir, 'in.ndjson'))).toEqual({ footerReads: 1, flag: { '2026-11-20': 'constant', '2026-11-21': 'column' } });
  });
});
