import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { SourceName } from '../engine';
import { listFiles } from './list-files';
import { openDatabase, type DatabaseSettings } from './open-database';
import { parquetLayoutCopy } from './parquet-layout';
import { sourceRelation } from './source-relations';
import { sqlString } from './sql-literal';

/** Options of `compactLogs`. */
export interface CompactOptions {
  /** Which log the files hold. */
  source: SourceName;
  /** Glob or list of globs of the NDJSON files to compact (Parquet inputs are ignored). */
  inputs: string | readonly string[];
  /** Folder of the Parquet dataset (`date=YYYY-MM-DD/part-*.parquet` below it). */
  outDir: string;
  /** Delete the NDJSON inputs, only after the written rows were counted back and match. */
  deleteSource?: boolean;
  /** Called as the work advances; `fraction` goes from 0 to 1 within each stage. */
  onProgress?: (progress: { stage: CompactStage; fraction: number }) => void;
  /** Stops the run between steps (and interrupts DuckDB); the inputs are never touched then. */
  signal?: AbortSignal;
  duckdb?: DatabaseSettings;
}

export type CompactStage = 'listing' | 'writing' | 'verifying' | 'publishing' | 'deleting';

/** What `compactLogs` did. */
export interface CompactResult {
  /** NDJSON files read. */
  inputFiles: string[];
  /** Events written (each exactly once). */
  rows: number;
  /** Lines that were not events (broken JSON, no timestamp); their files are never deleted. */
  skippedLines: number;
  /** Parquet files of this run, relative to `outDir`. */
  files: string[];
  /** True when these exact inputs were compacted before: nothing was written again. */
  alreadyCompacted: boolean;
  /** True when the inputs were deleted. */
  deletedSource: boolean;
}

interface Manifest {
  source: SourceName;
  inputs: Array<{ path: string; size: number; mtimeMs: number }>;
  rows: number;
  skippedLines: number;
  files: string[];
}

/**
 * Rewrites NDJSON logs as Parquet in the fast layout: zstd, row groups of 100k rows, sorted by
 * project then timestamp (newest first, so top-N queries stop early), one folder per UTC day (`date=YYYY-MM-DD/`). Crash-safe: it writes to a
 * temporary folder, counts the rows back, and only then renames the files into place and writes
 * a manifest. Idempotent: the same inputs (path, size, mtime) are recognised by their manifest
 * and not written twice.
 *
 * @example
 * await compactLogs({ source: 'edgeLogs', inputs: 'logs/edge/*.ndjson', outDir: 'logs/edge-parquet' });
 * const ep = await createEndpoints({ sources: { edgeLogs: 'logs/edge-parquet/**\/*.parquet' } });
 */
