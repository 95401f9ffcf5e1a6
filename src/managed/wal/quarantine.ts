import { mkdir, open, readdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { writeFileAtomic } from '../../util/durable-fs';
import { isCode } from '../../util/durable-fs';

/** Why bytes of a write-ahead segment were set aside. */
export type QuarantineReason =
  /** They fail their group's checksum (changed on disk): they are not what was acknowledged. */
  | 'damaged'
  /** Lines that verify but that no query can read (written by an older version, or a rule both sides missed). */
  | 'unreadable';

/** What a quarantine file says about itself (its first line). */
export interface QuarantineEntry {
  reason: QuarantineReason;
  /** The segment the bytes come from (its file name). */
  segment: string;
  /** Byte offset of the first byte in the segment (of each line, for `unreadable`). */
  offsets: number[];
  /** Bytes set aside (header excluded). */
  bytes: number;
  /** Lines among them (damaged bytes: newline-ended pieces, at least 1). */
  lines: number;
  /** Said to people: what was wrong. */
  message: string;
}

/** Totals of a quarantine folder. */
export interface QuarantineCounts {
  files: number;
  bytes: number;
  lines: number;
}

/** File names end so; anything else in the folder is not counted. */
const EXTENSION = '.quarantined';

/**
 * `<dataDir>/<source>/quarantine/`: bytes managed storage keeps but cannot serve, each set with
 * its reason, so nothing acknowledged is ever deleted unseen and nothing damaged is ever served.
 * One file per set: a JSON line `{"quarantined": QuarantineEntry}`, then the bytes exactly as
 * they were in the segment. Written whole or not at all (temporary name, fsync, rename), under a
 * name fixed by the segment and offset, so a crash midway and a second attempt give one file.
 *
 * @example
 * const q = await Quarantine.open('data/edgeLogs/quarantine');
 * await q.put({ reason: 'damaged', segment: '00000000000000000003.ndjson', offsets: [4096], bytes: 512, lines: 3, message: '…' }, bytes);
 * q.counts; // { files: 1, bytes: 512, lines: 3 }
 */
export class Quarantine {
  private totals: QuarantineCounts;

  private constructor(
    readonly dir: string,
    counts: QuarantineCounts,
    private readonly onPut: (entry: QuarantineEntry & { file: string }) => void,
  ) {
    this.totals = counts;
  }

  /** The folder's quarantine (it is created at the first `put`), counted now. */
  static async open(dir: string, onPut: (entry: QuarantineEntry & { file: string }) => void = () => undefined): Promise<Quarantine> {
    return new Quarantine(dir, await countFolder(dir), onPut);
  }

  /** What is in the folder: files, bytes set aside and lines among them. */
  get counts(): QuarantineCounts {
    return { ...this.totals };
  }

  /** Sets `data` aside with its entry, durably, and tells the listener; returns the file's path. */
  async put(entry: QuarantineEntry, data: Uint8Array): Promise<string> {
    await mkdir(this.dir, { recursive: true });
    const name = `${basename(entry.segment, '.ndjson')}-${entry.reason}-${String(entry.offsets[0] ?? 0).padStart(12, '0')}${EXTENSION}`;
    const file = join(this.dir, name);
    const existed = await sizeOf(file);
    const header = Buffer.from(`${JSON.stringify({ quarantined: entry })}\n`);
    await writeFileAtomic(file, Buffer.concat([header, data]), 'replace');
    // A second attempt after a crash replaces the same file: counted once.
    if (existed === null) this.totals = { files: this.totals.files + 1, bytes: this.totals.bytes + entry.bytes, lines: this.totals.lines + entry.lines };
    try {
      this.onPut({ ...entry, file });
    } catch {
      // A failing listener must not undo what is on disk.
    }
    return file;
  }
}

async function countFolder(dir: string): Promise<QuarantineCounts> {
  const counts: QuarantineCounts = { files: 0, bytes: 0, lines: 0 };
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if (isCode(error, 'ENOENT')) return counts;
    throw error;
  }
  for (const name of names.filter((n) => n.endsWith(EXTENSION))) {
    const entry = await headerOf(join(dir, name));
    counts.files++;
    counts.bytes += entry?.bytes ?? 0;
    counts.lines += entry?.lines ?? 0;
  }
  return counts;
}

/** The entry at the head of a quarantine file (null when it cannot be read: still counted as a file). */
export async function headerOf(path: string): Promise<QuarantineEntry | null> {
  const handle = await open(path, 'r').catch(() => null);
  if (!handle) return null;
  try {
    // The header names every line's offset: a segment's worth of them fits in a few MiB.
    const buffer = Buffer.alloc(Math.min((await handle.stat()).size, 8 * 1024 * 1024));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const end = buffer.subarray(0, bytesRead).indexOf(0x0a);
    const parsed = JSON.parse(buffer.subarray(0, end < 0 ? bytesRead : end).toString('utf8')) as { quarantined?: QuarantineEntry };
    return parsed.quarantined ?? null;
  } catch {
    return null;
  } finally {
    await handle.close();
  }
}

async function sizeOf(path: string): Promise<number | null> {
  try {
    return (await stat(path)).size;
  } catch (error) {
    if (isCode(error, 'ENOENT')) return null;
    throw error;
  }
}
