import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { SourceName } from '../engine/engine';
import { unlinkIfPresent, writeFileAtomic } from './durable-fs';

/**
 * A compacted dataset is a folder with Parquet files in `date=YYYY-MM-DD/` folders and a log of
 * commits in `_compact/`. The log is the truth: a Parquet file is part of the dataset only from
 * the commit that adds it, and that same commit records which inputs (byte ranges of NDJSON files)
 * its rows came from. A query reads the log first, so at every instant it sees either the inputs
 * or the Parquet of a commit, never both and never neither (docs/semantics.md, "Compacted datasets").
 */
export const DATASET_LOG_DIR = '_compact';

const FORMAT = 'log-endpoints.compact/2';
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
  /** The UTC day its events are in (from its `date=` folder), or null. */
  day: string | null;
  /** Its head (gateway log only): the newest rows of each project, for logs.all (see newest-heads.ts). */
  head?: { path: string; rows: number; bytes: number };
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
}

interface Checkpoint {
  format: typeof FORMAT;
  seq: number;
  source: SourceName | null;
  files: DataFile[];
  inputs: InputRecord[];
}

/** The dataset as of one commit. */
export interface DatasetState {
  root: string;
  seq: number;
  source: SourceName | null;
  files: ReadonlyMap<string, DataFile>;
  inputs: readonly InputRecord[];
  /** The log's file names when read: a query checks them again to know nothing was committed since. */
  version: string;
}

/** The log changed while it was being read (a cleanup removed a file): read it again. */
export class DatasetLogChanged extends Error {}

const parsed = new Map<string, Commit | Checkpoint>();

function parse<T extends Commit | Checkpoint>(path: string): T {
  const known = parsed.get(path);
  if (known) return known as T;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new DatasetLogChanged(path);
    throw error;
  }
  const value = JSON.parse(text) as T;
  if (value.format !== FORMAT) throw new Error(`${path}: not a log-endpoints compaction log entry (format ${String(value.format)})`);
  if (parsed.size > 50_000) parsed.clear();
  // Log files never change once written (a name is never reused), so their content can be kept.
  parsed.set(path, value);
  return value;
}

/** The names in a dataset's log folder, as a version string (empty when there is no log). */
export function logVersion(root: string): string {
  try {
    return readdirSync(join(root, DATASET_LOG_DIR)).filter((n) => COMMIT.test(n) || CHECKPOINT.test(n)).sort().join(',');
  } catch {
    return '';
  }
}

/**
 * The dataset's state: the newest checkpoint plus the commits after it. Throws
 * `DatasetLogChanged` when a file vanished under the read (retry).
 */
export function readDatasetState(root: string): DatasetState {
  const version = logVersion(root);
  const names = version === '' ? [] : version.split(',');
  const files = new Map<string, DataFile>();
  let inputs: InputRecord[] = [];
  let seq = 0;
  let source: SourceName | null = null;
  const checkpoint = names.filter((n) => CHECKPOINT.test(n)).pop();
  if (checkpoint) {
    const c = parse<Checkpoint>(join(root, DATASET_LOG_DIR, checkpoint));
    for (const f of c.files) files.set(f.path, f);
    inputs = [...c.inputs];
    seq = c.seq;
    source = c.source;
  }
  for (const name of names) {
    const m = COMMIT.exec(name);
    if (!m || Number(m[1]) <= seq) continue;
    if (Number(m[1]) !== seq + 1) throw new DatasetLogChanged(`${root}: commit ${seq + 1} is missing`);
    const c = parse<Commit>(join(root, DATASET_LOG_DIR, name));
    for (const path of c.remove) files.delete(path);
    for (const f of c.add) files.set(f.path, f);
    if (c.forget?.length) {
      const forget = new Set(c.forget);
      inputs = inputs.filter((r) => !forget.has(r.path));
    }
    inputs.push(...c.inputs);
    seq = c.seq;
    source = c.source;
  }
  return { root, seq, source, files, inputs, version };
}

/** Reads the state, retrying while a concurrent cleanup changes the log under the read. */
export function readDatasetStateStable(root: string): DatasetState {
  for (let attempt = 0; ; attempt++) {
    try {
      return readDatasetState(root);
    } catch (error) {
      if (!(error instanceof DatasetLogChanged) || attempt >= 20) throw error;
    }
  }
}

/**
 * Appends a commit after `state` (the caller holds the dataset lock). The commit appears whole or
 * not at all; resolves false when another writer took the sequence number first.
 */
export async function appendCommit(
  state: DatasetState,
  entry: Omit<Commit, 'format' | 'seq' | 'createdAt'>,
  now: Date = new Date(),
): Promise<boolean> {
  const dir = join(state.root, DATASET_LOG_DIR);
  await mkdir(dir, { recursive: true });
  const seq = state.seq + 1;
  const commit: Commit = { format: FORMAT, seq, createdAt: now.toISOString(), ...entry };
  return writeFileAtomic(join(dir, `${String(seq).padStart(20, '0')}.json`), JSON.stringify(commit), 'create');
}

/**
 * Writes a checkpoint of `state` when enough commits piled up since the last one, then removes
 * the log files it makes redundant. A reader that listed the log a moment earlier and finds a
 * file gone reads the log again (`DatasetLogChanged`).
 */
export async function checkpointIfDue(state: DatasetState): Promise<void> {
  const dir = join(state.root, DATASET_LOG_DIR);
  const names = (await readdir(dir)).sort();
  const last = names.filter((n) => CHECKPOINT.test(n)).map((n) => Number(CHECKPOINT.exec(n)![1])).at(-1) ?? 0;
  if (state.seq - last < CHECKPOINT_EVERY) return;
  const checkpoint: Checkpoint = {
    format: FORMAT, seq: state.seq, source: state.source, files: [...state.files.values()], inputs: [...state.inputs],
  };
  await writeFileAtomic(join(dir, `${String(state.seq).padStart(20, '0')}.checkpoint.json`), JSON.stringify(checkpoint), 'replace');
  for (const name of names) {
    const commit = COMMIT.exec(name);
    const older = CHECKPOINT.exec(name);
    if ((commit && Number(commit[1]) <= state.seq) || (older && Number(older[1]) < state.seq)) await unlinkIfPresent(join(dir, name));
  }
}

/** Creates the log folder of a new dataset (a dataset exists from then on, even empty). */
export async function ensureDataset(root: string): Promise<void> {
  await mkdir(join(root, DATASET_LOG_DIR), { recursive: true });
}
