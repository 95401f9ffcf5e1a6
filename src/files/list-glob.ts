import { readdirSync, statSync, type Dirent, type Stats } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { fileKind, type FileKind } from './file-kinds';
import { DATASET_LOG_DIR } from '../dataset/dataset-log';
import type { CompiledGlob } from './glob';
import { systemMs } from '../time/clock';

/** A regular file a glob matched, with what identifies its current version. */
export interface ListedFile {
  path: string;
  kind: FileKind;
  size: number;
  mtimeMs: number;
  ino: number;
  /** For a Parquet file of a compacted dataset: the dataset's folder (its log vouches for the file). */
  dataset?: string;
  /** The inode change time: with size, mtime and inode, what tells a dataset file's version (a write in place changes it). */
  ctimeMs?: number;
  /** For a dataset's file: the CRC-32 of its bytes as its commit recorded it (docs/damaged-data.md). */
  crc32?: number;
  /** For a dataset's data file: its head (the newest rows of each project), absolute. */
  head?: string;
  /** The head's size and CRC-32 as its commit recorded them. */
  headBytes?: number;
  /** The head's rows as its commit recorded them. */
  headRows?: number;
  headCrc32?: number;
  /** For a dataset's data file: its stored rollups by name (absolute path, size, CRC-32, rows and fields left out as committed). */
  rollups?: Record<string, { path: string; bytes: number; writtenMs?: number; crc32?: number; rows?: number; leftOut?: readonly string[] }>;
  /** For a dataset's data file: the typed fields its commit records it has as columns. */
  typedFields?: readonly string[];
  /** For a dataset's data file with `typedFields`: whether its commit records that no row has the arrays flag true. */
  arraysFree?: boolean;
}

/** What one glob matches now. */
export interface GlobListing {
  /** Log files (NDJSON or Parquet by extension) outside compacted datasets. */
  files: ListedFile[];
  /** Matched paths that are not regular files (a FIFO would hang a reader): never read. */
  irregular: string[];
  /**
   * Compacted datasets (folders holding a `_compact/` log) the glob reaches into: their Parquet
   * files come from the dataset's log, not from the folder, so a half-published run is never read.
   */
  datasets: string[];
}

/**
 * Folder listings, kept while a folder's mtime says it did not change. A folder changed in the
 * last two seconds is always read again: two changes within one mtime tick would otherwise hide
 * the second (the same caution git takes with racy index entries).
 */
export class DirectoryCache {
  private readonly entries = new Map<string, { mtimeMs: number; list: Dirent[] }>();

  /** `stats`: the folder's, when the caller has just taken them (one stat less per folder and query). */
  list(dir: string, now = systemMs(), stats: Stats | null = statOrNull(dir)): Dirent[] | null {
    if (!stats?.isDirectory()) {
      this.entries.delete(dir);
      return null;
    }
    const known = this.entries.get(dir);
    if (known && known.mtimeMs === stats.mtimeMs && now - stats.mtimeMs > 2000) return known.list;
    let list: Dirent[];
    try {
      list = readdirSync(dir, { withFileTypes: true });
    } catch {
      // Vanished or unreadable between the stat and the read: nothing is listed from it.
      return null;
    }
    if (this.entries.size > 10_000) this.entries.clear();
    this.entries.set(dir, { mtimeMs: stats.mtimeMs, list });
    return list;
  }
}

/**
 * Lists what a glob matches now: log files by extension, each with its version (size, mtime,
 * inode), skipping names that start with `.` or `_` below the glob's fixed folder (a running
 * compact's staging, the datasets' logs, by the Hive convention) and recognising compacted datasets.
 */
export function listGlob(glob: CompiledGlob, cache: DirectoryCache): GlobListing {
  const out: GlobListing = { files: [], irregular: [], datasets: [] };
  const enclosing = enclosingDataset(glob.base);
  if (enclosing) out.datasets.push(enclosing);
  const root = statOrNull(glob.base);
  if (!root) return out;
  if (glob.literal && !root.isDirectory()) {
    // Parquet inside a dataset is what its log says, never what lies in the folder.
    if (!(enclosing && fileKind(glob.base) === 'parquet')) addFile(out, glob.base, root);
    return out;
  }
  if (!root.isDirectory()) return out;
  const visited = new Set<number>([root.ino]);
  const now = systemMs();
  const walk = (dir: string, dirStats: Stats, rel: string, dataset: string | null) => {
    const entries = cache.list(dir, now, dirStats);
    if (!entries) return;
    if (!dataset && entries.some((e) => e.name === DATASET_LOG_DIR && (e.isDirectory() || e.isSymbolicLink()))) {
      dataset = dir;
      out.datasets.push(dir);
    }
    for (const entry of entries) {
      // Hidden by the Hive convention: work in progress and bookkeeping.
      if (entry.name.startsWith('.') || entry.name.startsWith('_')) continue;
      let isDir = entry.isDirectory();
      const link = entry.isSymbolicLink();
      // A dataset's folders hold mostly its Parquet, which its log lists: passed over before any
      // path is built (a listing on every query meets each of them).
      if (!isDir && !link && dataset && fileKind(entry.name) === 'parquet') continue;
      const path = childPath(dir, entry.name);
      const relPath = rel === '' ? entry.name : `${rel}/${entry.name}`;
      let stats: Stats | null = null;
      if (link) {
        stats = statOrNull(path);
        if (!stats) continue;
        isDir = stats.isDirectory();
      }
      if (isDir) {
        if (!glob.literal && !glob.mayContain(relPath)) continue;
        const dirStats = stats ?? statOrNull(path);
        if (!dirStats || visited.has(dirStats.ino)) continue;
        visited.add(dirStats.ino);
        walk(path, dirStats, relPath, dataset);
        continue;
      }
      if (!glob.literal && !glob.matches(relPath)) continue;
      const kind = fileKind(entry.name);
      if (kind === null || (dataset && kind === 'parquet')) continue;
      const fileStats = stats ?? statOrNull(path);
      if (fileStats) addFile(out, path, fileStats);
    }
  };
  walk(glob.base, root, '', enclosing);
  return out;
}

/** `join(dir, name)` for a normalised folder and a bare entry name, without re-normalising. */
function childPath(dir: string, name: string): string {
  return dir.endsWith(sep) ? dir + name : dir + sep + name;
}

function addFile(out: GlobListing, path: string, stats: Stats): void {
  const kind = fileKind(path);
  if (kind === null) return;
  if (!stats.isFile()) {
    out.irregular.push(path);
    return;
  }
  out.files.push({ path, kind, size: stats.size, mtimeMs: stats.mtimeMs, ino: stats.ino });
}

/**
 * The compacted dataset a glob's fixed folder (or named file) lies in: itself or one of its two
 * parents holding `_compact/` (a dataset has one level of `date=` folders below its root), or null.
 */
function enclosingDataset(folder: string): string | null {
  for (const dir of [folder, dirname(folder), dirname(dirname(folder))]) {
    if (statOrNull(join(dir, DATASET_LOG_DIR))?.isDirectory()) return dir;
  }
  return null;
}

/** The stats of a path, or null when it cannot be had (gone, a file in the way, no permission). */
export function statOrNull(path: string): Stats | null {
  try {
    // A missing path is the common miss (the dataset probes of every listing): no exception for it.
    return statSync(path, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null;
  }
}
