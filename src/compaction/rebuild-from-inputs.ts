import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { SourceDescriptor } from '../sources/source-descriptor';
import { parquetLayoutCopy } from '../duckdb/parquet-layout';
import { parquetRowBytes } from '../duckdb/parquet-row-bytes';
import { stageRowsSql, stagedRowsRelation } from '../duckdb/staged-rows';
import { sourceRelation } from '../duckdb/source-relations';
import { sqlString, sqlStringList } from '../duckdb/sql-literal';
import type { DataFile, DatasetState, InputRecord } from '../dataset/dataset-log';
import { provenanceOf, type Provenance } from '../dataset/dataset-orphans';
import { writeCompanions } from '../dataset/stored-rollups';
import { hashRange } from '../files/input-coverage';
import { fsyncDir, fsyncFile } from '../util/durable-fs';
import { fileCrc32 } from '../util/crc32';
import { copyByteRange } from '../files/copy-byte-range';

const RUN = /^part-([0-9a-f]{16})-\d+\.parquet$/;

/**
 * Writes again a data file of a compaction from its inputs, when they are still there with the
 * bytes its commit recorded (a `compact` whose inputs were kept; never managed storage's segments,
 * deleted once compacted): the events of the run's inputs that fall on the file's day, in the
 * layout of `compact`, with new companions, as a new file (the caller commits it in place of the
 * damaged one). Null when it cannot be: a merge's file, a run whose provenance cannot be read, an
 * input gone or changed, a run that wrote that day in more than one file, or another row count.
 *
 * @example
 * const entry = await rebuildFromInputs(connection, state, edgeLogs, damaged, staging);
 * if (entry) await appendCommit(state, { source: edgeLogs.name, add: [entry], remove: [damaged.path], inputs: [] });
 */
export async function rebuildFromInputs(connection: DuckDBConnection, state: DatasetState, source: SourceDescriptor, file: DataFile, staging: string): Promise<DataFile | null> {
  const run = RUN.exec(file.path.split('/').pop() ?? '')?.[1];
  if (!run || file.day === null) return null;
  const siblings = [...state.files.values()].filter((f) => f.path.includes(`/part-${run}-`));
  // The run wrote this day into one file: its rows are exactly the inputs' events of the day.
  if (siblings.filter((f) => f.day === file.day).length !== 1) return null;
  const provenance = await runProvenance(connection, state.root, [file, ...siblings.filter((f) => f !== file)]);
  if (!provenance?.inputs?.length || provenance.replaces) return null;
  if (!provenance.inputs.every(unchanged)) return null;
  await mkdir(join(staging, 'inputs'), { recursive: true });
  const copies: string[] = [];
  for (const [i, record] of provenance.inputs.entries()) {
    const copy = join(staging, 'inputs', `${i}.ndjson${record.compressed ? record.path.slice(record.path.lastIndexOf('.')) : ''}`);
    await copyByteRange(record.path, record.compressed ? 0 : record.start, record.end, copy);
    copies.push(copy);
  }
  const newRun = randomBytes(8).toString('hex');
  const rel = `date=${file.day}/part-${newRun}-0.parquet`;
  const staged = join(staging, 'rebuilt.parquet');
  // Should the repair's commit be lost, the file says it replaces the damaged one (put back, as a merge's).
  const replacing: Provenance = { run: newRun, rows: file.rows, replaces: [file.path] };
  // Parsed once into a staging file and sorted from it, as a compaction run does (staged-rows.ts).
  const rowsFile = join(staging, 'rows.parquet');
  await connection.run(stageRowsSql(source, sourceRelation(source, { ndjson: copies, parquet: [], parquetTypes: new Map() }, { withFilename: true }), rowsFile));
  await connection.run(
    parquetLayoutCopy({
      source,
      relation: stagedRowsRelation(source, rowsFile),
      target: staged,
      where: `timestamp IS NOT NULL AND strftime(timestamp, '%Y-%m-%d') = ${sqlString(file.day)}`,
      provenance: JSON.stringify(replacing),
      rowBytes: await parquetRowBytes(connection, [rowsFile]),
    }),
  );
  const [count] = (await connection.runAndReadAll(`SELECT count(*) AS n FROM read_parquet(${sqlStringList([staged])})`)).getRowObjects();
  if (Number(count?.n) !== file.rows) return null;
  const companions = await writeCompanions(connection, source, staged, state.root, rel, staging);
  await fsyncFile(staged);
  const crc32 = await fileCrc32(staged);
  const target = join(state.root, rel);
  await mkdir(dirname(target), { recursive: true });
  await rename(staged, target);
  await fsyncDir(dirname(target));
  await rm(join(staging, 'inputs'), { recursive: true, force: true });
  await rm(rowsFile, { force: true });
  return { path: rel, rows: file.rows, bytes: (await stat(target)).size, crc32, day: file.day, ...companions };
}

/** The provenance of a run, from the first of its files whose footer can be read. */
async function runProvenance(connection: DuckDBConnection, root: string, files: readonly DataFile[]): Promise<Provenance | null> {
  for (const f of files) {
    try {
      const provenance = await provenanceOf(connection, join(root, f.path));
      if (provenance) return provenance;
    } catch {
      // A damaged footer: a sibling of the same run says the same.
    }
  }
  return null;
}

/** Whether an input still holds the bytes its record claims (the sha256 of [0, end)). */
function unchanged(record: InputRecord): boolean {
  if (!existsSync(record.path) || statSync(record.path).size < record.end) return false;
  return hashRange(record.path, 0, record.end) === record.sha256;
}
