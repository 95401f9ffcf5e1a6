import { mkdir } from 'node:fs/promises';
import { basename, join, resolve, sep } from 'node:path';
import type { SourceName } from '../../engine/engine';
import { EngineError } from '../../errors';
import type { LockTiming } from '../lock-file';
import { lockDataDir, type DataDirLock } from './data-dir-lock';
import { Wal, type WalOptions } from './wal';

/** The sources managed storage keeps, each in `<dataDir>/<source>/`. */
export const STORAGE_SOURCES: readonly SourceName[] = ['edgeLogs', 'functionEdgeLogs'];

/** The WAL folder of a source: `<dataDir>/<source>/wal`. */
export function walDir(dataDir: string, source: SourceName): string {
  return join(resolve(dataDir), source, 'wal');
}

/**
 * The managed data dir a path lies in (`<dataDir>/<source>/wal/...` or `.../parquet/...`), or
 * null: `compact` run by hand on such a path takes the data dir's lock, so it never races the
 * process that writes there.
 *
 * @example
 * dataDirAround('/srv/data/edgeLogs/wal/00000000000000000003.ndjson'); // '/srv/data'
 */
export function dataDirAround(path: string): string | null {
  const parts = resolve(path).split(sep);
  for (let i = parts.length - 2; i >= 1; i--) {
    if ((STORAGE_SOURCES as readonly string[]).includes(parts[i]!) && (parts[i + 1] === 'wal' || parts[i + 1] === 'parquet')) {
      return parts.slice(0, i).join(sep) || sep;
    }
  }
  return null;
}

/** The locked data dir and one WAL per source. */
export interface WalSet {
  readonly dataDir: string;
  readonly wals: Readonly<Record<SourceName, Wal>>;
  /** Flushes and closes every WAL, then releases the data dir's lock. */
  close(): Promise<void>;
}

/**
 * Opens managed storage's write-ahead logs: takes the data dir's lock (refusing a dir another
 * live process holds; `lockTiming` is for tests), then opens and recovers `<dataDir>/<source>/wal`
 * for each source.
 *
 * @example
 * const set = await openWalSet('./data');
 * await set.wals.edgeLogs.append(Buffer.from('{"id":"a"}\n'));
 * await set.close();
 */
export async function openWalSet(dataDir: string, options: Omit<WalOptions, 'dir'> = {}, lockTiming?: LockTiming): Promise<WalSet> {
  const dir = resolve(dataDir);
  await mkdir(dir, { recursive: true });
  const lock: DataDirLock = await lockDataDir(dir, commandLine(), lockTiming);
  const opened: Wal[] = [];
  try {
    for (const source of STORAGE_SOURCES) opened.push(fenced(await Wal.open({ ...options, dir: walDir(dir, source) }), lock));
  } catch (error) {
    await Promise.allSettled(opened.map((w) => w.close()));
    await lock.release();
    throw error;
  }
  const wals = Object.fromEntries(STORAGE_SOURCES.map((s, i) => [s, opened[i]!])) as Record<SourceName, Wal>;
  let closed: Promise<void> | null = null;
  return {
    dataDir: dir,
    wals,
    close() {
      closed ??= (async () => {
        try {
          await Promise.all(opened.map((w) => w.close()));
        } finally {
          await lock.release();
        }
      })();
      return closed;
    },
  };
}

/**
 * The WAL, taking appends only while this process surely holds the data dir's lease: once the
 * lease was not renewed for half its lifetime (a stalled disk, a frozen process), a newcomer may
 * soon judge it stale, so appends answer 503 until a renewal succeeds; once the lock is lost
 * (another process took the data dir over), for good. Only appends are guarded: the rest of the
 * WAL reads or releases what this process wrote itself.
 */
function fenced(wal: Wal, lock: DataDirLock): Wal {
  const append = wal.append.bind(wal);
  wal.append = (lines) => {
    if (!lock.held) {
      return Promise.reject(new EngineError('closed', 'Another process took this data dir over; this one takes no more events. Restart it once the other one stopped.'));
    }
    if (!lock.fresh()) {
      return Promise.reject(new EngineError('overloaded', 'The data dir lock could not be renewed lately (a slow disk?); retry shortly.', { retryAfterSeconds: 1 }));
    }
    return append(lines);
  };
  return wal;
}

/** Who holds the data dir, for people reading its lock file: the program and its command (never its flags: keys). */
function commandLine(): string {
  const [script, command] = process.argv.slice(1);
  return [script ? basename(script) : 'node', command && /^[a-z-]+$/.test(command) ? command : null].filter(Boolean).join(' ');
}
