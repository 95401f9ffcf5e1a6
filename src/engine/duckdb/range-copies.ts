import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { FileRange } from '../../storage/source-reader';

/** Most bytes of range copies kept for reuse; older ones are deleted first. */
const KEEP_BYTES = 512 * 1024 * 1024;

/**
 * DuckDB reads whole files; the part of an NDJSON file that no compacted dataset holds yet (the
 * tail of a log still being appended, the committed part of a write-ahead segment) is copied to a
 * private temporary file and read from there. A copy is kept while its file version stays the
 * same, so repeated queries copy nothing.
 */
export class RangeCopies {
  private readonly dir = mkdtempSync(join(tmpdir(), 'log-endpoints-ranges-'));
  private readonly copies = new Map<string, { path: string; bytes: number; ready: Promise<string> }>();
  private bytes = 0;
  private sequence = 0;

  /** The path of a file holding exactly bytes [start, end) of the range's file. */
  async copy(range: FileRange): Promise<string> {
    const { file, start, end } = range;
    const key = `${file.path}\0${file.size}\0${file.mtimeMs}\0${file.ino}\0${start}\0${end}`;
    const known = this.copies.get(key);
    if (known) {
      this.copies.delete(key);
      this.copies.set(key, known);
      return known.ready;
    }
    const path = join(this.dir, `${++this.sequence}.ndjson`);
    const ready = pipeline(createReadStream(file.path, { start, end: end - 1 }), createWriteStream(path)).then(() => path);
    const entry = { path, bytes: end - start, ready };
    this.copies.set(key, entry);
    this.bytes += entry.bytes;
    ready.catch(() => this.forget(key));
    this.trim(key);
    return ready;
  }

  /** Removes every copy (the engine is closing). */
  close(): void {
    this.copies.clear();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private trim(keep: string): void {
    for (const key of this.copies.keys()) {
      if (this.bytes <= KEEP_BYTES || key === keep) break;
      this.forget(key);
    }
  }

  private forget(key: string): void {
    const entry = this.copies.get(key);
    if (!entry) return;
    this.copies.delete(key);
    this.bytes -= entry.bytes;
    // A query may still be reading it; on Linux the open file stays readable after the unlink.
    void entry.ready.then((path) => rm(path, { force: true }), () => rm(entry.path, { force: true }));
  }
}
