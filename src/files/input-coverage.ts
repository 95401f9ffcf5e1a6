import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';
import type { InputRecord } from '../dataset/dataset-log';
import type { ListedFile } from './list-glob';

/** Bytes of a file's head and of the stretch before a covered end that a query compares. */
export const HEAD_BYTES = 4096;
export const TAIL_BYTES = 4096;

/** The input records of every dataset of a source, indexed for lookups by path and by content. */
export class InputIndex {
  private readonly byPath = new Map<string, InputRecord[]>();
  private readonly byHead = new Map<string, InputRecord[]>();

  constructor(records: Iterable<InputRecord>) {
    for (const r of records) {
      push(this.byPath, r.path, r);
      if (r.start === 0) push(this.byHead, headKey(r.headBytes, r.head), r);
    }
  }

  get size(): number {
    return this.byPath.size;
  }

  /** The records of a path, in byte order. */
  recordsOf(path: string): InputRecord[] {
    return (this.byPath.get(path) ?? []).slice().sort((a, b) => a.start - b.start || a.end - b.end);
  }

  /** First-range records of other paths whose head has this hash (a file renamed after compaction). */
  withHead(headBytes: number, head: string): InputRecord[] {
    return this.byHead.get(headKey(headBytes, head)) ?? [];
  }
}

function headKey(bytes: number, hash: string): string {
  return `${bytes}:${hash}`;
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/**
 * Hashes of byte ranges of files, kept per file version (path, size, mtime, inode): a query
 * compares a few KiB of a file against the records once per version, not on every query.
 */
export class RangeHashes {
  private readonly known = new Map<string, string | null>();

  /** sha256 of [start, end) of the file as listed, or null when it cannot be read now. */
  of(file: ListedFile, start: number, end: number): string | null {
    const key = `${file.path}\0${file.size}\0${file.mtimeMs}\0${file.ino}\0${start}\0${end}`;
    if (this.known.has(key)) return this.known.get(key)!;
    const hash = hashRange(file.path, start, end);
    if (this.known.size > 20_000) this.known.clear();
    this.known.set(key, hash);
    return hash;
  }
}

/** sha256 (hex) of bytes [start, end) of a file; null when it is gone, unreadable or shorter. */
export function hashRange(path: string, start: number, end: number): string | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return null;
  }
  try {
    const hash = createHash('sha256');
    const buffer = Buffer.allocUnsafe(Math.min(1 << 20, Math.max(1, end - start)));
    let position = start;
    while (position < end) {
      const n = readSync(fd, buffer, 0, Math.min(buffer.length, end - position), position);
      if (n === 0) return null;
      hash.update(buffer.subarray(0, n));
      position += n;
    }
    return hash.digest('hex');
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** The end of the run of records covering a file from byte 0 without a gap, with the last one. */
export function contiguousCoverage(records: readonly InputRecord[]): { end: number; first: InputRecord; last: InputRecord; skippedLines: number } | null {
  const first = records.find((r) => r.start === 0);
  if (!first) return null;
  let last = first;
  let skippedLines = first.skippedLines;
  for (const r of records) {
    if (r.start <= last.end && r.end > last.end) {
      last = r;
      skippedLines += r.skippedLines;
    }
  }
  return { end: last.end, first, last, skippedLines };
}

/**
 * How many leading bytes of a listed NDJSON file a compacted dataset already holds (0: none;
 * `file.size`: all of it). A file is recognised by its path or, when it was renamed (rotated)
 * after compaction, by its content: the first bytes and the 4 KiB before the covered end must be
 * the recorded ones. A compressed file is covered whole or not at all.
 */
export function coveredBytes(file: ListedFile, index: InputIndex, hashes: RangeHashes, listed: ReadonlyMap<string, ListedFile>): number {
  if (index.size === 0) return 0;
  const own = covered(file, index.recordsOf(file.path), hashes);
  if (own > 0) return own;
  let best = 0;
  for (const path of renamedFrom(file, index, hashes, listed)) best = Math.max(best, covered(file, index.recordsOf(path), hashes));
  return best;
}

/**
 * Recorded paths this file may have been renamed from: records whose first bytes are this file's,
 * under a path that no longer holds that content (gone, or holding new logs since). A byte-for-byte
 * copy whose original is still in place is not a rename: it is compacted as a file of its own.
 */
export function renamedFrom(file: ListedFile, index: InputIndex, hashes: RangeHashes, listed: ReadonlyMap<string, ListedFile>): string[] {
  const bytes = Math.min(HEAD_BYTES, file.size);
  const head = bytes > 0 ? hashes.of(file, 0, bytes) : null;
  if (head === null) return [];
  const out = new Set<string>();
  for (const r of index.withHead(bytes, head)) {
    if (r.path === file.path || out.has(r.path)) continue;
    const original = listed.get(r.path);
    if (original && covered(original, index.recordsOf(r.path), hashes) > 0) continue;
    out.add(r.path);
  }
  return [...out];
}

function covered(file: ListedFile, records: readonly InputRecord[], hashes: RangeHashes): number {
  const run = contiguousCoverage(records);
  if (!run || run.end > file.size) return 0;
  if (run.first.compressed && run.end !== file.size) return 0;
  if (hashes.of(file, 0, run.first.headBytes) !== run.first.head) return 0;
  if (hashes.of(file, Math.max(0, run.end - TAIL_BYTES), run.end) !== run.last.tail) return 0;
  return run.end;
}
