import { existsSync, readdirSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import type { DuckDBConnection } from '@duckdb/node-api';
import { dirname, join, resolve } from 'node:path';
import type { SourceDescriptor, SourceName } from '../sources/source-descriptor';
import type { SourceSet } from '../sources/source-set';
import { openDatabase, type DatabaseSettings } from '../duckdb/open-database';
import { sqlStringList } from '../duckdb/sql-literal';
import { atRetryCeiling, DEFAULT_COMPACTION_DUCKDB } from '../duckdb/compaction-duckdb';
import { appendCommit, readDatasetStateStable, type DataFile, type DatasetState } from '../dataset/dataset-log';
import { companionPathsOf, writeCompanions } from '../dataset/stored-rollups';
import { backfillRollups } from '../compaction/backfill-rollups';
import { rebuildFromInputs } from '../compaction/rebuild-from-inputs';
import { withDatasetLock } from '../dataset/dataset-lock';
import { orphansOf, settleOrphans } from '../dataset/dataset-orphans';
import { fsyncDir } from '../util/durable-fs';
import { FileChecks } from '../files/file-checks';
import { datasetDir } from './managed-inputs';
import { mayBeMarker, parseMarkerLine } from '../wal-format/commit-marker';
import { lockDataDir } from '../dataset/data-dir-lock';
import { segmentSeqOf } from './wal/segment-name';
import { walDir } from './wal/wal-set';
import { BUILT_IN_SOURCE_SET } from '../sources/built-ins';
import { EngineError, InvalidOptionError } from '../errors';
import { InternalError } from '../util/internal-error';

/** One thing found wrong in a data dir. */
export interface DataDirProblem {
  source: SourceName;
  /** Stable kinds: a WAL segment, the commit log, a committed file, a file no commit names. */
  kind: 'wal_segment' | 'commit_log' | 'committed_file' | 'orphan_file';
  path: string;
  message: string;
}

/** What `checkDataDir` found, and with `repair`, what it did. */
export interface DataDirReport {
  dataDir: string;
  /** Per source: WAL segments, commits and data files looked at. */
  checked: Array<{ source: SourceName; segments: number; commits: number; files: number }>;
  /** What is wrong (after the repair, when one ran). */
  problems: DataDirProblem[];
  /** What the repair did, one sentence each. */
  repaired: string[];
}

/**
 * Verifies a managed data dir: each WAL segment readable and ending with a commit marker, each
 * dataset's commit log intact (checksums, no missing entry), every committed data file (and head)
 * readable whole, and the data files no commit names. With `repair` (it takes the data dir's
 * lock: no server may run on it), restores what can be restored and says what it did: files of
 * lost commits go back into the log when their provenance verifies (see dataset-orphans.ts),
 * committed files that cannot be read move to `<dataset>/_quarantine/` and leave the log, and
 * the log's remaining damage is acknowledged so queries stop reporting it. Every source the data
 * dir keeps is checked (each folder holding a `wal` or `parquet` folder: user sources too, without
 * their descriptors), and the built-ins always.
 *
 * @example
 * const report = await checkDataDir('./data', { repair: true });
 * for (const line of report.repaired) console.log(line);
 * if (report.problems.length) process.exitCode = 1;
 */
export async function checkDataDir(
  dataDir: string,
  options: {
    repair?: boolean;
    duckdb?: DatabaseSettings;
    /** The sources whose descriptors are known (the built-ins by default): their damage can be written again, not only set aside. */
    sources?: SourceSet;
  } = {},
): Promise<DataDirReport> {
  const dir = resolve(dataDir);
  if (!existsSync(dir)) throw new InvalidOptionError('dataDir', `${dir} does not exist.`);
  const lock = options.repair ? await lockDataDir(dir, 'check --repair') : null;
  // A repair runs once, without compaction's retry at twice the limit: it starts where that retry ends.
  const duckdb = options.duckdb ?? atRetryCeiling(DEFAULT_COMPACTION_DUCKDB);
  const report: DataDirReport = { dataDir: dir, checked: [], problems: [], repaired: [] };
  try {
    const known = options.sources ?? BUILT_IN_SOURCE_SET;
    for (const source of sourcesKeptIn(dir, known)) {
      const segments = await checkSegments(source, walDir(dir, source), report);
      const root = datasetDir(dir, source);
      if (!existsSync(join(root, '_compact'))) {
        report.checked.push({ source, segments, commits: 0, files: 0 });
        continue;
      }
      if (options.repair) await withDatasetLock(root, 'check --repair', () => repairDataset(root, source, known.find(source), duckdb, report));
      const state = readDatasetStateStable(root);
      report.checked.push({ source, segments, commits: state.seq, files: state.files.size });
      for (const d of state.damage) report.problems.push({ source, kind: 'commit_log', path: d.path, message: d.message });
      for (const bad of await unreadableFiles(state, duckdb)) report.problems.push({ source, kind: 'committed_file', ...bad });
      const { data, heads } = await orphansOf(state);
      for (const path of [...data, ...heads]) {
        report.problems.push({
          source,
          kind: 'orphan_file',
          path: join(root, path),
          message: 'no commit names it (a compaction running now, or a lost commit: check --repair puts it back when it verifies)',
        });
      }
    }
  } finally {
    await lock?.release();
  }
  return report;
}

/**
 * The sources whose folders a data dir holds (`<dataDir>/<source>/wal` or `.../parquet`), after
 * the known ones: checking needs only their names, so a source declared elsewhere (a `--config`, a
 * preset) is checked without its descriptor; writing its damaged files again needs it.
 */
function sourcesKeptIn(dir: string, known: SourceSet): SourceName[] {
  const kept = readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('.') && (existsSync(join(dir, e.name, 'wal')) || existsSync(join(dir, e.name, 'parquet'))))
    .map((e) => e.name)
    .sort();
  return [...new Set([...known.names, ...kept])];
}

