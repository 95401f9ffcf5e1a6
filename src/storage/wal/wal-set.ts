import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { SourceName } from '../../engine/engine';
import { lockDataDir, type DataDirLock } from './data-dir-lock';
import { Quarantine, type QuarantineEntry } from './quarantine';
import { Wal, type WalOptions } from './wal';

/** The sources managed storage keeps, each in `<dataDir>/<source>/`. */
export const STORAGE_SOURCES: readonly SourceName[] = ['edgeLogs', 'functionEdgeLogs'];

/** The WAL folder of a source: `<dataDir>/<source>/wal`. */
export function walDir(dataDir: string, source: SourceName): string {
  return join(resolve(dataDir), source, 'wal');
}


/** The quarantine folder of a source: `<dataDir>/<source>/quarantine`. */
export function quarantineDir(dataDir: string, source: SourceName): string {
  return join(resolve(dataDir), source, 'quarantine');
}

/** The locked data dir and one WAL per source. */
export interface WalSet {
  readonly dataDir: string;
  readonly wals: Readonly<Record<SourceName, Wal>>;
  /** What each source set aside (damaged bytes, unreadable lines). */
  readonly quarantines: Readonly<Record<SourceName, Quarantine>>;
  /** Flushes and closes every WAL, then releases the data dir's lock. */
  close(): Promise<void>;
}

/**
 * Opens managed storage's write-ahead logs: takes the data dir's lock (refusing a dir another
 * live process holds), then opens and recovers `<dataDir>/<source>/wal` for each source.
 *
 * @example
 * const set = await openWalSet('./data');
 * await set.wals.edgeLogs.append(Buffer.from('{"id":"a"}\n'));
 * await set.close();
 */
export async function openWalSet(
  dataDir: string,
  options: Omit<WalOptions, 'dir' | 'quarantine'> & {
    /** Told of each set of bytes put in a quarantine (recovery at open included). */
    onQuarantined?: (source: SourceName, entry: QuarantineEntry & { file: string }) => void;
  } = {},
): Promise<WalSet> {
  const dir = resolve(dataDir);
  await mkdir(dir, { recursive: true });
  const lock: DataDirLock = await lockDataDir(dir);
  const opened: Wal[] = [];
  const quarantines: Partial<Record<SourceName, Quarantine>> = {};
  const { onQuarantined, ...walOptions } = options;
  try {
    for (const source of STORAGE_SOURCES) {
      const quarantine = await Quarantine.open(quarantineDir(dir, source), (entry) => onQuarantined?.(source, entry));
      quarantines[source] = quarantine;
      opened.push(await Wal.open({ ...walOptions, dir: walDir(dir, source), quarantine }));
    }
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
    quarantines: quarantines as Record<SourceName, Quarantine>,
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
