import { statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { SourceDescriptor } from '../sources/source-descriptor';
import type { MemoryRows } from '../duckdb/source-relations';
import { rollupDefinition } from '../dataset/stored-rollups';
import { partitionDay } from './file-kinds';
import { readDatasetStateStable, type DataFile, type DatasetState } from '../dataset/dataset-log';
import { DatasetStateMemo } from '../dataset/dataset-state-memo';
import { FileChecks, type SkipReason, type SkippedFile } from './file-checks';
import { InternalError } from '../util/internal-error';
import { compileGlob, type CompiledGlob } from './glob';
import { coveredBytes, InputIndex, RangeHashes } from './input-coverage';
import { DirectoryCache, listGlob, type ListedFile } from './list-glob';

/** The typed fields of these datasets' logs, each once, in the order met. */
function typedPathsOf(states: Iterable<DatasetState>): string[] {
  const paths = new Set<string>();
  for (const state of states) for (const path of state.typedPaths) paths.add(path);
  return [...paths];
}

/** Bytes [start, end) of an NDJSON file: the part of it no compacted dataset holds yet. */
export interface FileRange {
  file: ListedFile;
  start: number;
  end: number;
  /** Still being written: read from a copy of [start, end) even when that is the whole file now. */
  growing?: boolean;
}

/** What one query of a source reads: a consistent cut through files and compacted datasets. */
export interface ReadSet {
  /** NDJSON files read whole. */
  ndjson: ListedFile[];
  /** NDJSON files of which a dataset holds the beginning: only the rest is read. */
  ranges: FileRange[];
  /** Parquet files, newest day partition first (a top-N query meets the newest rows first). */
  parquet: ListedFile[];
  /** Files left out of this answer, and why. */
  skipped: SkippedFile[];
  /** Each configured glob and how many log files it matches now (0 is likely a typo). */
  globs: Array<{ glob: string; files: number }>;
  /** NDJSON files left out because a compacted dataset holds all of their events. */
  covered: string[];
  /**
   * The typed fields the datasets read hold (their logs' `typedPaths`, in the order met): what the
   * instance widens the source by (src/sources/live-source-set.ts), for the requests after this one.
   */
  typedPaths: string[];
  /** The events held in memory (managed storage), when there are any: their SELECT and the typed fields it holds. */
  memory?: MemoryRows;
  /**
   * A SELECT of a subset of `memory` that holds each project's newest events (as a compacted
   * file's head holds its file's), when memory keeps one: what a newest-first page without an
   * upper time bound reads instead (see memory-tables.ts).
   */
  memoryNewest?: MemoryRows;
}

/** Where extra inputs come from (managed storage adds its write-ahead log this way). */
export interface ExtraInputs {
  /** Datasets to read besides those the globs reach. */
  datasets(): readonly string[];
  /**
   * One consistent view of the rest: NDJSON files (or their committed part: `end`) to read besides
   * what the globs match, and the SELECT of events held in memory, given which NDJSON paths the
   * query's dataset state already holds (those are left out of it).
   */
  view(): {
    ndjson: readonly FileRange[];
    memory?: (covered: (path: string) => boolean) => (MemoryRows & { newest?: string }) | undefined;
    /** Files not read yet (a backlog being recovered): named in the answer unless a dataset holds them. */
    recovering?: readonly FileRange[];
  };
}

/**
 * Reads of one query: a file that vanishes or turns out damaged between the listing and the read
 * sends the query back to a fresh listing, at most this many times (docs/semantics.md, "Files").
 */
export const MAX_ATTEMPTS = 8;

/**
 * Whether `verifyRows` found a data file its snapshot named removed by a newer commit (a merge,
 * retention) before it was checked: the snapshot is stale, not damaged; take another.
 */
export function staleSnapshot(error: unknown): boolean {
  return error instanceof InternalError && error.code === 'ENOENT';
}

/**
 * Turns a source's globs into what a query reads, exactly once per event (docs/semantics.md, "Files" and "Compacted datasets"):
 * files listed now (so new ones are read at once), compacted datasets through their logs, and
 * NDJSON inputs that a dataset already holds left out (or only their new tail read). The datasets'
 * logs are read after the listing: an input is deleted only after the commit that covers it, so
 * any input missing from the listing is covered by a commit this read sees.
 */
export class SourceReader {
  private readonly globs: CompiledGlob[];
  private readonly directories = new DirectoryCache();
  private readonly hashes = new RangeHashes();
  readonly checks = new FileChecks();
  /**
   * Absolute paths of datasets' files, per entry of their logs: a log entry is parsed once and
   * belongs to one dataset folder, so its paths never change (and every query meets them all).
   */
  private readonly paths = new WeakMap<{ path: string }, string>();
  private readonly rollupPaths = new WeakMap<object, NonNullable<ListedFile['rollups']>>();
  /** The datasets' states, read again only when their logs may have changed (dataset-state-memo.ts). */
  private readonly states = new DatasetStateMemo();
  /** The index of the inputs of the last snapshot's states: the same states, the same index. */
  private lastIndex: { states: readonly DatasetState[]; index: InputIndex } | null = null;

  constructor(
    globs: readonly string[],
    private readonly extra?: ExtraInputs,
    /** The source the files hold: a stored rollup is read only when computed by its current definition. */
    private readonly source?: SourceDescriptor,
  ) {
    this.globs = globs.map((g) => compileGlob(g));
  }

  /** What to read now; Parquet in `date=` partitions before `earliestDay` is left out. */
  async snapshot(earliestDay: string | null = null): Promise<ReadSet> {
    const out: ReadSet = { ndjson: [], ranges: [], parquet: [], skipped: [], globs: [], covered: [], typedPaths: [] };
    const ndjson = new Map<string, ListedFile>();
    const parquet = new Map<string, ListedFile>();
    const reached: Array<{ root: string; glob: CompiledGlob | null }> = [];
    for (const glob of this.globs) {
      const listing = listGlob(glob, this.directories);
      for (const file of listing.files) (file.kind === 'ndjson' ? ndjson : parquet).set(file.path, file);
      for (const path of listing.irregular) out.skipped.push({ path, reason: 'not_regular_file', message: 'not a regular file (a pipe, socket or device is never read)' });
      for (const root of listing.datasets) reached.push({ root, glob });
      out.globs.push({ glob: glob.pattern, files: listing.files.length });
    }
    for (const root of this.extra?.datasets() ?? []) reached.push({ root, glob: null });

    // The datasets' logs, read after the listing (see the class comment).
    const states = new Map<string, DatasetState>();
    for (const { root } of reached) {
      if (states.has(root)) continue;
      const state = this.states.read(root);
      states.set(root, state);
      // Its log is damaged: the answer is what the rest of it holds, and says so.
      for (const d of state.damage) out.skipped.push({ path: d.path, reason: 'damaged_log', message: d.message });
    }
    for (const { root, glob } of reached) {
      const state = states.get(root)!;
      let matched = 0;
      for (const data of state.files.values()) {
        const path = this.pathOf(root, data);
        if (glob && !globReaches(glob, path)) continue;
        matched++;
        if (earliestDay !== null && data.day !== null && data.day < earliestDay) continue;
        parquet.set(path, {
          path,
          kind: 'parquet',
          size: data.bytes,
          mtimeMs: 0,
          ino: 0,
          dataset: root,
          ...(data.crc32 === undefined ? {} : { crc32: data.crc32 }),
          ...(data.head ? { head: this.pathOf(root, data.head), headBytes: data.head.bytes, headRows: data.head.rows, headCrc32: data.head.crc32 } : {}),
          ...(data.rollups ? { rollups: this.rollupsOf(root, data.rollups) } : {}),
          ...(data.typedFields?.length ? { typedFields: data.typedFields } : {}),
          ...(data.typedFields?.length && typeof data.arraysFree === 'boolean' ? { arraysFree: data.arraysFree } : {}),
        });
      }
      const entry = glob ? out.globs.find((g) => g.glob === glob.pattern) : undefined;
      if (entry) entry.files += matched;
    }

    out.typedPaths = typedPathsOf(states.values());
    const index = this.inputIndexOf([...states.values()]);
    const listedPaths: ReadonlyMap<string, ListedFile> = ndjson;
    for (const file of ndjson.values()) {
      const covered = coveredBytes(file, index, this.hashes, listedPaths);
      if (covered >= file.size && file.size > 0) out.covered.push(file.path);
      else if (covered > 0) out.ranges.push({ file, start: covered, end: file.size });
      else out.ndjson.push(file);
    }
    const extra = this.extra?.view();
    const memory = extra?.memory?.((path) => index.recordsOf(path).length > 0);
    if (memory) {
      const known = { ...(memory.oldest === undefined ? {} : { oldest: memory.oldest }), ...(memory.arraysFree ? { arraysFree: true } : {}) };
      out.memory = { rows: memory.rows, typedFields: memory.typedFields, ...known, ...(memory.rollups === undefined ? {} : { rollups: memory.rollups }) };
      if (memory.newest !== undefined) out.memoryNewest = { rows: memory.newest, typedFields: memory.typedFields, ...known };
    }
    for (const range of extra?.recovering ?? []) {
      if (coveredBytes(range.file, index, this.hashes, listedPaths) >= range.end) continue;
      out.skipped.push({ path: range.file.path, reason: 'recovering', message: `left by the previous process and being recovered: its ${range.end} bytes of events are in answers once compacted` });
    }
    for (const range of extra?.ndjson ?? []) {
      const covered = coveredBytes(range.file, index, this.hashes, listedPaths);
      if (covered >= range.end) continue;
      if (covered > range.start) out.ranges.push({ ...range, start: covered });
      else if (range.start === 0 && range.end === range.file.size && !range.growing) out.ndjson.push(range.file);
      else out.ranges.push(range);
    }

    // Non-dataset Parquet in a `date=` partition before the window holds no answer.
    for (const file of parquet.values()) {
      const day = file.dataset ? null : partitionDay(file.path);
      if (earliestDay !== null && day !== null && day < earliestDay) continue;
      out.parquet.push(file);
    }

    // Damaged files stay out (and are told), a dataset's too: its log vouches for what the file
    // should be, not for the disk. A head or stored rollup that cannot be read is not needed: its
    // data file is read instead (the rollup computed from its rows). The bytes of a dataset's
    // files are checked against their commits by whoever reads them, once per file version
    // (`verifyRows`, `verifyCompanions`): a query lists a 90-day window, and reads a few of its files.
    const keep = async (file: ListedFile) => {
      const problem = await this.checks.check(file);
      if (problem) out.skipped.push(problem);
      const head = headOf(file);
      if (!problem && head && (await this.checks.check(head))) delete file.head;
      for (const [name, rollup] of Object.entries(problem ? {} : (file.rollups ?? {}))) {
        if (await this.checks.check(rollupOf(file, rollup))) file.rollups = withoutKey(file.rollups!, name);
      }
      return problem === null;
    };
    out.ndjson = await filterAsync(out.ndjson, keep);
    out.ranges = await filterAsync(out.ranges, (r) => keep(r.file));
    out.parquet = await filterAsync(out.parquet, keep);
    const newestFirst = (a: ListedFile, b: ListedFile) => (a.path < b.path ? 1 : a.path > b.path ? -1 : 0);
    out.ndjson.sort(newestFirst);
    out.parquet.sort(newestFirst);
    return out;
  }

  /**
   * The typed fields the datasets this source reads hold now (as a snapshot's `typedPaths`, without
   * reading anything else): what an instance starts with. A log that cannot be read adds none.
   */
  typedPaths(): string[] {
    // What cannot be listed or read adds none: the queries say what is wrong with it.
    const attempt = <T>(read: () => T, otherwise: T): T => {
      try {
        return read();
      } catch {
        return otherwise;
      }
    };
    const roots = new Set([...this.globs.flatMap((glob) => attempt(() => listGlob(glob, this.directories).datasets, [])), ...(this.extra?.datasets() ?? [])]);
    return typedPathsOf([...roots].flatMap((root) => attempt(() => [readDatasetStateStable(root)], [])));
  }

  /**
   * Of a snapshot's data files whose rows a query is about to read, those whose bytes are not the
   * ones their commit recorded (CRC-32, once per file version): they leave `read.parquet` for
   * `read.skipped` (named, like any damaged file) and stay out of later snapshots until they change.
   * Returns how many were left out.
   */
  async verifyRows(read: ReadSet, files: readonly ListedFile[] = read.parquet): Promise<number> {
    const bad = new Set<ListedFile>();
    await Promise.all(
      files
        .filter((f) => f.dataset && f.crc32 !== undefined)
        .map(async (file) => {
          versionOf(file);
          const problem = await this.checks.verify(file);
          if (problem === null) return;
          // Gone because a newer commit removed it (a merge, retention) after the snapshot was taken:
          // not damage, a stale snapshot; the caller takes a fresh one (`staleSnapshot`).
          if (problem.reason === 'missing' && this.removedByNewerCommit(file)) throw new InternalError('ENOENT', `${file.path} was removed by a newer commit of its dataset`);
          read.skipped.push(this.checks.mark(file, problem.reason, problem.message));
          bad.add(file);
        }),
    );
    if (bad.size) read.parquet = read.parquet.filter((f) => !bad.has(f));
    return bad.size;
  }

  /** The inputs the datasets' states record, indexed (once per set of states: a state never changes). */
  private inputIndexOf(states: readonly DatasetState[]): InputIndex {
    const last = this.lastIndex;
    if (last && last.states.length === states.length && last.states.every((s, i) => s === states[i])) return last.index;
    const index = new InputIndex(states.flatMap((s) => s.inputs));
    this.lastIndex = { states, index };
    return index;
  }

  /** Whether the dataset's log, read now, no longer names this data file. */
  private removedByNewerCommit(file: ListedFile): boolean {
    const root = file.dataset!;
    return ![...readDatasetStateStable(root).files.values()].some((d) => this.pathOf(root, d) === file.path);
  }

  /**
   * Checks the heads (`heads`) or the named stored rollups of a snapshot's data files (`files`, by
   * default all) against their commits before a query reads them: one whose bytes are not the
   * recorded ones is dropped from its data file (whose rows stand in) and stays out until it changes.
   */
  async verifyCompanions(read: ReadSet, which: { heads?: boolean; rollups?: readonly string[]; files?: readonly ListedFile[] }): Promise<void> {
    const rollups = which.rollups ?? [];
    if (!which.heads && rollups.length === 0) return;
    await Promise.all(
      (which.files ?? read.parquet).map(async (file) => {
        const head = which.heads ? headOf(file) : null;
        if (head && !(await this.intact(head))) delete file.head;
        for (const name of rollups) {
          const rollup = file.rollups?.[name];
          if (rollup && !(await this.intact(rollupOf(file, rollup)))) file.rollups = withoutKey(file.rollups!, name);
        }
      }),
    );
  }

  /** Whether a head or stored rollup holds the bytes its commit recorded (marked damaged otherwise). */
  private async intact(companion: ListedFile): Promise<boolean> {
    if (companion.crc32 === undefined) return true;
    versionOf(companion);
    const problem = await this.checks.verify(companion);
    if (problem) this.checks.mark(companion, problem.reason, problem.message);
    return problem === null;
  }

  /**
   * A data file's stored rollups with absolute paths (kept per entry, like `pathOf`); those computed
   * by another definition of the rollup than the source's current one are left out (never read).
   */
  private rollupsOf(root: string, rollups: NonNullable<DataFile['rollups']>): NonNullable<ListedFile['rollups']> {
    let known = this.rollupPaths.get(rollups);
    if (known === undefined) {
      const current = Object.entries(rollups).filter(([name, r]) => this.source === undefined || r.definition === rollupDefinition(this.source, name));
      known = Object.fromEntries(
        current.map(([name, r]) => [name, { path: this.pathOf(root, r), bytes: r.bytes, writtenMs: r.writtenMs ?? 0, crc32: r.crc32, rows: r.rows, ...(r.leftOut ? { leftOut: r.leftOut } : {}) }]),
      );
      this.rollupPaths.set(rollups, known);
    }
    // A copy per listing: a damaged one is dropped from this listing's file only.
    return { ...known };
  }

  private pathOf(root: string, file: { path: string }): string {
    let path = this.paths.get(file);
    if (path === undefined) this.paths.set(file, (path = join(root, ...file.path.split('/'))));
    return path;
  }

  /** The engine failed on this file version: it stays out of answers until it changes. */
  markDamaged(file: ListedFile, reason: SkipReason, message: string): SkippedFile {
    if (file.dataset) versionOf(file);
    return this.checks.mark(file, reason, message);
  }
}

/** A dataset file's head as a file of its own (checked, or marked damaged, like any file), or null. */
export function headOf(file: ListedFile): ListedFile | null {
  if (!file.head) return null;
  return {
    path: file.head,
    kind: 'parquet',
    size: file.headBytes ?? 0,
    mtimeMs: 0,
    ino: 0,
    dataset: file.dataset,
    ...(file.headRows === undefined ? {} : { headRows: file.headRows }),
    ...(file.headCrc32 === undefined ? {} : { crc32: file.headCrc32 }),
  };
}

/**
 * Sets a dataset file's version (mtime, ctime, inode) from the disk: its commit records its size
 * and CRC-32, and a write in place (even of the same size) is another version, checked again.
 * One stat per file a query lists. A file that is not there keeps zeros (found missing).
 */
function versionOf(file: ListedFile): void {
  const stats = statSync(file.path, { throwIfNoEntry: false });
  if (!stats) return;
  file.mtimeMs = stats.mtimeMs;
  file.ctimeMs = stats.ctimeMs;
  file.ino = stats.ino;
}

/** A data file's head and stored rollups, each as a file of its own. */
export function companionsOf(file: ListedFile): ListedFile[] {
  const head = headOf(file);
  return [...(head ? [head] : []), ...Object.values(file.rollups ?? {}).map((r) => rollupOf(file, r))];
}

/** A data file's stored rollup as a file of its own (checked, or marked damaged, like any file). */
export function rollupOf(file: ListedFile, rollup: { path: string; bytes: number; writtenMs?: number; crc32?: number }): ListedFile {
  return { path: rollup.path, kind: 'parquet', size: rollup.bytes, mtimeMs: rollup.writtenMs ?? 0, ino: 0, dataset: file.dataset, ...(rollup.crc32 === undefined ? {} : { crc32: rollup.crc32 }) };
}

function withoutKey<T>(record: Record<string, T>, key: string): Record<string, T> {
  const { [key]: _gone, ...rest } = record;
  return rest;
}

/** Whether a dataset's file lies below the glob's fixed folder and matches it. */
function globReaches(glob: CompiledGlob, path: string): boolean {
  if (glob.literal) return path === glob.base || path.startsWith(glob.base + sep);
  const rel = relative(glob.base, path);
  if (rel === '' || rel.startsWith('..')) return false;
  return glob.matches(rel.split(sep).join('/'));
}

async function filterAsync<T>(items: T[], keep: (item: T) => Promise<boolean>): Promise<T[]> {
  const verdicts = await Promise.all(items.map(keep));
  return items.filter((_, i) => verdicts[i]);
}