/** Each segment: readable, and ending with a commit marker (else recovery cuts a torn tail at the next start). */
async function checkSegments(source: SourceName, dir: string, report: DataDirReport): Promise<number> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => segmentSeqOf(n) !== null).sort();
  } catch {
    return 0;
  }
  for (const name of names) {
    const path = join(dir, name);
    try {
      const handle = await open(path, 'r');
      try {
        const { size } = await handle.stat();
        if (size === 0) continue;
        const tail = Buffer.alloc(Math.min(size, 4096));
        await handle.read(tail, 0, tail.length, size - tail.length);
        const lines = tail.toString('latin1').split('\n');
        const last = lines.at(-1) === '' ? lines.at(-2) : undefined;
        if (last === undefined || !mayBeMarker(Buffer.from(last, 'latin1')) || parseMarkerLine(last) === null) {
          report.problems.push({ source, kind: 'wal_segment', path, message: 'does not end with a commit marker: a torn write, cut off by recovery at the next start' });
        }
      } finally {
        await handle.close();
      }
    } catch (error) {
      report.problems.push({ source, kind: 'wal_segment', path, message: `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})` });
    }
  }
  return names.length;
}

/**
 * Committed data files, heads and stored rollups that cannot be read whole, or whose bytes are not
 * those their commit recorded (CRC-32: damage of the same size too). A file whose CRC-32 matches
 * is as it was written; one without (written before checksums) is decoded whole (absolute paths).
 */
