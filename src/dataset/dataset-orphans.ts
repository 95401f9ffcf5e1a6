import { PROVENANCE_KEY } from '../duckdb/parquet-layout';
import { statSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { SourceName } from '../sources/source-descriptor';
import type { DuckDBConnection } from '@duckdb/node-api';
import { openDatabase, type DatabaseSettings } from '../duckdb/open-database';
import { sqlStringList } from '../duckdb/sql-literal';
import { DEFAULT_COMPACTION_DUCKDB } from '../duckdb/compaction-duckdb';
import { appendCommit, readDatasetStateStable, type DataFile, type DatasetState, type InputRecord } from './dataset-log';
import { unlinkIfPresent } from '../util/durable-fs';
import { fileCrc32 } from '../util/crc32';
import { dataPathOfHead, headPathOf, HEADS_DIR, legacyHeadPathOf } from './newest-heads';
import { dataPathOfRollup, rollupPathOf, ROLLUPS_DIR } from './stored-rollups';
import { EngineError } from '../errors';

/** What a data file says of the commit it was written for. */
export interface Provenance {
  /** The run's id (also in the file's name, `part-<run>-<i>.parquet`). */
  run: string;
  /** Rows of the whole run, over all its files. */
  rows: number;
  /** A compaction's inputs (the records its commit adds). */
  inputs?: InputRecord[];
  /** A merge's replaced files (the paths its commit removes). */
  replaces?: string[];
}

/** What `settleOrphans` did with the data files no commit names. */
export interface OrphanOutcome {
  /** Files put back into the log (relative paths): their commit was lost, their provenance verified. */
  restored: string[];
  /** Files deleted: what a killed run left, or copies of events the dataset holds already. */
  deleted: string[];
  /** Files kept as they are, and why: they may hold the only copy of events. */
  kept: Array<{ path: string; reason: string }>;
}

const DATA = /^part-([0-9a-f]{16})-\d+\.parquet$/;
const HEAD = /^_head-(part-[0-9a-f]{16}-\d+\.parquet)$/;

/**
 * Settles the data files no commit names (the caller holds the dataset lock). A run killed
 * before its commit left them, or the log lost the commit that named them (deleted, cut short,
 * garbled). Each run's files are judged by their provenance, never by age:
 *
 * - **restored** in a new commit when the run is whole (its files hold all of its rows) and none
 *   of its inputs is in the dataset already (a merge: when the files it replaced are gone);
 * - **deleted** when the dataset holds their events another way (their inputs were compacted
 *   again, or a merge's replaced files are all there), or when they are an incomplete run's and
 *   the log is intact (a killed run's leftovers);
 * - **kept** otherwise: while the log is damaged, nothing that may be the only copy is deleted.
 *
 * @example
 * const { state, outcome } = await settleOrphans(readDatasetStateStable(root), 'edgeLogs');
 * // outcome.restored: ['date=2026-11-21/part-3f…-0.parquet']
 */
export async function settleOrphans(state: DatasetState, source: SourceName, duckdb: DatabaseSettings = DEFAULT_COMPACTION_DUCKDB): Promise<{ state: DatasetState; outcome: OrphanOutcome }> {
  const outcome: OrphanOutcome = { restored: [], deleted: [], kept: [] };
  const orphans = await orphansOf(state);
  // A commit removed these and their deletion was cut short (a kill after a merge, retention or a
  // repair): their events are where that commit put them, or were dropped on purpose. Never put back.
  const removed = new Set(orphans.data.filter((p) => state.removed.has(p)));
  for (const path of removed) await removeWithHead(state.root, path, outcome);
  const data = orphans.data.filter((p) => !removed.has(p));
  const heads = orphans.heads.filter((h) => !removed.has(dataPathOfHead(h) ?? dataPathOfRollup(h)?.data ?? ''));
  const damaged = state.damage.length > 0;
  if (data.length === 0) {
    // A head alone is of no use: its data file is gone or was never published.
    for (const head of heads) {
      if (damaged) outcome.kept.push({ path: head, reason: 'a head without its data file, kept while the log is damaged' });
      else await remove(state.root, head, outcome);
    }
    return { state, outcome };
  }
  const found = await readProvenance(state.root, data, duckdb);
  const runs = new Map<string, Array<{ path: string; rows: number; provenance: Provenance }>>();
  for (const file of found) {
    if (file.provenance === null) {
      // Written before provenance existed, or unreadable: a killed run's file as far as anyone can tell.
      if (damaged) outcome.kept.push({ path: file.path, reason: `no commit names it and it carries no provenance (${file.problem})` });
      else await removeWithHead(state.root, file.path, outcome);
      continue;
    }
    const list = runs.get(file.provenance.run) ?? [];
    list.push({ path: file.path, rows: file.rows, provenance: file.provenance });
    runs.set(file.provenance.run, list);
  }
  const verdicts = [...runs.values()].map((files) => {
    const provenance = files[0]!.provenance;
    const rows = files.reduce((n, f) => n + f.rows, 0);
    return { files, provenance, rows, verdict: judge(state, provenance, rows === provenance.rows, damaged) };
  });
  // The damage is settled by the restoring commits only when nothing is left kept.
  const settles = damaged && verdicts.every((v) => v.verdict !== 'keep') ? state.damage.map((d) => commitNumberOf(d.path)).filter((n): n is number => n !== null) : [];
  let current = state;
  for (const { files, provenance, rows, verdict } of verdicts) {
    if (verdict === 'delete') {
      for (const f of files) await removeWithHead(state.root, f.path, outcome);
    } else if (verdict === 'keep') {
      const reason =
        rows === provenance.rows
          ? 'its events may be in the dataset another way; kept while the log is damaged'
          : `its run is incomplete (${rows} of ${provenance.rows} rows); kept while the log is damaged`;
      for (const f of files) outcome.kept.push({ path: f.path, reason });
    } else {
      const add: DataFile[] = [];
      for (const f of files) add.push(await dataFileOf(state.root, f.path, f.rows, duckdb));
      const committed = await appendCommit(current, {
        source,
        add,
        remove: (provenance.replaces ?? []).filter((p) => current.files.has(p)),
        inputs: provenance.inputs ?? [],
        ...(settles.length ? { settles } : {}),
      });
      if (!committed) throw new EngineError('storage_failed', `${state.root}: another writer committed at the same time; nothing was restored`);
      outcome.restored.push(...files.map((f) => f.path));
      current = readDatasetStateStable(state.root);
    }
  }
  for (const head of heads) {
    // A restored file's companions were put back with it (dataFileOf).
    const data = dataPathOfHead(head) ?? dataPathOfRollup(head)?.data;
    if (found.some((f) => f.path === data) && existsOnDisk(join(current.root, data!)) && current.files.has(data!)) continue;
    if (damaged) outcome.kept.push({ path: head, reason: 'a head without its data file, kept while the log is damaged' });
    else await remove(state.root, head, outcome);
  }
  return { state: current, outcome };
}

/** restore, delete or keep the files of one run (see `settleOrphans`). */
function judge(state: DatasetState, provenance: Provenance, whole: boolean, damaged: boolean): 'restore' | 'delete' | 'keep' {
  if (provenance.replaces) {
    const present = provenance.replaces.filter((p) => existsOnDisk(join(state.root, p)));
    // Every file it replaced is gone: they were deleted after a merge commit that is lost since,
    // so this file holds the only copy of their events (those still listed leave the log with it).
    if (present.length === 0) return whole ? 'restore' : damaged ? 'keep' : 'delete';
    // Every one still listed and on disk: its events are there already.
    if (present.length === provenance.replaces.length && provenance.replaces.every((p) => state.files.has(p))) return 'delete';
    return damaged ? 'keep' : 'delete';
  }
  const covered = (provenance.inputs ?? []).some((r) => state.inputs.some((s) => s.path === r.path && s.start < r.end && r.start < s.end));
  if (covered) return 'delete';
  if (whole) return 'restore';
  return damaged ? 'keep' : 'delete';
}

function existsOnDisk(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The commit number of a damaged log entry's path (`…/00000000000000000002.json`), else null. */
function commitNumberOf(path: string): number | null {
  const m = /(\d{20})\.json$/.exec(path);
  return m ? Number(m[1]) : null;
}

/**
 * Data files, and companions (heads in the day folders or `_heads/`, stored rollups in `_rollups/`)
 * that no commit names (relative paths). A stored rollup of a data file put back into the log is
 * one of them: it is removed, and the next compaction writes it again (backfill-rollups.ts).
 */
export async function orphansOf(state: DatasetState): Promise<{ data: string[]; heads: string[] }> {
  const data: string[] = [];
  const heads: string[] = [];
  for (const entry of await readdir(state.root, { withFileTypes: true })) {
    if (!entry.isDirectory() || !/^date=\d{4}-\d{2}-\d{2}$/.test(entry.name)) continue;
    for (const name of await readdir(join(state.root, entry.name))) {
      const rel = `${entry.name}/${name}`;
      if (DATA.test(name) && !state.files.has(rel)) data.push(rel);
      const head = HEAD.exec(name);
      if (head && !state.files.has(`${entry.name}/${head[1]}`)) heads.push(rel);
    }
  }
  // Heads in their own folder (`_heads/date=…/`, newest-heads.ts).
  for (const entry of await readdir(join(state.root, HEADS_DIR), { withFileTypes: true }).catch(() => [])) {
    if (!entry.isDirectory() || !/^date=\d{4}-\d{2}-\d{2}$/.test(entry.name)) continue;
    for (const name of await readdir(join(state.root, HEADS_DIR, entry.name))) {
      if (DATA.test(name) && !state.files.has(`${entry.name}/${name}`)) heads.push(`${HEADS_DIR}/${entry.name}/${name}`);
    }
  }
  // Stored rollups (`_rollups/<rollup>/date=…/`, stored-rollups.ts) their data file's entry does not name.
  for (const rollup of await readdir(join(state.root, ROLLUPS_DIR), { withFileTypes: true }).catch(() => [])) {
    if (!rollup.isDirectory()) continue;
    for (const day of await readdir(join(state.root, ROLLUPS_DIR, rollup.name), { withFileTypes: true }).catch(() => [])) {
      if (!day.isDirectory() || !/^date=\d{4}-\d{2}-\d{2}$/.test(day.name)) continue;
      for (const name of await readdir(join(state.root, ROLLUPS_DIR, rollup.name, day.name))) {
        const rel = `${ROLLUPS_DIR}/${rollup.name}/${day.name}/${name}`;
        if (DATA.test(name) && state.files.get(`${day.name}/${name}`)?.rollups?.[rollup.name]?.path !== rel) heads.push(rel);
      }
    }
  }
  return { data: data.sort(), heads: heads.sort() };
}

/** Each orphan's rows and provenance, read one file at a time (one damaged file spoils no other). */
async function readProvenance(root: string, paths: string[], duckdb: DatabaseSettings): Promise<Array<{ path: string; rows: number; provenance: Provenance | null; problem: string }>> {
  const { connection, close } = await openDatabase(duckdb);
  try {
    const out = [];
    for (const path of paths) {
      const file = sqlStringList([join(root, path)]);
      try {
        const rows = Number((await connection.runAndReadAll(`SELECT sum(num_rows) AS n FROM parquet_file_metadata(${file})`)).getRowObjects()[0]?.n ?? 0);
        const provenance = await provenanceOf(connection, join(root, path));
        out.push({ path, rows, provenance, problem: provenance ? '' : 'written before provenance existed' });
      } catch (error) {
        out.push({ path, rows: 0, provenance: null, problem: `unreadable: ${String((error as Error)?.message ?? error).split('\n')[0]}` });
      }
    }
    return out;
  } finally {
    await close();
  }
}

/**
 * What a data file says of the commit it was written for (its key-value metadata), or null when it
 * says nothing (written before provenance existed). Throws when its footer cannot be read.
 *
 * @example
 * const provenance = await provenanceOf(connection, '/data/edgeLogs/parquet/date=2026-11-21/part-3f…-0.parquet');
 */
export async function provenanceOf(connection: DuckDBConnection, path: string): Promise<Provenance | null> {
  const kv = (await connection.runAndReadAll(`SELECT decode(value) AS v FROM parquet_kv_metadata(${sqlStringList([path])}) WHERE decode(key) = '${PROVENANCE_KEY}'`)).getRowObjects()[0];
  return kv ? parseProvenance(String(kv.v)) : null;
}

function parseProvenance(text: string): Provenance | null {
  try {
    const value = JSON.parse(text) as Provenance;
    return typeof value?.run === 'string' && Number.isSafeInteger(value.rows) ? value : null;
  } catch {
    return null;
  }
}

/** The log's entry for a restored file: its size, rows, day, and its head when that is there. */
async function dataFileOf(root: string, path: string, rows: number, duckdb: DatabaseSettings): Promise<DataFile> {
  // Its bytes now are all there is to vouch for it: their CRC-32 is recorded from here on.
  const entry: DataFile = {
    path,
    rows,
    bytes: (await stat(join(root, path))).size,
    crc32: await fileCrc32(join(root, path)),
    day: /date=(\d{4}-\d{2}-\d{2})/.exec(path)?.[1] ?? null,
  };
  const head = headPathOf(path).split('\\').join('/');
  const headStats = await stat(join(root, head)).catch(() => null);
  if (headStats) {
    const { connection, close } = await openDatabase(duckdb);
    try {
      const n = (await connection.runAndReadAll(`SELECT sum(num_rows) AS n FROM parquet_file_metadata(${sqlStringList([join(root, head)])})`)).getRowObjects()[0]?.n;
      entry.head = { path: head, rows: Number(n ?? 0), bytes: headStats.size, crc32: await fileCrc32(join(root, head)) };
    } catch {
      // An unreadable head is left out: logs.all reads the data file instead.
    } finally {
      await close();
    }
  }
  // Its stored rollups, likewise (one left out is an orphan, written again by the next compaction).
  for (const rollup of await readdir(join(root, ROLLUPS_DIR)).catch(() => [])) {
    const companion = rollupPathOf(path, rollup).split('\\').join('/');
    const stats = await stat(join(root, companion)).catch(() => null);
    if (!stats) continue;
    const { connection, close } = await openDatabase(duckdb);
    try {
      const n = (await connection.runAndReadAll(`SELECT sum(num_rows) AS n FROM parquet_file_metadata(${sqlStringList([join(root, companion)])})`)).getRowObjects()[0]?.n;
      // Its definition is unknown: compaction computes it again (backfill-rollups.ts) before it is read.
      (entry.rollups ??= {})[rollup] = { path: companion, rows: Number(n ?? 0), bytes: stats.size, crc32: await fileCrc32(join(root, companion)) };
    } catch {
      // Unreadable: left out.
    } finally {
      await close();
    }
  }
  return entry;
}

async function removeWithHead(root: string, path: string, outcome: OrphanOutcome): Promise<void> {
  await remove(root, path, outcome);
  for (const head of [headPathOf(path), legacyHeadPathOf(path)].map((p) => p.split('\\').join('/'))) {
    if (existsOnDisk(join(root, head))) await remove(root, head, outcome);
  }
  for (const rollup of await readdir(join(root, ROLLUPS_DIR)).catch(() => [])) {
    const companion = rollupPathOf(path, rollup).split('\\').join('/');
    if (existsOnDisk(join(root, companion))) await remove(root, companion, outcome);
  }
}

async function remove(root: string, path: string, outcome: OrphanOutcome): Promise<void> {
  await unlinkIfPresent(join(root, path));
  outcome.deleted.push(path);
}

export { PROVENANCE_KEY };
