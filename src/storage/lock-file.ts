import { readFileSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { hostname } from 'node:os';
import { unlinkIfPresent } from './durable-fs';

/** A held lock; `release` removes the file. */
export interface HeldLock {
  readonly path: string;
  release(): Promise<void>;
}

/** Another live process (or this one) holds the lock. */
export class LockedError extends Error {
  constructor(
    readonly path: string,
    readonly holder: string,
  ) {
    super(`${path} is held by ${holder}`);
    this.name = 'LockedError';
  }
}

/**
 * Takes an exclusive lock file (created with O_EXCL, holding pid and host). A lock left by a
 * process that no longer runs on this host is taken over; one held by a live process (this one
 * included) is refused with `LockedError`.
 *
 * @example
 * const lock = await acquireLockFile('/data/_compact/LOCK', 'compact');
 * try { await work() } finally { await lock.release() }
 */
export async function acquireLockFile(path: string, purpose: string): Promise<HeldLock> {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const handle = await open(path, 'wx');
      try {
        await handle.writeFile(JSON.stringify({ pid: process.pid, host: hostname(), purpose, since: new Date().toISOString() }));
        await handle.sync();
      } finally {
        await handle.close();
      }
      let released = false;
      return {
        path,
        release: async () => {
          if (released) return;
          released = true;
          await unlinkIfPresent(path);
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = readHolder(path);
      if (holder && holder.host === hostname() && isAlive(holder.pid)) {
        throw new LockedError(path, `${holder.purpose ?? 'a process'} (pid ${holder.pid}, since ${holder.since ?? '?'})`);
      }
      if (holder && holder.host !== hostname()) throw new LockedError(path, `pid ${holder.pid} on host ${holder.host}`);
      // Empty: either torn by a kill between create and write, or being written this instant.
      if (!holder && Date.now() - (statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? 0) < 5000) {
        throw new LockedError(path, 'a process that is starting');
      }
      // Stale: its process is gone (killed, crashed). Take it over.
      await unlinkIfPresent(path);
    }
  }
  throw new LockedError(path, 'another process (the lock keeps being taken)');
}

function readHolder(path: string): { pid: number; host: string; purpose?: string; since?: string } | null {
  try {
    const value = JSON.parse(readFileSync(path, 'utf8')) as { pid: number; host: string; purpose?: string; since?: string };
    return typeof value.pid === 'number' ? value : null;
  } catch {
    // Empty or torn: written by a process killed between create and write. Stale.
    return null;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
