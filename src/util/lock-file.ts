import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { connect, createServer, type Server } from 'node:net';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fsyncDir, fsyncFile, isCode, unlinkIfPresent, writeFileAtomic } from './durable-fs';
import { systemNow, monotonicMs } from '../time/clock';

/**
 * The one lock of the code base: a data dir's (`log-endpoints.lock`) and a dataset's
 * (`_compact/LOCK`) are both this. It never compares process ids, so it holds whatever the PID
 * namespace (two containers on one volume each run as pid 1) or the host:
 *
 * - **A lease.** The lock file holds a random token; its holder rewrites it every `renewMs`
 *   (a beat counter). A newcomer that finds it watches it: a change means the holder lives
 *   (refused); no change for `staleMs` on the newcomer's own monotonic clock means the holder is
 *   gone (taken over). Clocks are never compared across hosts, and it works on any file system
 *   that shows one host's rename to another (NFS, SMB, a container volume).
 * - **A probe on one kernel.** The holder also listens on a Unix socket beside the lock. A newcomer
 *   on the same kernel (same boot id, whatever its container) connects to it: answered means
 *   alive, refused means the holder died (a `kill -9`), so a restart takes the lock at once
 *   instead of waiting out the lease.
 *
 * A takeover replaces the file, waits one beat and reads it again: of two newcomers racing for
 * one stale lock, the one whose token is not there backs off. A holder that finds a foreign token
 * (or no file) when it renews has lost the lock (`onLost`); `fresh()` says whether its last renewal
 * is recent enough for it to keep writing (see docs/damaged-data.md, "One writer per data dir").
 * `enclosedBy` names a lock every writer of this one holds first (a data dir's, for its datasets'):
 * while this process holds it, a lock found is a dead process's and is taken over at once.
 *
 * @example
 * const lock = await acquireLock('/data/log-endpoints.lock', 'serve');
 * try { await work() } finally { await lock.release() }
 */
export async function acquireLock(path: string, purpose: string, timing: LockTiming = {}, options: { enclosedBy?: string } = {}): Promise<HeldLock> {
  const t = { ...DEFAULT_TIMING, ...timing };
  if (heldHere.has(path)) throw new LockedError(path, heldHere.get(path)!.record, true);
  // Every writer of this lock holds the enclosing one, which this process holds: a lock found is
  // a dead process's (a compaction killed with its server), and no other newcomer can race us.
  const sole = options.enclosedBy !== undefined && heldHere.has(options.enclosedBy);
  for (let attempt = 0; attempt < 5; attempt++) {
    const mine = newRecord(purpose);
    if (await writeFileAtomic(path, recordText(mine), 'create')) return hold(path, mine, t);
    const found = await readRecord(path);
    if (found === 'gone') continue;
    const verdict = sole ? 'stale' : await judge(path, found, t);
    if (verdict === 'alive') throw new LockedError(path, found.record, false);
    if (verdict === 'changed') continue;
    // Stale: put ours in its place (only if it is still the lock judged), then make sure no other
    // newcomer did the same meanwhile.
    if (!(await replaceIfUnchanged(path, found.text, recordText(mine), mine.token))) continue;
    if (!sole) await t.sleep(t.renewMs);
    const after = await readRecord(path);
    if (after === 'gone' || after.record?.token !== mine.token) {
      if (after !== 'gone' && after.record) throw new LockedError(path, after.record, false);
      continue;
    }
    await removeSocketOf(path, found.record);
    return hold(path, mine, t);
  }
  throw new LockedError(path, null, false);
}

