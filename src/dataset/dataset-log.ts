import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { SourceName } from '../sources/source-descriptor';
import { unlinkIfPresent, writeFileAtomic } from '../util/durable-fs';
import { systemNow, systemMs } from '../time/clock';
import { failpoint } from '../util/failpoint';

/**
 * A compacted dataset is a folder with Parquet files in `date=YYYY-MM-DD/` folders and a log of
 * commits in `_compact/`. The log is the truth: a Parquet file is part of the dataset only from
 * the commit that adds it, and that same commit records which inputs (byte ranges of NDJSON files)
 * its rows came from. A query reads the log first, so at every instant it sees either the inputs
 * or the Parquet of a commit, never both and never neither (docs/semantics.md, "Compacted datasets").
 */
export const DATASET_LOG_DIR = '_compact';

const FORMAT = 'log-endpoints.compact/2';
/**
 * Each log file is `{"sha256":"<hex of the entry's text>","entry":<the entry>}`, so an entry cut
 * short or garbled is told apart from a valid one (files written before checksums hold the bare
 * entry and are still read).
 */
const SEALED = /^\{"sha256":"([0-9a-f]{64})","entry":/;
/** The number of the newest commit, kept beside the log: a newest commit that disappears is noticed. */
const NEWEST = 'NEWEST';
const COMMIT = /^(\d{20})\.json$/;
const CHECKPOINT = /^(\d{20})\.checkpoint\.json$/;
/** Commits between checkpoints: a reader folds at most this many files after the newest checkpoint. */
const CHECKPOINT_EVERY = 32;

/** A Parquet file of the dataset. */
export interface DataFile {
  /** Relative to the dataset folder, '/'-separated: `date=2026-11-21/part-….parquet`. */
  path: string;
  rows: number;
  bytes: number;
  /**
   * CRC-32 of the file's bytes as written: a reader compares it before it uses the file's rows,
   * so bytes changed on disk (at the same size too) are seen (docs/damaged-data.md). Absent in
   * entries written before it existed.
   */
  crc32?: number;
  /** The UTC day its events are in (from its `date=` folder), or null. */
  day: string | null;
  /** Its head (gateway log only): the newest rows of each project, for logs.all (see newest-heads.ts). */
  head?: CompanionFile;
  /**
   * Its stored rollups by rollup name (stored-rollups.ts): each rollup's SQL over this file alone.
   * `writtenMs` (when it was written) tells a rewrite at the same path (a backfill after a repair)
   * from the version a reader judged before; `definition` is the hash of the rollup's definition
   * it was computed by (`rollupDefinition`): one of another definition is never read. `leftOut`
   * (the typed fields' hour counts and the pairs' counts only, when some are) names the fields or
   * pairs whose values vary too much in this file to be counted (src/sources/typed-hourly.ts): a
   * reader reads the file's rows for them.
   */
  rollups?: Record<string, CompanionFile & { writtenMs?: number; definition?: string; leftOut?: string[] }>;
  /**
   * The typed fields (its source's `typedFields` and those its dataset discovered: `typedPaths`,
   * src/sources/typed-fields.ts) it holds as columns of their own. Absent in entries written before they existed, or without them: a reader then
   * computes them from the file's `metadata`.
   */
  typedFields?: string[];
  /**
   * Whether no row of it has its arrays flag (`arrays:metadata`) true, as its writer found it when
   * it wrote the file: present only with `typedFields` (the files that have the flag). A query
   * then reads the flag as the constant false without reading the file's footer. Absent in entries
   * written before it existed and in those whose writer did not find it: a reader then asks the
   * footer (src/duckdb/arrays-free-files.ts).
   */
  arraysFree?: boolean;
}

/** A file written beside a data file from its rows (a head, a stored rollup), with its own CRC-32. */
export interface CompanionFile {
  path: string;
  rows: number;
  bytes: number;
  crc32?: number;
}

/**
 * Bytes [start, end) of an input file whose events are in the dataset. A file is recognised by its
 * content, not only its path: `sha256` is of the whole prefix [0, end), `head` of its first
 * `headBytes` bytes and `tail` of the 4 KiB before `end` (what a query checks cheaply).
 */
export interface InputRecord {
  path: string;
  start: number;
  end: number;
  sha256: string;
  head: string;
  headBytes: number;
  tail: string;
  /** A compressed file is recorded whole (its bytes are compressed bytes). */
  compressed: boolean;
  /** Events of the range written to the dataset. */
  rows: number;
  /** Lines of the range that are not events (broken JSON, no usable timestamp): only in the input. */
  skippedLines: number;
}

/** One step of the log: files added and removed, inputs covered, atomically. */
export interface Commit {
  format: typeof FORMAT;
  seq: number;
  source: SourceName;
  createdAt: string;
  add: DataFile[];
  remove: string[];
  inputs: InputRecord[];
  /** Inputs whose records are dropped (files of managed storage that were deleted for good). */
  forget?: string[];
  /**
   * Numbers of lost or damaged commits whose files this one restored (or whose loss `check
   * --repair` acknowledged): they are no longer reported as damage.
   */
  settles?: number[];
}

interface Checkpoint {
  format: typeof FORMAT;
  seq: number;
  source: SourceName | null;
  files: DataFile[];
  inputs: InputRecord[];
  /** `DatasetState.removed` as of the checkpoint, those still on disk (absent before it existed). */
  removed?: string[];
  /** `DatasetState.typedPaths` as of the checkpoint (absent before it existed, or when empty). */
  typedPaths?: string[];
}

/** A log entry that could not be used: cut short, garbled, or missing. */
export interface LogDamage {
  /** The entry's file (absolute), or where it should be. */
  path: string;
  message: string;
}

/** The dataset as of one commit. */
export interface DatasetState {
  root: string;
  /** The highest commit number known (folded, or named by the log's files): the next commit takes seq + 1. */
  seq: number;
  source: SourceName | null;
  files: ReadonlyMap<string, DataFile>;
  inputs: readonly InputRecord[];
  /** The log's file names when read: a query checks them again to know nothing was committed since. */
  version: string;
  /**
   * Data files a commit removed (a merge, retention, a repair) that may still be on disk: their
   * deletion comes after the commit, and a process killed in between leaves them. Such a file is
   * never put back (dataset-orphans.ts): its events are in the file that replaced it, or were meant
   * to go. A checkpoint keeps those still on disk, so forgetting input records (which a file's
   * provenance is judged by) never makes a merged file look like one whose commit was lost.
   */
  removed: ReadonlySet<string>;
  /**
   * Entries left out of the fold: the state may lack files (they are then orphans on disk, kept:
   * see dataset-orphans.ts) and input records. Never followed by deletion while non-empty.
   */
  damage: LogDamage[];
  /**
   * Every typed field a data file of the dataset was ever recorded with (`DataFile.typedFields`),
   * in the order they first appeared: it only grows (a file removed keeps its fields here), and a
   * checkpoint keeps it. Compaction writes these columns into every file and queries read them
   * (src/sources/typed-fields.ts, `withTypedPaths`), so a discovered path stays a column.
   */
  typedPaths: readonly string[];
}

/** The log changed while it was being read (a cleanup removed a file): read it again. */
export class DatasetLogChanged extends Error {}

const parsed = new Map<string, Commit | Checkpoint>();

/** An entry that is not a valid log entry (cut short, garbled, checksum wrong): damage, not a retry. */
class TornEntry extends Error {}

function parse<T extends Commit | Checkpoint>(path: string): T {
  // Keyed by the file's version too: a log file never changes, unless it is damaged.
  const stats = statSync(path, { throwIfNoEntry: false });
  if (!stats) throw new DatasetLogChanged(path);
  const key = `${path}\0${stats.size}\0${stats.mtimeMs}`;
  const known = parsed.get(key);
  if (known) return known as T;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new DatasetLogChanged(path);
    throw error;
  }
  const value = unseal(text, path) as T;
  if (value?.format !== FORMAT) throw new TornEntry(`not a log-endpoints compaction log entry (format ${String(value?.format)})`);
  if (parsed.size > 50_000) parsed.clear();
  parsed.set(key, value);
  return value;
}

