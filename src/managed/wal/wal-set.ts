import { basename, join, resolve } from 'node:path';
import type { SourceName } from '../../sources/source-descriptor';
import { EngineError, InvalidOptionError } from '../../errors';
import type { LockTiming } from '../../util/lock-file';
import { lockDataDir, type DataDirLock } from '../../dataset/data-dir-lock';
import { prepareDataDir } from './prepare-data-dir';
import { Quarantine, type QuarantineEntry } from './quarantine';
import { Wal, type WalOptions } from './wal';
import type { SourceSet } from '../../sources/source-set';

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
 * Opens managed storage's write-ahead logs: creates the data dir when missing (a path that cannot
 * be one is an `InvalidOptionError` of `storage.dataDir` saying why), takes its lock (refusing a
 * dir another live process holds; `lockTiming` is for tests), then opens and recovers
 * `<dataDir>/<source>/wal` for each source of the instance (`sources`).
 *
 * @example
 * const set = await openWalSet('./data', BUILT_IN_SOURCE_SET);
 * await set.wals.edgeLogs.append(Buffer.from('{"id":"a"}\n'));
 * await set.close();
 */
export async function openWalSet(
  dataDir: string,
  sourceSet: SourceSet,
  options: Omit<WalOptions, 'dir' | 'quarantine'> & {
    /** Told of each set of bytes put in a quarantine (recovery at open included). */
    onQuarantined?: (source: SourceName, entry: QuarantineEntry & { file: string }) => void;
  } = {},
  lockTiming?: LockTiming,
): Promise<WalSet> {
  const dir = resolve(dataDir);
  const problem = prepareDataDir(dir);
  if (problem !== null) throw new InvalidOptionError('storage.dataDir', `storage.dataDir ${problem}.`);
  const lock: DataDirLock = await lockDataDir(dir, commandLine(), lockTiming);
  const opened: Wal[] = [];
  const sources = sourceSet.names;
  const quarantines: Partial<Record<SourceName, Quarantine>> = {};
  const { onQuarantined, ...walOptions } = options;
  try {
    for (const source of sources) {
      const quarantine = await Quarantine.open(quarantineDir(dir, source), (entry) => onQuarantined?.(source, entry));
      quarantines[source] = quarantine;
      opened.push(fenced(await Wal.open({ ...walOptions, dir: walDir(dir, source), quarantine }), lock));
    }
  } catch (error) {
    await Promise.allSettled(opened.map((w) => w.close()));
    await lock.release();
    throw error;
  }
  const wals = Object.fromEntries(sources.map((s, i) => [s, opened[i]!])) as Record<SourceName, Wal>;
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

/**
 * The WAL, taking appends only while this process surely holds the data dir's lease: once the
 * lease was not renewed for half its lifetime (a stalled disk, a frozen process), a newcomer may
 * soon judge it stale, so appends answer 503 until a renewal succeeds; once the lock is lost
 * (another process took the data dir over), for good. Only appends are guarded: the rest of the
 * WAL reads or releases what this process wrote itself.
 */
function fenced(wal: Wal, lock: DataDirLock): Wal {
  const append = wal.append.bind(wal);
  // Not held any more: lost to another process, or released by this one as it stops (a request
  // still being read when the server closed its storage must not say the data dir was taken).
  let lost = false;
  lock.onLost(() => (lost = true));
  wal.append = (lines) => {
    if (!lock.held) {
      return Promise.reject(
        lost
          ? new EngineError('closed', 'Another process took this data dir over; this one takes no more events. Restart it once the other one stopped.')
          : new EngineError('closed', 'This process is stopping: it takes no more events. Send them again once it (or its successor) is up.'),
      );
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
