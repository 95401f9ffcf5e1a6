import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection } from '@duckdb/node-api';
import { compactLogs } from '../src/compaction/compact';
import { heldHeads, StatementsProgress } from '../src/compaction/write-run';
import { mergeSmallFiles } from '../src/managed/dataset-maintenance';
import { readDatasetStateStable, type DataFile } from '../src/dataset/dataset-log';
import { writeCompanions } from '../src/dataset/stored-rollups';
import { HEAD_ROWS_PER_PROJECT } from '../src/dataset/newest-heads';
import { openDatabase } from '../src/duckdb/open-database';
import { sqlString } from '../src/duckdb/sql-literal';
import { edgeLogs } from '../src/sources/edge-logs';
import { edgeEvent, tempDir, writeLines } from './support/log-files';

// A run's heads are written from the rows it sorted, not read back from its files
// (docs/ingest.md, "Layout, compaction and retention"): they must be what reading the file gives.

const DAYS = ['2026-11-19', '2026-11-20', '2026-11-21'];
/** Events of each project per day and input: past the head's 100, about it, under it, a few, and events without a project. */
const PER_DAY: Record<string, number> = { big: 160, edge: 55, small: 20, few: 2, '': 3 };

/** One input's events: every project on every day, whole seconds shared by several ids, a field only some events have. */
function inputEvents(input: number): object[] {
  const events: object[] = [];
  for (const day of DAYS) {
    for (const [project, count] of Object.entries(PER_DAY)) {
      for (let i = 0; i < count; i++) {
        const second = Date.parse(`${day}T06:00:00Z`) + Math.floor((i * 7 + input * 3) / 3) * 1000;
        const e = edgeEvent({ project, timestamp: new Date(second).toISOString(), id: `${input}-${project}-${day}-${String(i).padStart(4, '0')}`, path: `/rest/v1/t${i % 4}` });
        if (project === '') delete (e as { project?: string }).project;
        if (i % 5 === 0) (e.metadata as Record<string, unknown>).extra = { tag: `t${i % 3}` };
        events.push(e);
      }
    }
  }
  return events;
}

describe('heads written from the rows a write holds', () => {
  const tmp = tempDir('le-heads-');
  const out = tmp.path('dataset');
  let connection: DuckDBConnection;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ connection, close } = await openDatabase({ threads: 1 }));
    // Two runs: every day gets a file of each, then the days are merged into one file each.
    for (const input of [0, 1]) await compactLogs({ source: 'edgeLogs', inputs: writeLines(tmp.path(`in-${input}.ndjson`), inputEvents(input)), outDir: out });
  });
  afterAll(async () => {
    await close();
    tmp.cleanup();
  });

  const rowsOf = async (path: string) => (await connection.runAndReadAll(`SELECT * FROM read_parquet(${sqlString(path)})`)).getRows();
  const columnsOf = async (path: string) => (await connection.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${sqlString(path)})`)).getRows();

  /** Each file's companions as committed, against those written the old way: read back from its data file. */
  async function expectCompanionsAsFromFiles(files: DataFile[], label: string): Promise<void> {
    const again = tmp.path(`from-files-${label}`);
    for (const file of files) {
      const fromFile = await writeCompanions(connection, edgeLogs, join(out, file.path), again, file.path, tmp.path(`staging-${label}`));
      expect(file.head!.rows).toBe(fromFile.head!.rows);
      expect(await columnsOf(join(out, file.head!.path))).toEqual(await columnsOf(join(again, fromFile.head!.path)));
      expect(await rowsOf(join(out, file.head!.path))).toEqual(await rowsOf(join(again, fromFile.head!.path)));
      for (const [name, rollup] of Object.entries(file.rollups ?? {})) expect(await rowsOf(join(out, rollup.path))).toEqual(await rowsOf(join(again, fromFile.rollups![name]!.path)));
    }
  }

  it("gives each run's file the head and rollups reading the file gives: the same rows in the same order and columns, for several projects and days", async () => {
    const files = [...readDatasetStateStable(out).files.values()];
    expect(files.map((f) => f.day).sort()).toEqual([...DAYS, ...DAYS].sort());
    // Each head holds a project's newest 100 at most, and every row of the projects with fewer.
    const perFile = Object.values(PER_DAY).reduce((n, c) => n + Math.min(HEAD_ROWS_PER_PROJECT, c), 0);
    for (const file of files) expect(file.head!.rows).toBe(perFile);
    await expectCompanionsAsFromFiles(files, 'runs');
  });

  it("gives a merged file the head and rollups reading the file gives, cut past a project's 100 newest of both files", async () => {
    while ((await mergeSmallFiles(out, edgeLogs, {}, () => true)).settledLeft);
    const files = [...readDatasetStateStable(out).files.values()];
    expect(files.map((f) => f.day).sort()).toEqual(DAYS);
    const perFile = Object.values(PER_DAY).reduce((n, c) => n + Math.min(HEAD_ROWS_PER_PROJECT, 2 * c), 0);
    for (const file of files) expect(file.head!.rows).toBe(perFile);
    await expectCompanionsAsFromFiles(files, 'merged');
  });

  it('takes the heads a write held only when there is one for each of its files, else none', () => {
    const outDir = join('run', 'out');
    const headsDir = join('run', 'heads');
    const staged = [join(outDir, 'date=2026-11-20', 'part-r-0.parquet'), join(outDir, 'date=2026-11-21', 'part-r-0.parquet')];
    const both = new Map([
      [join(headsDir, 'date=2026-11-20', 'part-r-0.parquet'), 3],
      [join(headsDir, 'date=2026-11-21', 'part-r-0.parquet'), 5],
    ]);
    expect(heldHeads(outDir, staged, headsDir, both)).toEqual(
      new Map([
        [staged[0], { path: join(headsDir, 'date=2026-11-20', 'part-r-0.parquet'), rows: 3 }],
        [staged[1], { path: join(headsDir, 'date=2026-11-21', 'part-r-0.parquet'), rows: 5 }],
      ]),
    );
    // A day written as two files has one head for both: each file's head is read from it instead.
    const split = [...staged, join(outDir, 'date=2026-11-21', 'part-r-1.parquet')];
    expect(heldHeads(outDir, split, headsDir, both).size).toBe(0);
    expect(heldHeads(outDir, staged, headsDir, new Map([[join(headsDir, 'date=2026-11-20', 'part-r-0.parquet'), 3]])).size).toBe(0);
    expect(heldHeads(outDir, staged, headsDir, null).size).toBe(0);
  });

  it("reports the write's progress over its three statements as one fraction that only grows", () => {
    const share = new StatementsProgress();
    share.begin(0, 3);
    expect(share.fraction(0.3)).toBeCloseTo(0.1);
    // The sort's last reading (100 %) seen after the copy began says nothing of the copy.
    share.begin(1, 3);
    expect(share.fraction(1)).toBeCloseTo(0.1);
    expect(share.fraction(0.5)).toBeCloseTo(0.5);
    // A reading lower than one before (a statement's own restarts at 0) never moves it back.
    expect(share.fraction(0.2)).toBeCloseTo(0.5);
    share.begin(2, 3);
    expect(share.fraction(0)).toBeCloseTo(2 / 3);
    expect(share.fraction(0.9)).toBeCloseTo(2.9 / 3);
  });
});
