import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { SourceDescriptor } from '../sources/source-descriptor';
import { openDatabase, type DatabaseSettings } from '../duckdb/open-database';
import type { BurstDatabase, LentConnection } from '../duckdb/burst-database';
import { arraysAggregate, arraysFreeWritten, typedFieldsWritten } from '../duckdb/parquet-layout';
import { stageRowsSql, stagedCountsSql, stagedEventsSql, stagedRowsRelation } from '../duckdb/staged-rows';
import { discoverTypedPaths } from '../duckdb/discover-paths';
import { sourceRelation } from '../duckdb/source-relations';
import { sqlStringList } from '../duckdb/sql-literal';
import { EngineError } from '../errors';
import type { DataFile, InputRecord } from '../dataset/dataset-log';
import type { Provenance } from '../dataset/dataset-orphans';
import { failpoint } from '../util/failpoint';
import { statOrNull } from '../files/list-glob';
import { writeCompanions, type HeldHead } from '../dataset/stored-rollups';
import { writeSortedLayout } from '../dataset/sorted-layout-write';
import { parquetRowBytes } from '../duckdb/parquet-row-bytes';
import { DurablePlacement } from '../dataset/durable-placement';
import type { InputScan } from './input-scan';
import { readPathsOf, type ReadPaths } from './read-paths';
import { checkAborted } from './check-aborted';

/** What a run wrote and will commit: the published files, the inputs' records, the events and skipped lines. */
export interface WrittenRun {
  add: DataFile[];
  records: InputRecord[];
  rows: number;
  skippedLines: number;
}

/** What a run needs of compaction's options. */
export interface RunOptions {
  source: SourceDescriptor;
  sealed?: boolean;
  signal?: AbortSignal;
  duckdb?: DatabaseSettings;
  typedColumns?: boolean;
  /** The typed fields the dataset already holds beyond those declared (its log's `typedPaths`): written too, with those the run discovers. */
  typedPaths?: readonly string[];
  /** Stages a run's rows from rows parsed already instead of its inputs' lines (see `StageParsed`). */
  stageParsed?: StageParsed;
  /** The DuckDB kept open across a burst's runs (managed storage's compactor); default one opened for the run. */
  database?: BurstDatabase;
}

/**
 * Writes a run's staged rows file (staged-rows.ts: `stageRowsSql`'s columns, `filename` the input's
 * path) from rows something holds parsed already (managed storage's memory tables), instead of
 * the inputs' lines being parsed again; resolves false when it does not hold every line of each
 * input (the run then writes that file from the lines, over anything begun). Asked only when the
 * run reads every input whole and in place.
 *
 * @example
 * const stageParsed: StageParsed = async (paths, rowsFile) => held(paths) && (await copyHeld(paths, rowsFile), true);
 */
export type StageParsed = (inputs: readonly string[], rowsFile: string) => Promise<boolean>;

/** The stages a run reports; `compactLogs`' `onProgress` sees them among its own (`CompactStage`). */
export type RunStage = 'writing' | 'verifying' | 'publishing';

type Progress = (progress: { stage: RunStage; fraction: number }) => void;

/**
 * Stages the new bytes, writes and counts the Parquet, and publishes it (not yet committed). Its
 * phases, in order: `readPathsOf` (what is read where), `stageRows` (the lines parsed once and
 * counted), `runRecords` (the commit it will append), `writeParquet`, `verifyRun`, `publishRun`.
 * The caller appends the commit (`compactFiles`), or deletes `add` if it cannot.
 *
 * @example
 * const run = await writeRun(outDir, { source: edgeLogs, signal }, work, onProgress);
 * await appendCommit(state, { source: edgeLogs.name, add: run.add, remove: [], inputs: run.records });
 */