async function unreadableFiles(state: DatasetState, duckdb: DatabaseSettings): Promise<Array<{ path: string; message: string }>> {
  const checks = new FileChecks();
  const bad: Array<{ path: string; message: string }> = [];
  const { connection, close } = await openDatabase(duckdb);
  try {
    for (const file of state.files.values()) {
      const parts = [{ path: file.path, bytes: file.bytes, crc32: file.crc32 }, ...companionsOf(file)];
      for (const part of parts) {
        const path = join(state.root, part.path);
        const listed = { path, kind: 'parquet' as const, size: part.bytes, mtimeMs: 0, ino: 0, dataset: state.root, ...(part.crc32 === undefined ? {} : { crc32: part.crc32 }) };
        const problem = (await checks.check(listed)) ?? (await checks.verify(listed));
        if (problem) {
          bad.push({ path, message: `${problem.reason}: ${problem.message}` });
          continue;
        }
        if (part.crc32 !== undefined) continue;
        try {
          await connection.run(`SELECT min(hash(COLUMNS(*))) FROM read_parquet(${sqlStringList([path])})`);
        } catch (error) {
          bad.push({
            path,
            message: `unreadable_by_engine: ${String((error as Error)?.message ?? error)
              .split('\n')[0]!
              .replaceAll(path, 'the file')}`,
          });
        }
      }
    }
  } finally {
    await close();
  }
  return bad;
}

/** A data file's head and stored rollups as committed (relative paths). */
function companionsOf(file: DataFile): Array<{ path: string; bytes: number; crc32?: number }> {
  return [...(file.head ? [file.head] : []), ...Object.values(file.rollups ?? {})];
}

/** A data file's entry without the companions (head, stored rollups) named in `lost`. */
function withoutCompanions(file: DataFile, lost: readonly string[]): DataFile {
  const { head, rollups, ...rest } = file;
  const kept = Object.entries(rollups ?? {}).filter(([, r]) => !lost.includes(r.path));
  return { ...rest, ...(head && !lost.includes(head.path) ? { head } : {}), ...(kept.length ? { rollups: Object.fromEntries(kept) } : {}) };
}

/**
 * The repair of one dataset (under its lock): orphans settled; damaged data files written again
 * from their inputs where those are still there, the others quarantined and out of the log; damaged
 * heads and stored rollups written again from their data files; damage acknowledged; stored
 * rollups of another definition computed again.
 */
async function repairDataset(root: string, source: SourceName, descriptor: SourceDescriptor | undefined, duckdb: DatabaseSettings, report: DataDirReport): Promise<void> {
  const { state: settled, outcome } = await settleOrphans(readDatasetStateStable(root), source, duckdb);
  if (outcome.restored.length) report.repaired.push(`${source}: put ${outcome.restored.length} file(s) of lost commits back into the log: ${outcome.restored.join(', ')}`);
  if (outcome.deleted.length)
    report.repaired.push(`${source}: deleted ${outcome.deleted.length} file(s) no commit named whose events the dataset holds already (or a killed run's): ${outcome.deleted.join(', ')}`);
  const state = settled;
  const bad = (await unreadableFiles(state, duckdb)).map((b) =>
    b.path
      .slice(root.length + 1)
      .split('\\')
      .join('/'),
  );
  const lostData = bad.filter((p) => state.files.has(p));
  const lostCompanions = bad.filter((p) => !state.files.has(p));
  const unsettled = state.damage
    .map((d) => /(\d{20})\.json$/.exec(d.path))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]));
  if (lostData.length || lostCompanions.length || unsettled.length) {
    const staging = join(root, `.compact-${randomBytes(8).toString('hex')}.tmp`);
    const { connection, close } = await openDatabase(duckdb);
    try {
      await repairFiles(connection, state, source, descriptor, { lostData, lostCompanions, unsettled, staging }, report);
    } finally {
      await close();
      await rm(staging, { recursive: true, force: true });
    }
  }
  // Rollups by their current definitions need the source's descriptor (without it, the next compaction by a process that has it).
  const recomputed = descriptor ? await backfillRollups(readDatasetStateStable(root), descriptor, duckdb) : [];
  if (recomputed.length) report.repaired.push(`${source}: computed the stored rollups of ${recomputed.length} file(s) by their current definitions`);
}

