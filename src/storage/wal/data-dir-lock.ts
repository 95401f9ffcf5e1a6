import { hostname } from 'node:os';
import { join } from 'node:path';
import { open, readFile, unlink } from 'node:fs/promises';
import { fsyncDir, isCode } from './fsync-dir';

/** The lock file's name in a data dir. */
export const LOCK_FILE = 'log-endpoints.lock';

/** Held by the one process that writes a data dir; `release` deletes the lock file. */
export interface DataDirLock {
  readonly path: string;
  release(): Promise<void>;
}

/**
 * The data dir is used by another live process (a running `serve --data-dir`, an `ingest`):
 * two writers would interleave segments and compactions. `pid` names it.
 */
export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(
      `The data dir ${dataDir} is in use by process ${pid} (a running log-endpoints serve or ingest?). ` +
        `Stop it first, or send events to it over HTTP. If no such process exists, delete ${join(dataDir, LOCK_FILE)}.`,
    );
    this.name = 'DataDirLockedError';
  }
}

/**
 * Takes the data dir's lock: the file `log-endpoints.lock` created with O_EXCL, holding our pid.
 * A lock left by a process that no longer runs (killed, crashed) is taken over. Taking over goes
 * through a second O_EXCL file (`.takeover`), so two processes finding the same stale lock never
 * both win.
 */
export function lockDataDir(dataDir: string): Promise<DataDirLock> {
  // One attempt at a time in this process, so its own calls never race each other.
  const attempt = turn.then(() => takeLock(dataDir));
  turn = attempt.catch(() => undefined);
  return attempt;
}

let turn: Promise<unknown> = Promise.resolve();

async function takeLock(dataDir: string): Promise<DataDirLock> {
  const path = join(dataDir, LOCK_FILE);
  // Our own pid in the lock is ours only if this process took it; otherwise it was left by an
  // earlier process that had the same pid (a container's pid 1 after a restart): stale.
  if (heldHere.has(path)) throw new DataDirLockedError(dataDir, process.pid);
  for (let attempt = 0; attempt < 10; attempt++) {
    if (await createExclusive(path)) {
      heldHere.add(path);
      await fsyncDir(dataDir);
      return { path, release: () => releaseLock(path, dataDir) };
    }
    const holder = await lockHolder(path);
    if (holder === 'gone') continue;
    if (holder !== null && holder !== process.pid && isAlive(holder)) throw new DataDirLockedError(dataDir, holder);
    // Stale (dead pid, or a lock file cut short before its pid was written): take it over.
    const takeover = `${path}.takeover`;
    if (!(await createExclusive(takeover))) {
      const other = await lockHolder(takeover);
      if (other !== 'gone' && other !== null && isAlive(other) && other !== process.pid) {
        throw new DataDirLockedError(dataDir, other);
      }
      // A takeover abandoned by a dead process: clear it and start again.
      await unlink(takeover).catch(ignoreMissing);
      continue;
    }
    try {
      // Still the stale lock we judged? (Another process may have taken over meanwhile.)
      const again = await lockHolder(path);
      if (again === holder) await unlink(path).catch(ignoreMissing);
    } finally {
      await unlink(takeover).catch(ignoreMissing);
    }
  }
  throw new Error(`Could not take the lock ${path}: it keeps changing hands.`);
}

/** Creates the file with O_EXCL holding our pid (and host, for people); false when it exists. */
async function createExclusive(path: string): Promise<boolean> {
  let handle;
  try {
    handle = await open(path, 'wx');
  } catch (error) {
    if (isCode(error, 'EEXIST')) return false;
    throw error;
  }
  try {
    await handle.writeFile(`${process.pid}\n${hostname()}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  return true;
}

/** The pid in a lock file, null when it holds none (cut short), 'gone' when the file vanished. */
async function lockHolder(path: string): Promise<number | null | 'gone'> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (isCode(error, 'ENOENT')) return 'gone';
    throw error;
  }
  const pid = Number(text.split('\n')[0]);
  return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return isCode(error, 'EPERM');
  }
}

/** Lock files this process holds. */
const heldHere = new Set<string>();

async function releaseLock(path: string, dataDir: string): Promise<void> {
  if (!heldHere.delete(path)) return;
  if ((await lockHolder(path)) !== process.pid) return;
  await unlink(path).catch(ignoreMissing);
  await fsyncDir(dataDir);
}

function ignoreMissing(error: unknown): void {
  if (!isCode(error, 'ENOENT')) throw error;
}