export async function writeRun(outDir: string, options: RunOptions, work: InputScan[], progress: Progress): Promise<WrittenRun> {
  const runId = randomBytes(8).toString('hex');
  const staging = join(outDir, `.compact-${runId}.tmp`);
  await mkdir(join(staging, 'inputs'), { recursive: true });
  // A sort of millions of events may not fit in memory: spill inside the staging folder.
  const spill = join(staging, 'spill');
  const { connection, release } = options.database ? await options.database.lend(options.duckdb, spill) : await runDatabase(options.duckdb, spill);
  let failed = true;
  const abort = () => connection.interrupt();
  options.signal?.addEventListener('abort', abort);
  try {
    const readPaths = await readPathsOf(work, staging, options.sealed ?? false);
    const { rowsFile, counts } = await stageRows(connection, options, readPaths, staging);
    checkAborted(options.signal);
    const { records, rows } = runRecords(readPaths, counts);
    // The typed fields it writes: declared, held by the dataset, and discovered in this run.
    const typedColumns = options.typedColumns ?? true;
    const source = typedColumns ? await discoverTypedPaths(connection, options.source, stagedEventsSql(rowsFile), options.typedPaths ?? []) : options.source;
    checkAborted(options.signal);
    const { out, heads } = await writeParquet(connection, { ...options, source }, { runId, rowsFile, staging, provenance: { run: runId, rows, inputs: records } }, progress);
    checkAborted(options.signal);
    progress({ stage: 'verifying', fraction: 0 });
    const { staged, perFile, arrays } = await verifyRun(connection, readPaths, out, rows, arraysAggregate(source, typedColumns));
    progress({ stage: 'verifying', fraction: 1 });
    checkAborted(options.signal);
    const add = await publishRun(connection, source, { outDir, out, staging, staged, perFile, arrays, typedColumns, heads: heldHeads(out, staged, join(staging, 'heads'), heads) }, progress);
    failed = false;
    return { add, records, rows, skippedLines: [...counts.values()].reduce((n, c) => n + c.skipped, 0) };
  } finally {
    options.signal?.removeEventListener('abort', abort);
    await release(failed);
    await rm(staging, { recursive: true, force: true });
  }
}

/** A DuckDB opened for one run alone, spilling into its staging folder. */
async function runDatabase(settings: DatabaseSettings | undefined, spill: string): Promise<LentConnection> {
  const { connection, close } = await openDatabase({ ...settings, tempDirectory: spill });
  return { connection, release: () => close() };
}

/**
 * The lines parsed once, into an unsorted file the counts and the sort read (staged-rows.ts); the
 * events and skipped lines per file read. When every input is read whole and in place,
 * `stageParsed` may write that file from rows it holds parsed already (the same rows, so the same
 * Parquet); else, or when it declines, the inputs' lines are parsed here.
 */
async function stageRows(
  connection: DuckDBConnection,
  options: RunOptions,
  readPaths: ReadPaths,
  staging: string,
): Promise<{ rowsFile: string; counts: Map<string, { rows: number; skipped: number }> }> {
  const { source } = options;
  const rowsFile = join(staging, 'rows.parquet');
  const whole = [...readPaths].every(([path, scan]) => path === scan.file.path && scan.covered === 0 && scan.end === scan.file.size);
  const staged = whole && options.stageParsed ? await options.stageParsed([...readPaths.keys()], rowsFile) : false;
  if (!staged) {
    await rm(rowsFile, { force: true });
    await connection.run(stageRowsSql(source, sourceRelation(source, { ndjson: [...readPaths.keys()], parquet: [], parquetTypes: new Map() }, { withFilename: true }), rowsFile));
  }
  const counts = new Map<string, { rows: number; skipped: number }>();
  for (const row of (await connection.runAndReadAll(stagedCountsSql(rowsFile))).getRowObjects()) {
    counts.set(String(row.filename), { rows: Number(row.rows), skipped: Number(row.skipped) });
  }
  return { rowsFile, counts };
}

/**
 * The commit this run will append, carried by every file it writes: should the commit be lost,
 * the files still say which inputs they hold (dataset-orphans.ts).
 */
function runRecords(readPaths: ReadPaths, counts: ReadonlyMap<string, { rows: number; skipped: number }>): { records: InputRecord[]; rows: number } {
  const records: InputRecord[] = [];
  for (const [path, scan] of readPaths) {
    const c = counts.get(path) ?? { rows: 0, skipped: 0 };
    records.push({ ...scan.record, rows: c.rows, skippedLines: c.skipped });
  }
  return { records, rows: [...counts.values()].reduce((n, c) => n + c.rows, 0) };
}

