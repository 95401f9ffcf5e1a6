import { join, resolve } from 'node:path';
import type { SourceName } from '../../engine/engine';
import { InvalidOptionError } from '../../errors';
import { lockDataDir, type DataDirLock } from './data-dir-lock';
import { prepareDataDir } from './prepare-data-dir';
import { Wal, type WalOptions } from './wal';

/** The sources managed storage keeps, each in `<dataDir>/<source>/`. */
export const STORAGE_SOURCES: readonly SourceName[] = ['edgeLogs', 'functionEdgeLogs'];

/** The WAL folder of a source: `<dataDir>/<source>/wal`. */
export function walDir(dataDir: string, source: SourceName): string {
  return join(resolve(dataDir), source, 'wal');
}


/** The locked data dir and one WAL per source. */
export interface WalSet {
  readonly dataDir: string;
  readonly wals: Readonly<Record<SourceName, Wal>>;
  /** Flushes and closes every WAL, then releases the data dir's lock. */
  close(): Promise<void>;
}

/**
 * Opens managed storage's write-ahead logs: creates the data dir when missing (a path that cannot
 * be one is an `InvalidOptionError` of `storage.dataDir` saying why), takes its lock (refusing a
 * dir another live process holds), then opens and recovers `<dataDir>/<source>/wal` for each source.
 *
 * @example
 * const set = await openWalSet('./data');
 * await set.wals.edgeLogs.append(Buffer.from('{"id":"a"}\n'));
 * await set.close();
 */
export async function openWalSet(dataDir: string, options: Omit<WalOptions, 'dir'> = {}): Promise<WalSet> {
  const dir = resolve(dataDir);
  const problem = prepareDataDir(dir);
  if (problem !== null) throw new InvalidOptionError('storage.dataDir', `storage.dataDir ${problem}.`);
  const lock: DataDirLock = await lockDataDir(dir);
  const opened: Wal[] = [];
  try {
    for (const source of STORAGE_SOURCES) opened.push(await Wal.open({ ...options, dir: walDir(dir, source) }));
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