/** The entry of a log file's text, its checksum verified (a file without one is of an older version). */
function unseal(text: string, path: string): unknown {
  const sealed = SEALED.exec(text);
  const body = sealed ? text.slice(sealed[0].length, text.trimEnd().length - 1) : text;
  if (sealed && sha256(body) !== sealed[1]) throw new TornEntry(`its checksum does not match its content (cut short or garbled)`);
  try {
    return JSON.parse(body);
  } catch {
    throw new TornEntry(`${path.split(/[\\/]/).pop()} is not valid JSON (cut short or garbled)`);
  }
}

function seal(entry: Commit | Checkpoint): string {
  const body = JSON.stringify(entry);
  return `{"sha256":"${sha256(body)}","entry":${body}}\n`;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The names in a dataset's log folder, as a version string (empty when there is no log). */
export function logVersion(root: string): string {
  try {
    return readdirSync(join(root, DATASET_LOG_DIR))
      .filter((n) => COMMIT.test(n) || CHECKPOINT.test(n))
      .sort()
      .join(',');
  } catch {
    return '';
  }
}

/**
 * The dataset's state: the newest checkpoint plus the commits after it. Throws
 * `DatasetLogChanged` when a file vanished under the read (retry). `tolerant` folds past a gap
 * in the numbers (a missing commit) instead of throwing, and reports it in `damage`; an entry
 * that is cut short or garbled is always left out and reported.
 */
export function readDatasetState(root: string, tolerant = false): DatasetState {
  const version = logVersion(root);
  const names = version === '' ? [] : version.split(',');
  const files = new Map<string, DataFile>();
  const damage: LogDamage[] = [];
  const settled = new Set<number>();
  const removed = new Set<string>();
  let inputs: InputRecord[] = [];
  let seq = 0;
  let source: SourceName | null = null;
  const typedPaths = new Set<string>();
  const dir = join(root, DATASET_LOG_DIR);
  const checkpoints = names.filter((n) => CHECKPOINT.test(n)).reverse();
  for (const name of checkpoints) {
    try {
      const c = parse<Checkpoint>(join(dir, name));
      for (const f of c.files) files.set(f.path, f);
      for (const path of c.removed ?? []) removed.add(path);
      for (const path of c.typedPaths ?? []) typedPaths.add(path);
      for (const f of c.files) for (const path of f.typedFields ?? []) typedPaths.add(path);
      inputs = [...c.inputs];
      seq = c.seq;
      source = c.source;
      break;
    } catch (error) {
      if (!(error instanceof TornEntry)) throw error;
      // An older checkpoint (or the commits, when none is left) stands in for a damaged one.
      damage.push({ path: join(dir, name), message: `checkpoint ${Number(CHECKPOINT.exec(name)![1])} is damaged: ${error.message}` });
    }
  }
  for (const name of names) {
    const m = COMMIT.exec(name);
    if (!m || Number(m[1]) <= seq) continue;
    const number = Number(m[1]);
    if (number !== seq + 1) {
      if (!tolerant) throw new DatasetLogChanged(`${root}: commit ${seq + 1} is missing`);
      damage.push({ path: join(dir, commitName(seq + 1)), message: missingText(seq + 1, number - 1) });
    }
    seq = number;
    let c: Commit;
    try {
      c = parse<Commit>(join(dir, name));
    } catch (error) {
      if (!(error instanceof TornEntry)) throw error;
      damage.push({ path: join(dir, name), message: `commit ${number} is damaged: ${error.message}` });
      continue;
    }
    for (const path of c.remove) {
      files.delete(path);
      removed.add(path);
    }
    for (const f of c.add) {
      files.set(f.path, f);
      removed.delete(f.path);
      for (const path of f.typedFields ?? []) typedPaths.add(path);
    }
    for (const n of c.settles ?? []) settled.add(n);
    if (c.forget?.length) {
      const forget = new Set(c.forget);
      inputs = inputs.filter((r) => !forget.has(r.path));
    }
    inputs.push(...c.inputs);
    source = c.source;
  }
  const newest = readNewest(dir);
  if (newest > seq) {
    damage.push({ path: join(dir, commitName(seq + 1)), message: `${missingText(seq + 1, newest)}: the log names ${newest} as its newest commit` });
    seq = newest;
  }
  const unsettled = damage.filter((d) => !settled.has(firstNumberOf(d.path)));
  return { root, seq, source, files, inputs, version, damage: unsettled, removed, typedPaths: [...typedPaths] };
}

/** The commit number a damage entry is about (its file's name), or -1 for a checkpoint. */
function firstNumberOf(path: string): number {
  const m = /(\d{20})\.json$/.exec(path);
  return m ? Number(m[1]) : -1;
}

function commitName(seq: number): string {
  return `${String(seq).padStart(20, '0')}.json`;
}

function missingText(from: number, to: number): string {
  return from === to ? `commit ${from} is missing` : `commits ${from} to ${to} are missing`;
}

/**
 * `NEWEST` as last read, per log folder, with the version of the file it was read from: every
 * query reads each dataset's state, and one stat costs less than an open, a read and a close.
 */
const newestRead = new Map<string, { ino: number; size: number; mtimeMs: number; ctimeMs: number; value: number }>();

/**
 * The newest commit number the log recorded, 0 when it has no record (or an unreadable one).
 * Read again whenever the file's version differs, and always while it is under two seconds old:
 * two writes within one timestamp tick could otherwise look alike (as `DirectoryCache` does).
 */
export function readNewest(dir: string, now = systemMs()): number {
  const path = join(dir, NEWEST);
  const stats = statSync(path, { throwIfNoEntry: false });
  if (!stats) {
    newestRead.delete(dir);
    return 0;
  }
  const known = newestRead.get(dir);
  if (known && known.ino === stats.ino && known.size === stats.size && known.mtimeMs === stats.mtimeMs && known.ctimeMs === stats.ctimeMs && now - stats.mtimeMs > 2000 && now - stats.ctimeMs > 2000)
    return known.value;
  let value = 0;
  try {
    const n = Number(readFileSync(path, 'utf8').trim());
    value = Number.isSafeInteger(n) && n > 0 ? n : 0;
  } catch {
    return 0;
  }
  if (newestRead.size > 10_000) newestRead.clear();
  newestRead.set(dir, { ino: stats.ino, size: stats.size, mtimeMs: stats.mtimeMs, ctimeMs: stats.ctimeMs, value });
  return value;
}

/**
 * Reads the state, retrying while a concurrent cleanup changes the log under the read. A gap
 * that stays (a commit missing for good) is read past and reported in `damage`.
 */
export function readDatasetStateStable(root: string): DatasetState {
  for (let attempt = 0; ; attempt++) {
    try {
      return readDatasetState(root, attempt >= 5);
    } catch (error) {
      if (!(error instanceof DatasetLogChanged) || attempt >= 20) throw error;
    }
  }
}

/**
 * Writes this process made to each dataset's log (by resolved root): a reader that kept a state
 * (dataset-state-memo.ts) reads the log again after any of them, whatever the file system's
 * timestamps say.
 */
const logWrites = new Map<string, number>();

/**
 * How many times this process wrote to the dataset's log (a commit, `NEWEST`, a checkpoint and
 * its pruning): a number that changes with every such write.
 *
 * @example
 * const before = logWritesOf(root);
 * await appendCommit(state, entry);
 * logWritesOf(root) !== before; // true
 */
export function logWritesOf(root: string): number {
  return logWrites.get(resolve(root)) ?? 0;
}

function wroteLog(root: string): void {
  const key = resolve(root);
  logWrites.set(key, (logWrites.get(key) ?? 0) + 1);
}

/**
 * Appends a commit after `state` (the caller holds the dataset lock). The commit appears whole or
 * not at all; resolves false when another writer took the sequence number first.
 */
export async function appendCommit(state: DatasetState, entry: Omit<Commit, 'format' | 'seq' | 'createdAt'>, now: Date = systemNow()): Promise<boolean> {
  const dir = join(state.root, DATASET_LOG_DIR);
  await mkdir(dir, { recursive: true });
  const seq = state.seq + 1;
  const commit: Commit = { format: FORMAT, seq, createdAt: now.toISOString(), ...entry };
  if (!(await writeFileAtomic(join(dir, commitName(seq)), seal(commit), 'create'))) return false;
  wroteLog(state.root);
  // Killed before this, the commit file itself says it is the newest; after it, a newest commit
  // that disappears is noticed. Failing here (a full disk) leaves an older number: harmless, the
  // commit is made.
  await writeFileAtomic(join(dir, NEWEST), `${seq}\n`, 'replace').catch(() => undefined);
  wroteLog(state.root);
  return true;
}

/**
 * Writes a checkpoint of `state` when enough commits piled up since the last one, then removes
 * the log files it makes redundant. A reader that listed the log a moment earlier and finds a
 * file gone reads the log again (`DatasetLogChanged`).
 */
export async function checkpointIfDue(state: DatasetState): Promise<void> {
  // A damaged log keeps every entry it has: `check` reports it, and nothing it holds is folded away.
  if (state.damage.length) return;
  const dir = join(state.root, DATASET_LOG_DIR);
  const names = (await readdir(dir)).sort();
  const last =
    names
      .filter((n) => CHECKPOINT.test(n))
      .map((n) => Number(CHECKPOINT.exec(n)![1]))
      .at(-1) ?? 0;
  if (state.seq - last < CHECKPOINT_EVERY) return;
  // A removed file that is gone stays gone (names are never reused): only those still on disk are kept.
  const removed = [...state.removed].filter((path) => existsSync(join(state.root, path)));
  const checkpoint: Checkpoint = {
    format: FORMAT,
    seq: state.seq,
    source: state.source,
    files: [...state.files.values()],
    inputs: [...state.inputs],
    ...(removed.length ? { removed } : {}),
    ...(state.typedPaths.length ? { typedPaths: [...state.typedPaths] } : {}),
  };
  await writeFileAtomic(join(dir, `${String(state.seq).padStart(20, '0')}.checkpoint.json`), seal(checkpoint), 'replace');
  wroteLog(state.root);
  failpoint('checkpoint:written', state.source ?? undefined);
  let pruned = 0;
  for (const name of names) {
    const commit = COMMIT.exec(name);
    const older = CHECKPOINT.exec(name);
    if ((commit && Number(commit[1]) <= state.seq) || (older && Number(older[1]) < state.seq)) {
      await unlinkIfPresent(join(dir, name));
      wroteLog(state.root);
      failpoint(`checkpoint:pruned:${++pruned}`, state.source ?? undefined);
    }
  }
}

/** Creates the log folder of a new dataset (a dataset exists from then on, even empty). */
export async function ensureDataset(root: string): Promise<void> {
  await mkdir(join(root, DATASET_LOG_DIR), { recursive: true });
}
