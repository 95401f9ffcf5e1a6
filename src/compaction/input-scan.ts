import { createHash, type Hash } from 'node:crypto';
import { open } from 'node:fs/promises';
import type { InputRecord } from '../dataset/dataset-log';
import { contiguousCoverage, hashRange, HEAD_BYTES, InputIndex, RangeHashes, renamedFrom, TAIL_BYTES } from '../files/input-coverage';
import { statOrNull, type ListedFile } from '../files/list-glob';
import { InternalError } from '../util/internal-error';

/** What compaction learns from reading an input once, byte for byte. */
export interface InputScan {
  file: ListedFile;
  compressed: boolean;
  /** Bytes [0, covered) are verified to be in the dataset already (0: none). */
  covered: number;
  /** Lines of the covered bytes that were not events (they exist only in this file). */
  coveredSkippedLines: number;
  /**
   * Where the events that can be compacted now end: after the last complete line (a last line
   * without a newline counts when it is a whole JSON object; a half-written one waits).
   */
  end: number;
  /** The record this run would add for [covered, end). */
  record: Omit<InputRecord, 'rows' | 'skippedLines'>;
  /**
   * Its size, mtime and inode were the same once the scan had read it as at its listing: nobody
   * wrote to it meanwhile, so compaction may read it in place (else from a copy of its bytes).
   */
  steady: boolean;
}

const COMPRESSED = /\.(gz|zst)$/i;
/** A last line without a newline is examined up to this size to see whether it is complete. */
const LAST_LINE_LIMIT = 1 << 20;

/**
 * Reads an input file once: the sha256 of its prefix at every length a record of the dataset
 * (under its path, or its content under another path after a rotation) says is covered, so a
 * rerun compacts exactly the bytes that are new, whatever else joined the glob (docs/semantics.md, "Compacted datasets").
 */
export async function scanInput(file: ListedFile, index: InputIndex, listed: ReadonlyMap<string, ListedFile>, hashes: RangeHashes): Promise<InputScan> {
  const compressed = COMPRESSED.test(file.path);
  const candidates = candidateRuns(file, index, listed, hashes);
  const boundaries = new Set<number>([Math.min(HEAD_BYTES, file.size)]);
  for (const run of candidates) if (run.end <= file.size) boundaries.add(run.end);
  const pass = await hashPass(
    file,
    [...boundaries].sort((a, b) => a - b),
  );

  let covered = 0;
  let coveredSkippedLines = 0;
  for (const run of candidates) {
    if (run.end > file.size || run.end <= covered) continue;
    if (compressed && run.end !== file.size) continue;
    if (pass.at.get(run.end) === run.last.sha256) {
      covered = run.end;
      coveredSkippedLines = run.skippedLines;
    }
  }

  let end: number;
  let sha256: string;
  if (compressed) {
    // Compressed bytes cannot be cut at a line: a compressed file is compacted whole.
    end = file.size;
    sha256 = pass.whole;
  } else if (pass.lastLineEnd === file.size || (await completeLastLine(file, pass.lastLineEnd))) {
    end = file.size;
    sha256 = pass.whole;
  } else {
    end = pass.lastLineEnd;
    sha256 = pass.atLastLineEnd;
  }
  if (end < covered) end = covered;
  // Seen twice, at the listing and after the whole read: no clock compared with an mtime (skewed
  // clocks, a file another host writes), only what this file said of itself.
  const after = statOrNull(file.path);
  const steady = after !== null && after.size === file.size && after.mtimeMs === file.mtimeMs && after.ino === file.ino;
  const headBytes = Math.min(HEAD_BYTES, end);
  return {
    file,
    compressed,
    covered,
    coveredSkippedLines,
    end,
    record: {
      path: file.path,
      start: covered,
      end,
      sha256: end === covered && covered > 0 ? pass.at.get(covered)! : sha256,
      head: pass.at.get(headBytes) ?? hashRange(file.path, 0, headBytes) ?? '',
      headBytes,
      tail: hashRange(file.path, Math.max(0, end - TAIL_BYTES), end) ?? '',
      compressed,
    },
    steady,
  };
}

/** Covered runs that may apply to this file: its own path's, then a renamed file's (by content). */
function candidateRuns(file: ListedFile, index: InputIndex, listed: ReadonlyMap<string, ListedFile>, hashes: RangeHashes) {
  const runs: Array<NonNullable<ReturnType<typeof contiguousCoverage>>> = [];
  for (const path of [file.path, ...renamedFrom(file, index, hashes, listed)]) {
    const run = contiguousCoverage(index.recordsOf(path));
    if (run) runs.push(run);
  }
  return runs;
}

interface HashPass {
  /** sha256 of the prefix ending at each requested boundary. */
  at: Map<number, string>;
  whole: string;
  /** Offset just after the last newline (0 when there is none). */
  lastLineEnd: number;
  atLastLineEnd: string;
}

/** One sequential read of the file up to its listed size, hashing as it goes. */
async function hashPass(file: ListedFile, boundaries: number[]): Promise<HashPass> {
  const hash = createHash('sha256');
  const at = new Map<number, string>();
  let atLastLineEnd = createHash('sha256').digest('hex');
  let lastLineEnd = 0;
  const handle = await open(file.path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(1 << 20);
    let position = 0;
    let next = 0;
    const snapshot = (h: Hash) => h.copy().digest('hex');
    if (boundaries[0] === 0) {
      at.set(0, snapshot(hash));
      next++;
    }
    while (position < file.size) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, file.size - position), position);
      if (bytesRead === 0) throw new InternalError('ENOENT', `${file.path} is shorter than when it was listed`);
      let chunk = buffer.subarray(0, bytesRead);
      let chunkStart = position;
      const newline = chunk.lastIndexOf(0x0a);
      const newlineAt = newline >= 0 ? chunkStart + newline + 1 : -1;
      // Feed the chunk in pieces that stop at each boundary and at the last newline.
      const stops = [...boundaries.slice(next).filter((b) => b <= chunkStart + bytesRead), ...(newlineAt > 0 ? [newlineAt] : [])].sort((a, b) => a - b);
      for (const stop of stops) {
        hash.update(chunk.subarray(0, stop - chunkStart));
        chunk = chunk.subarray(stop - chunkStart);
        chunkStart = stop;
        const digest = snapshot(hash);
        if (stop === newlineAt) {
          lastLineEnd = stop;
          atLastLineEnd = digest;
        }
        while (next < boundaries.length && boundaries[next] === stop) at.set(boundaries[next++]!, digest);
      }
      hash.update(chunk);
      position += bytesRead;
    }
  } finally {
    await handle.close();
  }
  const whole = hash.digest('hex');
  for (const b of boundaries) if (b === file.size) at.set(b, whole);
  return { at, whole, lastLineEnd, atLastLineEnd };
}

/** Whether the bytes after the last newline are a whole JSON value (or only blanks). */
async function completeLastLine(file: ListedFile, from: number): Promise<boolean> {
  if (file.size - from > LAST_LINE_LIMIT) return false;
  const handle = await open(file.path, 'r');
  try {
    const buffer = Buffer.alloc(file.size - from);
    await handle.read(buffer, 0, buffer.length, from);
    const text = buffer.toString('utf8').trim();
    if (text === '') return true;
    // A JSON object is never a proper prefix of another: if it parses, the writer finished it.
    // (A number could still grow, so anything but an object waits for its newline.)
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  } finally {
    await handle.close();
  }
}
