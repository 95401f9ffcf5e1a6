import { createReadStream, statSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { Writable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { ListedFile } from './list-glob';
import { fileCrc32 } from '../util/crc32';
import { systemMs } from '../time/clock';
import { EngineError } from '../errors';

/**
 * Why a file was left out of an answer (docs/semantics.md, "Files": a damaged file never takes its source down).
 * Stable codes, for programs; `message` says it in words.
 */
export type SkipReason =
  | 'not_regular_file'
  | 'unreadable'
  | 'not_parquet'
  | 'broken_compression'
  | 'unreadable_by_engine'
  // A file a compacted dataset's log names that is not there (deleted, or named wrongly in a commit).
  | 'missing'
  // An entry of a compacted dataset's log (a commit) that is cut short, garbled or missing.
  | 'damaged_log'
  // A compacted dataset's file whose bytes do not match the CRC-32 its commit recorded (changed on disk).
  | 'checksum_mismatch'
  // Managed storage's write-ahead segment left by the previous process, not read until recovered and compacted.
  | 'recovering'
  // Newline-delimited JSON by its name, but not one of its lines is a JSON object (CSV, plain text).
  | 'no_json_lines';

/** A file left out of an answer, and why. */
export interface SkippedFile {
  /** Absolute path. */
  path: string;
  reason: SkipReason;
  message: string;
}

/**
 * Checks each file version (path, size, mtime, inode) once before it is read: readable, a Parquet
 * footer where one is due, a complete gzip or zstd stream (DuckDB reads a truncated one silently,
 * as if the file ended early), and for newline-delimited JSON (plain or gzip) at least one line
 * that is a JSON object: a CSV or plain-text file named `.ndjson` gives no rows, and says so
 * instead of answering nothing in silence. Files the engine later fails on are marked here too,
 * so they stay out until they change.
 */
export class FileChecks {
  private readonly verdicts = new Map<string, Promise<SkippedFile | null>>();
  private readonly marked = new Map<string, SkippedFile>();
  private readonly digests = new Map<string, Promise<SkippedFile | null>>();

  /** Null when the file can be read, else why not. */
  check(file: ListedFile): Promise<SkippedFile | null> {
    const key = versionKey(file);
    const marked = this.marked.get(key) ?? this.markedDatasetFile(file);
    if (marked) return Promise.resolve(marked);
    let verdict = this.verdicts.get(key);
    if (!verdict) {
      if (this.verdicts.size > 20_000) this.verdicts.clear();
      verdict = checkFile(file);
      this.verdicts.set(key, verdict);
      // A missing file is looked for again next time (restored, it is read at once).
      void verdict.then((v) => {
        if (v?.reason === 'missing') this.verdicts.delete(key);
      });
    }
    return verdict;
  }

  /**
   * Null when a dataset's file holds the bytes its commit recorded (its CRC-32; a file without one
   * is taken as it is), else why not. Read whole once per file version (path, size, mtime, ctime,
   * inode) and CRC-32, then remembered; a version changed in the last two seconds is read again
   * next time (two writes within one timestamp tick look alike, as in `DirectoryCache`).
   */
  verify(file: ListedFile): Promise<SkippedFile | null> {
    if (file.crc32 === undefined) return Promise.resolve(null);
    const key = `${versionKey(file)}\0${file.crc32}`;
    const marked = this.marked.get(versionKey(file));
    if (marked) return Promise.resolve(marked);
    let verdict = this.digests.get(key);
    if (!verdict) {
      if (this.digests.size > 20_000) this.digests.clear();
      verdict = verifyCrc(file, file.crc32);
      this.digests.set(key, verdict);
      const recent = systemMs() - Math.max(file.mtimeMs, file.ctimeMs ?? 0) < 2000;
      void verdict.then(
        (v) => {
          if (recent || v?.reason === 'missing') this.digests.delete(key);
        },
        () => this.digests.delete(key),
      );
    }
    return verdict;
  }

  /** The engine failed on this file version: keep it out until it changes. */
  mark(file: ListedFile, reason: SkipReason, message: string): SkippedFile {
    const skipped = { path: file.path, reason, message };
    if (this.marked.size > 20_000) this.marked.clear();
    this.marked.set(versionKey(file), skipped);
    if (file.dataset) this.markedPaths.set(file.path, versionKey(file));
    return skipped;
  }

  /** Dataset files marked, by path, with the version marked: a listing (which does not stat them) still leaves them out. */
  private readonly markedPaths = new Map<string, string>();

  /**
   * A dataset's file is listed from its log, without its mtime and inode (no stat per file and
   * query). One marked damaged (found by a checksum or the engine, at a version known then) is
   * looked at on disk: the same version stays out, head and stored rollups included; a changed
   * one is checked again.
   */
  private markedDatasetFile(file: ListedFile): SkippedFile | undefined {
    const key = file.dataset ? this.markedPaths.get(file.path) : undefined;
    if (key === undefined) return undefined;
    const stats = statSync(file.path, { throwIfNoEntry: false });
    const now = stats ? versionKey({ ...file, size: stats.size, mtimeMs: stats.mtimeMs, ctimeMs: stats.ctimeMs, ino: stats.ino }) : null;
    if (now === key) return this.marked.get(key);
    this.markedPaths.delete(file.path);
    return undefined;
  }
}

function versionKey(file: ListedFile): string {
  return `${file.path}\0${file.size}\0${file.mtimeMs}\0${file.ino}\0${file.ctimeMs ?? ''}`;
}

/** The file's CRC-32 against the one its commit recorded. */
async function verifyCrc(file: ListedFile, expected: number): Promise<SkippedFile | null> {
  try {
    const crc = await fileCrc32(file.path);
    if (crc === expected) return null;
    return { path: file.path, reason: 'checksum_mismatch', message: 'its bytes do not match the checksum its commit recorded (changed on disk)' };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { path: file.path, reason: 'missing', message: "named by its dataset's log but not on disk" };
    // A shortage of the process, not a fault of the file: never a reason to leave a file out.
    if (code === 'EMFILE' || code === 'ENFILE' || code === 'ENOMEM' || code === 'EAGAIN') {
      throw new EngineError('overloaded', 'The process is short of open files or memory for now; retry shortly.', { cause: error, retryAfterSeconds: 1 });
    }
    return { path: file.path, reason: 'unreadable', message: `cannot be read (${code ?? String(error)})` };
  }
}

async function checkFile(file: ListedFile): Promise<SkippedFile | null> {
  let handle: FileHandle;
  try {
    handle = await open(file.path, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Named by a dataset's log, it should be there; anything else that is gone was rotated or
    // compacted away, and the listing of the next attempt will not have it.
    if (code === 'ENOENT') return file.dataset ? { path: file.path, reason: 'missing', message: "named by its dataset's log but not on disk" } : null;
    return { path: file.path, reason: 'unreadable', message: `cannot be opened (${code ?? String(error)})` };
  }
  try {
    if (file.dataset) {
      const stats = await handle.stat();
      if (!stats.isFile()) return { path: file.path, reason: 'unreadable', message: 'not a regular file' };
      const size = stats.size;
      // Dataset files never change once committed: another size is a file cut short or replaced.
      if (size !== file.size) return { path: file.path, reason: 'not_parquet', message: `holds ${size} bytes, not the ${file.size} its commit recorded` };
    }
    if (file.kind === 'parquet') return await checkParquet(file, handle);
    if (/\.gz$/i.test(file.path)) return await checkGzip(file);
    // Node 20 has no zstd decoder: a .zst file's lines are not looked at.
    if (/\.zst$/i.test(file.path)) return await checkZstd(file, handle);
    return await checkLines(file);
  } finally {
    await handle.close();
  }
}

const PAR1 = Buffer.from('PAR1');

/** A Parquet file starts and ends with `PAR1`, and its footer length fits in the file. */
async function checkParquet(file: ListedFile, handle: FileHandle): Promise<SkippedFile | null> {
  const bad = (message: string): SkippedFile => ({ path: file.path, reason: 'not_parquet', message });
  if (file.size < 12) return bad(`not a Parquet file (${file.size} bytes)`);
  const head = Buffer.alloc(4);
  const tail = Buffer.alloc(8);
  await handle.read(head, 0, 4, 0);
  await handle.read(tail, 0, 8, file.size - 8);
  if (!head.equals(PAR1) || !tail.subarray(4).equals(PAR1)) return bad('not a Parquet file (no PAR1 magic bytes)');
  if (tail.readUInt32LE(0) + 12 > file.size) return bad('not a Parquet file (its footer is cut off)');
  return null;
}

/**
 * Inflates the whole stream: a cut or garbled gzip file fails here rather than reading short.
 * Its lines are looked at on the way (see `checkLines`).
 */
async function checkGzip(file: ListedFile): Promise<SkippedFile | null> {
  const lines = new EventLineSearch();
  try {
    await pipeline(createReadStream(file.path), createGunzip(), lines);
  } catch (error) {
    return { path: file.path, reason: 'broken_compression', message: `broken gzip stream (${(error as Error).message})` };
  }
  return lines.verdict(file);
}

/** Reads a plain NDJSON file up to its first line that is a JSON object (most often the first line). */
async function checkLines(file: ListedFile): Promise<SkippedFile | null> {
  const lines = new EventLineSearch();
  const stream = createReadStream(file.path);
  try {
    for await (const chunk of stream) {
      lines.add(chunk as Buffer);
      if (lines.found) break;
    }
  } catch (error) {
    // Gone or cut while read: the listing of the next attempt knows better.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  } finally {
    stream.destroy();
  }
  return lines.verdict(file);
}

/** Longer lines are not events: DuckDB's default maximum_object_size (16 MiB) refuses them too. */
const MAX_LINE_BYTES = 16 * 2 ** 20;

/**
 * Takes a file's bytes and looks for one line that is a JSON object, as the engine reads lines
 * (blank lines ignored, `\r\n` allowed, the last line with or without its newline). Once one is
 * found, the rest is only passed through.
 */
class EventLineSearch extends Writable {
  found = false;
  /** Non-blank lines seen before the first JSON object (all of them when there is none). */
  lines = 0;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private overlong = false;
  private first = true;

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.add(chunk);
    done();
  }

  add(chunk: Buffer): void {
    if (this.found) return;
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1 && !this.found; nl = chunk.indexOf(10, start)) {
      this.take(chunk.subarray(start, nl));
      this.endLine();
      start = nl + 1;
    }
    if (!this.found) this.take(chunk.subarray(start));
  }

  /** Null when a line is an event or the file has no line at all; otherwise why it is left out. */
  verdict(file: ListedFile): SkippedFile | null {
    if (!this.found && this.pendingBytes > 0) this.endLine();
    if (this.found || this.lines === 0) return null;
    const count = this.lines === 1 ? 'its one line is not a JSON object' : `none of its ${this.lines} lines is a JSON object`;
    return { path: file.path, reason: 'no_json_lines', message: `${count} (CSV or plain text named like newline-delimited JSON?)` };
  }

  private take(part: Buffer): void {
    if (this.overlong || part.length === 0) return;
    this.pendingBytes += part.length;
    if (this.pendingBytes > MAX_LINE_BYTES) {
      this.overlong = true;
      this.pending = [];
    } else {
      this.pending.push(part);
    }
  }

  private endLine(): void {
    let text = this.overlong ? 'x' : Buffer.concat(this.pending).toString('utf8');
    if (this.first) text = text.replace(/^\uFEFF/, '');
    this.first = false;
    this.pending = [];
    this.pendingBytes = 0;
    this.overlong = false;
    text = text.trim();
    if (text === '') return;
    this.lines++;
    if (text.startsWith('{') && isObject(text)) this.found = true;
  }
}

/**
 * Lines longer than this that start with `{` and end with `}` count as objects unparsed: the check
 * tells log files from CSV or text named like them, and `JSON.parse` of an 11 MB event of 650,000
 * keys held the main thread for 1.5 s (DuckDB still leaves out a line that is not JSON after all).
 */
const PARSED_LINE_CHARS = 64 * 1024;

function isObject(text: string): boolean {
  if (text.length > PARSED_LINE_CHARS) return text.endsWith('}');
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

const ZSTD_FRAME = 0xfd2fb528;

/**
 * Walks the zstd frames and their block headers without decompressing: every block must fit in
 * the file and every frame must end with a last block (Node 20 has no zstd decoder).
 */
async function checkZstd(file: ListedFile, handle: FileHandle): Promise<SkippedFile | null> {
  const bad = (message: string): SkippedFile => ({ path: file.path, reason: 'broken_compression', message: `broken zstd stream (${message})` });
  const buf = Buffer.alloc(18);
  const readAt = async (position: number, length: number) => {
    const { bytesRead } = await handle.read(buf, 0, length, position);
    return bytesRead === length;
  };
  let offset = 0;
  if (file.size === 0) return bad('empty file');
  while (offset < file.size) {
    if (!(await readAt(offset, 4))) return bad('cut inside a frame header');
    const magic = buf.readUInt32LE(0);
    if ((magic & 0xfffffff0) === 0x184d2a50) {
      if (!(await readAt(offset + 4, 4))) return bad('cut inside a skippable frame');
      offset += 8 + buf.readUInt32LE(0);
      continue;
    }
    if (magic !== ZSTD_FRAME) return bad('not a zstd frame');
    if (!(await readAt(offset + 4, 1))) return bad('cut inside a frame header');
    const descriptor = buf[0]!;
    const singleSegment = (descriptor >> 5) & 1;
    const checksum = (descriptor >> 2) & 1;
    const dictionaryBytes = [0, 1, 2, 4][descriptor & 3]!;
    const sizeFlag = descriptor >> 6;
    const contentSizeBytes = sizeFlag === 0 ? singleSegment : [0, 2, 4, 8][sizeFlag]!;
    let position = offset + 4 + 1 + (singleSegment ? 0 : 1) + dictionaryBytes + contentSizeBytes;
    for (;;) {
      if (!(await readAt(position, 3))) return bad('cut inside a block header');
      const header = buf[0]! | (buf[1]! << 8) | (buf[2]! << 16);
      const last = header & 1;
      const type = (header >> 1) & 3;
      if (type === 3) return bad('reserved block type');
      position += 3 + (type === 1 ? 1 : header >>> 3);
      if (position > file.size) return bad('cut inside a block');
      if (last) break;
    }
    offset = position + (checksum ? 4 : 0);
    if (offset > file.size) return bad('cut inside the checksum');
  }
  return null;
}