/**
 * Writes the staged rows as the dataset's Parquet layout into the staging folder's `out`; returns
 * that folder, and for a source with heads the heads written from the same sorted rows
 * (`writeSortedLayout`), by path under the staging folder's `heads`, with their rows.
 */
async function writeParquet(
  connection: DuckDBConnection,
  options: RunOptions,
  run: { runId: string; rowsFile: string; staging: string; provenance: Provenance },
  progress: Progress,
): Promise<{ out: string; heads: Map<string, number> | null }> {
  progress({ stage: 'writing', fraction: 0 });
  const out = join(run.staging, 'out');
  const share = new StatementsProgress();
  // Read from the staging file's footer before the write: wide rows get smaller row groups.
  const rowBytes = await parquetRowBytes(connection, [run.rowsFile]);
  const heads = await withQueryProgress(
    connection,
    (fraction) => progress({ stage: 'writing', fraction: share.fraction(fraction) }),
    () =>
      writeSortedLayout(
        connection,
        {
          source: options.source,
          relation: stagedRowsRelation(options.source, run.rowsFile),
          target: out,
          // An event without a usable timestamp has no day; it is counted as skipped instead.
          where: 'timestamp IS NOT NULL',
          partitionByDay: { filenamePattern: `part-${run.runId}-{i}` },
          provenance: JSON.stringify(run.provenance),
          typedColumns: options.typedColumns ?? true,
          rows: run.provenance.rows,
          rowBytes,
        },
        join(run.staging, 'heads'),
        (i, n) => share.begin(i, n),
      ),
  );
  progress({ stage: 'writing', fraction: 1 });
  failpoint('compact:written', options.source.name);
  return { out, heads };
}

/**
 * One stage's fraction over the statements of its work, each reporting DuckDB's own progress from
 * 0 again: statement `i` of `n` covers [i/n, (i+1)/n), and the fraction given only grows (a
 * progress bar never goes back). A reading of 100 % is left out: it may be the statement before,
 * read after it ended.
 *
 * @example
 * const share = new StatementsProgress();
 * share.begin(1, 3);
 * share.fraction(0.5); // 0.5
 */
export class StatementsProgress {
  private statement = 0;
  private statements = 1;
  private shown = 0;

  /** Statement `statement` (from 0) of `statements` starts now. */
  begin(statement: number, statements: number): void {
    this.statement = statement;
    this.statements = statements;
  }

  /** The stage's fraction for the running statement's own (0 to 1). */
  fraction(reading: number): number {
    if (reading < 1) this.shown = Math.max(this.shown, (this.statement + Math.max(0, reading)) / this.statements);
    return this.shown;
  }
}

/**
 * The head written for each staged data file, by its path, when the write wrote exactly one head
 * per data file (a day's rows in one file, as DuckDB writes a partition): a head is a file's own
 * newest rows, so should a day ever be split over two files, their heads are read from them instead.
 *
 * @example
 * heldHeads('run/out', ['run/out/date=2026-11-21/part-1f-0.parquet'], 'run/heads', new Map([['run/heads/date=2026-11-21/part-1f-0.parquet', 300]]));
 * // Map { 'run/out/date=2026-11-21/part-1f-0.parquet' => { path: 'run/heads/date=2026-11-21/part-1f-0.parquet', rows: 300 } }
 */
export function heldHeads(out: string, staged: readonly string[], headsDir: string, heads: ReadonlyMap<string, number> | null): Map<string, HeldHead> {
  const held = new Map<string, HeldHead>();
  if (heads === null || heads.size !== staged.length) return held;
  for (const file of staged) {
    const path = join(headsDir, relative(out, file));
    const rows = heads.get(path);
    if (rows === undefined) return new Map();
    held.set(file, { path, rows });
  }
  return held;
}

