import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FileRange } from './source-reader';
import { copyByteRange } from './copy-byte-range';

/** Most bytes of range copies kept for reuse; older ones are deleted first. */
const KEEP_BYTES = 512 * 1024 * 1024;

interface Copy {
  path: string;
  start: number;
  /** Bytes of the source copied so far: [start, end). */
  end: number;
  /** The work on this copy (creating or extending it), in order. */
  ready: Promise<void>;
}

/**
 * DuckDB reads whole files; the part of an NDJSON file that no compacted dataset holds yet (the
 * tail of a log still being appended, the committed part of a write-ahead segment) is copied to a
 * private temporary file and read from there. Logs only grow, so a copy is extended by the bytes
 * appended since, never made again: a query over a busy log copies what is new since the last one.
 * A reader of a copy that grows meanwhile may see those newer lines too: lines no dataset holds,
 * so it never counts an event twice.
 *
 * The copies' folder is made at the first copy, not with the instance: most engines never copy a
 * range, and a folder made at start stayed behind empty whenever the engine was not closed (a
 * process killed by a signal it did not handle, a test runner's workers: hundreds a day).
 */
export class RangeCopies {
  private dir: string | null = null;
  /** By file identity (path, inode) and start. */
  private readonly copies = new Map<string, Copy>();
  private bytes = 0;
  private sequence = 0;

  /** The path of a file holding bytes [start, end) of the range's file (or more, see above). */
  async copy(range: FileRange): Promise<string> {
    const { file, start, end } = range;
    const key = `${file.path}\0${file.ino}\0${start}`;
    let copy = this.copies.get(key);
    if (copy && copy.end > end) {
      // The file shrank (truncated, rewritten): this copy holds bytes it no longer has.
      this.forget(key);
      copy = undefined;
    }
    if (!copy) {
      // Made again when gone: a cleaner of the temporary folder may remove one unused for days.
      if (this.dir === null || !existsSync(this.dir)) this.dir = mkdtempSync(join(tmpdir(), 'log-endpoints-ranges-'));
      copy = { path: join(this.dir, `${++this.sequence}.ndjson`), start, end: start, ready: Promise.resolve() };
      this.copies.set(key, copy);
    } else {
      // Most recently used last: trimming takes the oldest first.
      this.copies.delete(key);
      this.copies.set(key, copy);
    }
    const target = copy;
    const extend = target.ready.then(async () => {
      if (target.end >= end) return;
      const from = target.end;
      await copyByteRange(file.path, from, end, target.path, true);
      target.end = end;
      this.bytes += end - from;
    });
    target.ready = extend.catch(() => undefined);
    try {
      await extend;
    } catch (error) {
      this.forget(key);
      throw error;
    }
    this.trim(key);
    return target.path;
  }

  /** Removes every copy (the engine is closing). */
  close(): void {
    this.copies.clear();
    if (this.dir !== null) rmSync(this.dir, { recursive: true, force: true });
    this.dir = null;
  }

  private trim(keep: string): void {
    for (const key of this.copies.keys()) {
      if (this.bytes <= KEEP_BYTES) break;
      if (key !== keep) this.forget(key);
    }
  }

  private forget(key: string): void {
    const copy = this.copies.get(key);
    if (!copy) return;
    this.copies.delete(key);
    this.bytes -= copy.end - copy.start;
    // A query may still be reading it; on Linux the open file stays readable after the unlink.
    void copy.ready.then(() => rm(copy.path, { force: true }));
  }
}
