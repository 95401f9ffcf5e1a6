import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection } from '@duckdb/node-api';
import { compactLogs } from '../src/compaction/compact';
import { readDatasetStateStable, type DataFile } from '../src/dataset/dataset-log';
import { headFromInputHeads, type MergedInput } from '../src/dataset/merged-head';
import { writeHead } from '../src/dataset/newest-heads';
import { openDatabase } from '../src/duckdb/open-database';
import { sqlString, sqlStringList } from '../src/duckdb/sql-literal';
import { edgeLogs } from '../src/sources/edge-logs';
import { edgeEvent, tempDir, writeLines } from './support/log-files';

// A merge sorted in slices writes its file's head from its inputs' heads (merged-head.ts): the head
// reading the merged file gives, or none when the inputs' heads cannot stand for their files.

/** Events of each project in one input: past the head's 100, under it, and events without a project. */
const PER_PROJECT: Record<string, number> = { big: 130, small: 30, '': 4 };

function inputEvents(input: number): object[] {
  const events: object[] = [];
  for (const [project, count] of Object.entries(PER_PROJECT)) {
    for (let i = 0; i < count; i++) {
      // Whole seconds shared by several ids, and by both inputs: ties the ranking breaks by id.
      const e = edgeEvent({ project, timestamp: new Date(Date.parse('2026-11-21T06:00:00Z') + Math.floor(i / 3) * 1000).toISOString(), id: `${input}-${project}-${String(i).padStart(4, '0')}` });
      if (project === '') delete (e as { project?: string }).project;
      events.push(e);
    }
  }
  return events;
}

describe("a merged file's head from its inputs' heads", () => {
  const tmp = tempDir('le-merged-head-');
  const out = tmp.path('dataset');
  let connection: DuckDBConnection;
  let close: () => Promise<void>;
  let files: DataFile[];
  let inputs: MergedInput[];
  const merged = tmp.path('merged.parquet');

  beforeAll(async () => {
    ({ connection, close } = await openDatabase({ threads: 1 }));
    for (const input of [0, 1]) await compactLogs({ source: 'edgeLogs', inputs: writeLines(tmp.path(`in-${input}.ndjson`), inputEvents(input)), outDir: out });
    files = [...readDatasetStateStable(out).files.values()];
    inputs = files.map((f) => ({ data: join(out, f.path), head: join(out, f.head!.path), typedFields: f.typedFields }));
    // The two files as a merge writes them: every row, in the layout's order.
    await connection.run(
      `COPY (SELECT * FROM read_parquet(${sqlStringList(inputs.map((i) => i.data))}, hive_partitioning = false) ORDER BY project, timestamp DESC, id) TO ${sqlString(merged)} (FORMAT parquet)`,
    );
  });
  afterAll(async () => {
    await close();
    tmp.cleanup();
  });

  const rowsOf = async (path: string) => (await connection.runAndReadAll(`SELECT * FROM read_parquet(${sqlString(path)})`)).getRows();
  const columnsOf = async (path: string) => (await connection.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${sqlString(path)})`)).getRows();

  it('is the head reading the merged file gives: the same rows, order and columns', async () => {
    expect(files).toHaveLength(2);
    const head = await headFromInputHeads(connection, edgeLogs, inputs, merged, tmp.path('from-heads.parquet'), true);
    const fromFile = await writeHead(connection, edgeLogs, merged, tmp.path('from-file.parquet'));
    expect(head).toEqual({ path: tmp.path('from-heads.parquet'), rows: fromFile });
    expect(fromFile).toBe(100 + 60 + 8);
    expect(await columnsOf(head!.path)).toEqual(await columnsOf(tmp.path('from-file.parquet')));
    expect(await rowsOf(head!.path)).toEqual(await rowsOf(tmp.path('from-file.parquet')));
  });

  it('is none when an input has no head, its head cannot be read, or its head lacks rows its file holds', async () => {
    const target = tmp.path('none.parquet');
    expect(await headFromInputHeads(connection, edgeLogs, [inputs[0]!, { ...inputs[1]!, head: undefined }], merged, target, true)).toBeNull();
    expect(await headFromInputHeads(connection, edgeLogs, [inputs[0]!, { ...inputs[1]!, head: tmp.path('gone.parquet') }], merged, target, true)).toBeNull();
    const short = tmp.path('short-head.parquet');
    await connection.run(`COPY (SELECT * FROM read_parquet(${sqlString(inputs[1]!.head!)}) LIMIT 120) TO ${sqlString(short)} (FORMAT parquet)`);
    expect(await headFromInputHeads(connection, edgeLogs, [inputs[0]!, { ...inputs[1]!, head: short }], merged, target, true)).toBeNull();
  });
});