/** How long a lease lasts and how it is watched; tests inject `now` and `sleep`. */
export interface LockTiming {
  /** The holder rewrites the lock this often (default 1000 ms). */
  renewMs?: number;
  /** A lock unchanged this long (seen by the newcomer) is stale (default 10 000 ms). */
  staleMs?: number;
  /** Monotonic milliseconds (default `performance.now`). */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

const DEFAULT_TIMING: Required<LockTiming> = {
  renewMs: 1000,
  staleMs: 10_000,
  now: monotonicMs,
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** A lock this process holds. */
export interface HeldLock {
  readonly path: string;
  /** The holder's token (in the file while held). */
  readonly token: string;
  /** False once released or lost. */
  readonly held: boolean;
  /**
   * Whether the lease was renewed recently enough (within half of `staleMs`) that no newcomer can
   * have judged it stale: check it before a write that only the holder may make.
   */
  fresh(): boolean;
  /** Called once if the lock is found taken by another process (the holder must stop writing). */
  onLost(listener: (reason: string) => void): void;
  /** Stops renewing and removes the file (when it is still ours). */
  release(): Promise<void>;
}

/** What a lock file holds: `token` identifies the holder; the rest is for people and the probe. */
export interface LockRecord {
  token: string;
  purpose: string;
  host: string;
  /** For people only: never compared (it means nothing across PID namespaces). */
  pid: number;
  since: string;
  beat: number;
  /** The kernel's boot id, when known: the socket probe is trusted only on the same kernel. */
  boot: string | null;
  /** Name of the holder's socket beside the lock, or null when it has none. */
  socket: string | null;
}

/** Another process (or this one) holds the lock. */
export class LockedError extends Error {
  constructor(
    readonly path: string,
    /** The holder as its lock file says, or null when it keeps changing hands. */
    readonly record: LockRecord | null,
    /** True when this very process holds it. */
    readonly here: boolean,
  ) {
    super(`${path} is held by ${describeHolder(record, here)}`);
    this.name = 'LockedError';
  }
}

/** The holder in words: `serve (pid 1 on host web-2, since 2026-11-21T10:00:00.000Z)`. */
export function describeHolder(record: LockRecord | null, here = false): string {
  if (here) return `this process (${record?.purpose ?? 'a lock'} taken earlier)`;
  if (!record) return 'another process (the lock keeps changing hands)';
  return `${record.purpose} (pid ${record.pid} on host ${record.host}, since ${record.since})`;
}

/** Locks held by this process, by path. */
const heldHere = new Map<string, { record: LockRecord }>();

function newRecord(purpose: string): LockRecord {
  return {
    token: randomBytes(16).toString('hex'),
    purpose,
    host: hostname(),
    pid: process.pid,
    since: systemNow().toISOString(),
    beat: 0,
    boot: bootId(),
    socket: null,
  };
}

function recordText(record: LockRecord): string {
  return `${JSON.stringify(record)}\n`;
}

/** The file's text (what a watcher compares) and its record when it parses as one. */
async function readRecord(path: string): Promise<{ text: string; record: LockRecord | null } | 'gone'> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (isCode(error, 'ENOENT')) return 'gone';
    throw error;
  }
  try {
    const value = JSON.parse(text) as LockRecord;
    return { text, record: typeof value?.token === 'string' ? value : null };
  } catch {
    // A lock of an older version (a pid) or damaged: it has no token, so only the lease can judge it.
    return { text, record: null };
  }
}

/**
 * Whether the holder of a found lock lives: the socket probe when it is on this kernel, else
 * the lease (a change within `staleMs` means alive). `changed` when the file was replaced by
 * another holder or removed while watched (try again from the start).
 */
async function judge(path: string, found: { text: string; record: LockRecord | null }, t: Required<LockTiming>): Promise<'alive' | 'stale' | 'changed'> {
  const probe = await probeSocket(path, found.record);
  if (probe !== 'unknown') return probe;
  const started = t.now();
  while (t.now() - started < t.staleMs) {
    await t.sleep(Math.min(t.renewMs / 2, t.staleMs));
    const now = await readRecord(path);
    if (now === 'gone') return 'changed';
    if (now.text !== found.text) return now.record?.token === found.record?.token && found.record ? 'alive' : 'changed';
  }
  return 'stale';
}

/** Connects to the holder's socket when the holder runs on this kernel; `unknown` otherwise. */
async function probeSocket(path: string, record: LockRecord | null): Promise<'alive' | 'stale' | 'unknown'> {
  const boot = bootId();
  if (!record?.socket || !record.boot || boot === null || record.boot !== boot) return 'unknown';
  const socketPath = join(dirname(path), basename(record.socket));
  return new Promise((resolve) => {
    const socket = connect(socketPath);
    const done = (verdict: 'alive' | 'stale' | 'unknown') => {
      clearTimeout(timer);
      socket.destroy();
      resolve(verdict);
    };
    // A holder whose event loop is stuck still has its connections accepted by the kernel.
    const timer = setTimeout(() => done('unknown'), 5000);
    socket.once('connect', () => done('alive'));
    socket.once('error', (error) => done(isCode(error, 'ECONNREFUSED') || isCode(error, 'ENOENT') ? 'stale' : 'unknown'));
  });
}