/**
 * Checks the run before it is published: inputs read in place unchanged, and as many rows written
 * as events read. The same count tells each file's arrays flag (`aggregate`: `arraysAggregate`).
 */
async function verifyRun(
  connection: DuckDBConnection,
  readPaths: ReadPaths,
  out: string,
  rows: number,
  aggregate: string,
): Promise<{ staged: string[]; perFile: Map<string, number>; arrays: Map<string, unknown> }> {
  // Files read in place must not have changed while they were read (else the records would lie).
  for (const [path, scan] of readPaths) {
    if (path !== scan.file.path) continue;
    const now = statOrNull(path);
    if (!now || now.size !== scan.file.size || now.mtimeMs !== scan.file.mtimeMs || now.ino !== scan.file.ino) {
      throw new EngineError('storage_failed', `${path} changed while it was compacted; nothing was committed. Run compact again.`);
    }
  }
  const staged = await parquetFilesUnder(out);
  const perFile = new Map<string, number>();
  const arrays = new Map<string, unknown>();
  if (staged.length) {
    for (const row of (await connection.runAndReadAll(`SELECT filename, count(*) AS n${aggregate} FROM read_parquet(${sqlStringList(staged)}, filename = true) GROUP BY filename`)).getRowObjects()) {
      perFile.set(String(row.filename), Number(row.n));
      arrays.set(String(row.filename), row.arrays);
    }
  }
  const written = [...perFile.values()].reduce((n, c) => n + c, 0);
  if (written !== rows) throw new EngineError('storage_failed', `compact: wrote ${written} rows but read ${rows} events; nothing was committed`);
  return { staged, perFile, arrays };
}

/** Publishing: the files move into their day folders, still invisible (no commit names them); returns what the commit adds. */
async function publishRun(
  connection: DuckDBConnection,
  source: SourceDescriptor,
  run: {
    outDir: string;
    out: string;
    staging: string;
    staged: string[];
    perFile: ReadonlyMap<string, number>;
    arrays: ReadonlyMap<string, unknown>;
    typedColumns: boolean;
    heads: ReadonlyMap<string, HeldHead>;
  },
  progress: Progress,
): Promise<DataFile[]> {
  const { outDir, out, staged } = run;
  const add: DataFile[] = [];
  // One placement for the run: each file fsynced once, each folder once, before the commit.
  const placement = new DurablePlacement();
  for (const [i, file] of staged.entries()) {
    const rel = relative(out, file).split(sep).join('/');
    const target = join(outDir, rel);
    const entry: DataFile = { path: rel, rows: run.perFile.get(file) ?? 0, bytes: 0, day: /date=(\d{4}-\d{2}-\d{2})/.exec(rel)?.[1] ?? null };
    Object.assign(entry, typedFieldsWritten(source, run.typedColumns), arraysFreeWritten(source, run.typedColumns, run.arrays.get(file)));
    // Its head (written with it, else read from it) and stored rollups, in place before the file (none is named until the commit).
    Object.assign(entry, await writeCompanions(connection, source, file, outDir, rel, run.staging, { head: run.heads.get(file) ?? true }, placement));
    const [placed] = await placement.place([{ from: file, to: target }]);
    Object.assign(entry, placed);
    add.push(entry);
    progress({ stage: 'publishing', fraction: (i + 1) / staged.length });
    failpoint(`compact:publish:${i + 1}`, source.name);
  }
  await placement.flush();
  return add;
}

async function parquetFilesUnder(dir: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { recursive: true, withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.parquet'))
    .map((e) => join(e.parentPath ?? (e as unknown as { path: string }).path, e.name))
    .sort();
}

/** Reports DuckDB's own progress of a long statement while it runs. */
async function withQueryProgress<T>(connection: DuckDBConnection, report: (fraction: number) => void, work: () => Promise<T>): Promise<T> {
  await connection.run('SET enable_progress_bar = true');
  await connection.run('SET enable_progress_bar_print = false');
  const timer = setInterval(() => {
    const { percentage } = connection.progress;
    if (percentage >= 0) report(Math.min(1, percentage / 100));
  }, 200);
  timer.unref();
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}