export async function compactLogs(options: CompactOptions): Promise<CompactResult> {
  const outDir = resolve(options.outDir);
  const progress = options.onProgress ?? (() => undefined);
  const { instance, connection } = await openDatabase(options.duckdb);
  const abort = () => connection.interrupt();
  options.signal?.addEventListener('abort', abort);
  try {
    checkAborted(options.signal);
    progress({ stage: 'listing', fraction: 0 });
    const globs = typeof options.inputs === 'string' ? [options.inputs] : [...options.inputs];
    const { ndjson } = await listFiles(connection, globs);
    const inputs = await Promise.all(ndjson.map(async (path) => {
      const s = await stat(path);
      return { path: resolve(path), size: s.size, mtimeMs: s.mtimeMs };
    }));
    progress({ stage: 'listing', fraction: 1 });
    const empty: CompactResult = { inputFiles: [], rows: 0, skippedLines: 0, files: [], alreadyCompacted: false, deletedSource: false };
    if (!inputs.length) return empty;

    const runId = createHash('sha256').update(JSON.stringify([options.source, inputs])).digest('hex').slice(0, 16);
    const manifestPath = join(outDir, '_compact', `${runId}.json`);
    const known = await readManifest(manifestPath);
    if (known && known.files.every((f) => existsSync(join(outDir, f)))) {
      const deletedSource = await maybeDelete(options, known.skippedLines, inputs.map((i) => i.path), progress);
      return { inputFiles: ndjson, rows: known.rows, skippedLines: known.skippedLines, files: known.files, alreadyCompacted: true, deletedSource };
    }

    const staging = join(outDir, `.compact-${runId}.tmp`);
    await rm(staging, { recursive: true, force: true });
    await mkdir(staging, { recursive: true });
    try {
      const relation = sourceRelation(options.source, { ndjson, parquet: [], parquetTypes: new Map() });
      const [counted] = (await connection.runAndReadAll(
        `SELECT count(*) FILTER (WHERE timestamp IS NOT NULL) AS rows, count(*) FILTER (WHERE timestamp IS NULL) AS skipped FROM (${relation})`,
      )).getRowObjects();
      const rows = Number(counted?.rows ?? 0);
      const skippedLines = Number(counted?.skipped ?? 0);
      checkAborted(options.signal);

      progress({ stage: 'writing', fraction: 0 });
      // A sort of millions of events may not fit in memory: spill inside the staging folder.
      await connection.run(`SET temp_directory = ${sqlString(join(staging, '.spill'))}`);
      await withQueryProgress(connection, (fraction) => progress({ stage: 'writing', fraction }), () => connection.run(
        parquetLayoutCopy({
          source: options.source,
          ndjson,
          target: staging,
          // An event without a usable timestamp has no day; it is counted as skipped instead.
          where: 'timestamp IS NOT NULL',
          partitionByDay: { filenamePattern: `part-${runId}-{i}` },
        }),
      ));
      progress({ stage: 'writing', fraction: 1 });
      checkAborted(options.signal);

      progress({ stage: 'verifying', fraction: 0 });
      const files = (await parquetFilesUnder(staging)).map((f) => relative(staging, f));
      const [written] = files.length
        ? (await connection.runAndReadAll(`SELECT count(*) AS n FROM read_parquet(${sqlString(join(staging, '**', '*.parquet'))})`)).getRowObjects()
        : [{ n: 0 }];
      if (Number(written?.n ?? 0) !== rows) {
        throw new Error(`compact: wrote ${Number(written?.n ?? 0)} rows but read ${rows}; nothing was published`);
      }
      progress({ stage: 'verifying', fraction: 1 });
      checkAborted(options.signal);

      // Publishing: each rename is atomic; files of an interrupted run carry the same names, so
      // a second run replaces them instead of adding duplicates. The manifest is written last.
      for (const [i, file] of files.entries()) {
        checkAborted(options.signal);
        await mkdir(dirname(join(outDir, file)), { recursive: true });
        await rename(join(staging, file), join(outDir, file));
        progress({ stage: 'publishing', fraction: (i + 1) / files.length });
      }
      const manifest: Manifest = { source: options.source, inputs, rows, skippedLines, files };
      await mkdir(dirname(manifestPath), { recursive: true });
      await writeFile(`${manifestPath}.tmp`, JSON.stringify(manifest, null, 2));
      await rename(`${manifestPath}.tmp`, manifestPath);

      const deletedSource = await maybeDelete(options, skippedLines, inputs.map((i) => i.path), progress);
      return { inputFiles: ndjson, rows, skippedLines, files, alreadyCompacted: false, deletedSource };
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  } finally {
    options.signal?.removeEventListener('abort', abort);
    connection.closeSync();
    instance.closeSync();
  }
}

async function maybeDelete(
  options: CompactOptions,
  skippedLines: number,
  paths: string[],
  progress: NonNullable<CompactOptions['onProgress']>,
): Promise<boolean> {
  // Skipped lines exist only in the source: deleting it would lose them.
  if (!options.deleteSource || skippedLines > 0) return false;
  checkAborted(options.signal);
  for (const [i, path] of paths.entries()) {
    await unlink(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
    progress({ stage: 'deleting', fraction: (i + 1) / paths.length });
  }
  return true;
}

async function readManifest(path: string): Promise<Manifest | null> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as Manifest;
  } catch {
    return null;
  }
}

async function parquetFilesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
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

function checkAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new Error('compact: aborted; the inputs are untouched', { cause: signal.reason });
}