let knownBootId: string | null | undefined;

/** The kernel's boot id (Linux), the same in every container of one host and new at each boot. */
function bootId(): string | null {
  if (knownBootId === undefined) {
    try {
      knownBootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
    } catch {
      knownBootId = null;
    }
  }
  return knownBootId;
}

/** Deletes the socket a stale holder left beside the lock. */
async function removeSocketOf(path: string, record: LockRecord | null): Promise<void> {
  if (record?.socket) await unlinkIfPresent(join(dirname(path), basename(record.socket)));
}

/** Starts holding: the socket, then the renewals. */
async function hold(path: string, record: LockRecord, t: Required<LockTiming>): Promise<HeldLock> {
  const server = await listenBeside(path, record.token);
  if (server) {
    record.socket = server.name;
    await writeRecord(path, record);
  }
  heldHere.set(path, { record });
  let renewedAt = t.now();
  let held = true;
  let lost: string | null = null;
  const listeners: Array<(reason: string) => void> = [];
  const lose = (reason: string) => {
    if (lost !== null) return;
    lost = reason;
    held = false;
    stop();
    for (const listener of listeners) listener(reason);
  };
  let renewing: Promise<void> | null = null;
  const renew = async () => {
    const current = await readRecord(path).catch(() => null);
    if (current === null) return; // unreadable for now (an I/O error): the next beat tries again
    if (current === 'gone' || current.record?.token !== record.token) {
      lose(current === 'gone' ? 'its lock file was deleted' : `it was taken over by ${describeHolder(current.record)}`);
      return;
    }
    record.beat++;
    await writeRecord(path, record).then(
      () => (renewedAt = t.now()),
      () => undefined,
    );
  };
  const timer = setInterval(() => {
    if (renewing || !held) return;
    renewing = renew().finally(() => (renewing = null));
  }, t.renewMs);
  timer.unref();
  const stop = () => {
    clearInterval(timer);
    heldHere.delete(path);
    server?.server.close();
  };
  return {
    path,
    token: record.token,
    get held() {
      return held;
    },
    fresh: () => held && t.now() - renewedAt < t.staleMs / 2,
    onLost: (listener) => {
      listeners.push(listener);
      if (lost !== null) listener(lost);
    },
    release: async () => {
      if (!held) return;
      held = false;
      stop();
      await renewing;
      const current = await readRecord(path);
      if (current !== 'gone' && current.record?.token === record.token) {
        await unlink(path).catch((error: unknown) => {
          if (!isCode(error, 'ENOENT')) throw error;
        });
        await fsyncDir(dirname(path));
      }
      if (server) await unlinkIfPresent(join(dirname(path), server.name));
    },
  };
}

/**
 * Replaces the lock with `text` only when it still holds `expected`: the new content is written
 * and flushed aside first, so the check and the rename are two system calls apart (a newcomer that
 * judged a lock stale never overwrites a lock another newcomer took meanwhile, but for that instant).
 */
async function replaceIfUnchanged(path: string, expected: string, text: string, token: string): Promise<boolean> {
  const temp = `${path}.${token}.tmp`;
  await writeFile(temp, text);
  await fsyncFile(temp);
  const current = await readFile(path, 'utf8').catch(() => null);
  if (current !== expected) {
    await unlinkIfPresent(temp);
    return false;
  }
  await rename(temp, path);
  await fsyncDir(dirname(path));
  return true;
}

/** Replaces the lock's content whole (a rename, so a reader never sees it half written). */
async function writeRecord(path: string, record: LockRecord): Promise<void> {
  const temp = `${path}.${record.token}.tmp`;
  await writeFile(temp, recordText(record));
  await rename(temp, path);
}

/**
 * The holder's socket beside the lock (`.<lock>.<token>.sock`). None where it cannot be made (a
 * path past the 107 bytes a socket address holds, a file system without sockets): the lease
 * alone works there.
 */
async function listenBeside(path: string, token: string): Promise<{ server: Server; name: string } | null> {
  const name = `.${basename(path)}.${token.slice(0, 12)}.sock`;
  const socketPath = join(dirname(path), name);
  if (Buffer.byteLength(socketPath) > 100 || process.platform === 'win32') return null;
  const server = createServer((socket) => socket.destroy());
  return new Promise((resolve) => {
    server.once('error', () => resolve(null));
    server.listen(socketPath, () => {
      server.unref();
      resolve({ server, name });
    });
  });
}