/** Writes again what can be, quarantines the rest, and commits it all at once (see `repairDataset`). */
async function repairFiles(
  connection: DuckDBConnection,
  state: DatasetState,
  source: SourceName,
  descriptor: SourceDescriptor | undefined,
  damage: { lostData: string[]; lostCompanions: string[]; unsettled: number[]; staging: string },
  report: DataDirReport,
): Promise<void> {
  const root = state.root;
  const { lostData, lostCompanions, unsettled, staging } = damage;
  // Rebuilt before anything moves: the damaged file's footer may still say which inputs it came from.
  const rebuilt = new Map<string, DataFile>();
  for (const [i, path] of lostData.entries()) {
    const entry = descriptor && (await rebuildFromInputs(connection, state, descriptor, state.files.get(path)!, join(staging, `rebuild-${i}`)).catch(() => null));
    if (entry) rebuilt.set(path, entry);
  }
  // A lost data file's companions go with it (alone they are of no use, and no commit would name them).
  const companionsOfLost = lostData.flatMap((p) => companionPathsOf(state.files.get(p)!));
  for (const path of [...lostData, ...lostCompanions, ...companionsOfLost]) {
    const from = join(root, path);
    if (!existsSync(from)) continue;
    const to = join(root, '_quarantine', path);
    await mkdir(dirname(to), { recursive: true });
    await rename(from, to);
    await fsyncDir(dirname(to));
  }
  // Heads and stored rollups are their data file's rows, computed again (dropped from the entry when that fails).
  const rewritten: DataFile[] = [];
  let written = 0;
  for (const file of [...state.files.values()].filter((f) => !lostData.includes(f.path) && companionPathsOf(f).some((c) => lostCompanions.includes(c)))) {
    const kept = withoutCompanions(file, lostCompanions);
    const rollups = Object.entries(file.rollups ?? {})
      .filter(([, r]) => lostCompanions.includes(r.path))
      .map(([name]) => name);
    try {
      if (!descriptor) throw new InternalError('not_declared', 'its source is not declared here');
      const again = await writeCompanions(connection, descriptor, join(root, file.path), root, file.path, staging, {
        head: file.head !== undefined && lostCompanions.includes(file.head.path),
        rollups,
      });
      written += (again.head ? 1 : 0) + Object.keys(again.rollups ?? {}).length;
      rewritten.push({ ...kept, ...(again.head ? { head: again.head } : {}), ...(again.rollups || kept.rollups ? { rollups: { ...kept.rollups, ...again.rollups } } : {}) });
    } catch {
      rewritten.push(kept);
    }
  }
  const committed = await appendCommit(state, {
    source,
    add: [...rebuilt.values(), ...rewritten],
    remove: [...lostData, ...rewritten.map((f) => f.path)],
    inputs: [],
    ...(unsettled.length ? { settles: unsettled } : {}),
  });
  if (!committed) throw new EngineError('storage_failed', `${root}: another writer committed at the same time; run check --repair again`);
  const lost = lostData.filter((p) => !rebuilt.has(p));
  if (rebuilt.size)
    report.repaired.push(`${source}: wrote ${rebuilt.size} damaged file(s) again from their inputs (the damaged ones moved to ${join(root, '_quarantine')}): ${[...rebuilt.keys()].join(', ')}`);
  if (lost.length)
    report.repaired.push(
      `${source}: took ${lost.length} missing or unreadable file(s) out of the log, the unreadable ones moved to ${join(root, '_quarantine')} (their events are lost unless restored from a backup): ${lost.join(', ')}`,
    );
  if (lostCompanions.length)
    report.repaired.push(
      `${source}: wrote ${written} of ${lostCompanions.length} damaged head(s) or stored rollup(s) again from their data files (the damaged ones moved to ${join(root, '_quarantine')}; queries read the data files of the others)`,
    );
  if (unsettled.length) report.repaired.push(`${source}: acknowledged the damage of commit(s) ${unsettled.join(', ')}: what could be restored was; queries stop reporting it`);
}
