import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * The longest line DuckDB's NDJSON reader is sure to take: its `maximum_object_size` (16 MiB). Its
 * buffer holds twice that, and a longer line fails the whole file; raising the option raises the
 * memory every read of every file allocates (two buffers of twice the size), so it stays.
 */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;

/** Copies kept at most; the oldest is deleted first. */
const KEEP = 32;

/**
 * Copies of NDJSON files in which every line longer than `MAX_LINE_BYTES` is replaced by a short
 * line that is not JSON, so that such a line (a log line cut into a 40 MB one) costs only itself:
 * it is counted as a broken line, and the rest of its file is read. Made only for files the
 * engine failed on for that reason, once per file version.
 *
 * @example
 * const copies = new LongLineCopies();
 * const readable = await copies.copy('/logs/edge.ndjson', versionKey); // read this one instead
 */
export class LongLineCopies {
  private dir: string | null = null;
  private readonly copies = new Map<string, Promise<string>>();
  private sequence = 0;

  /** The path of a copy of `path` (whose version `key` names) without its long lines. */
  copy(path: string, key: string): Promise<string> {
    let made = this.copies.get(key);
    if (!made) {
      this.dir ??= mkdtempSync(join(tmpdir(), 'log-endpoints-long-lines-'));
      const target = join(this.dir, `${++this.sequence}.ndjson`);
      made = pipeline(createReadStream(path), new DropLongLines(MAX_LINE_BYTES), createWriteStream(target)).then(() => target);
      made.catch(() => this.copies.delete(key));
      this.copies.set(key, made);
      for (const [old, copy] of this.copies) {
        if (this.copies.size <= KEEP) break;
        this.copies.delete(old);
        // A query may still be reading it; on Linux the open file stays readable after the unlink.
        void copy.then(
          (file) => rm(file, { force: true }),
          () => undefined,
        );
      }
    }
    return made;
  }

  close(): void {
    this.copies.clear();
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Passes lines through; a line past `max` bytes becomes `<line of N bytes left out: ...>`. */
class DropLongLines extends Transform {
  /** Bytes of the current line seen so far, and whether it is already past the limit (being dropped). */
  private length = 0;
  private dropping = false;
  /** The start of the current line, held until it is known to fit. */
  private held: Buffer[] = [];

  constructor(private readonly max: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let start = 0;
    for (let nl = chunk.indexOf(0x0a); ; nl = chunk.indexOf(0x0a, start)) {
      const end = nl < 0 ? chunk.length : nl;
      this.keep(chunk.subarray(start, end));
      if (nl < 0) break;
      this.endLine();
      this.push(Buffer.from('\n'));
      start = nl + 1;
    }
    done();
  }

  override _flush(done: TransformCallback): void {
    if (this.length > 0) this.endLine();
    done();
  }

  private keep(piece: Buffer): void {
    this.length += piece.length;
    if (this.dropping) return;
    if (this.length > this.max) {
      this.dropping = true;
      this.held = [];
      return;
    }
    // Held until the line ends: its start may still turn out part of a line too long.
    this.held.push(Buffer.from(piece));
  }

  private endLine(): void {
    if (this.dropping) this.push(Buffer.from(`<line of ${this.length} bytes left out: longer than the ${this.max} bytes a line may have>`));
    else for (const piece of this.held) this.push(piece);
    this.held = [];
    this.length = 0;
    this.dropping = false;
  }
}
