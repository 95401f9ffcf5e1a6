import type { FileHandle } from 'node:fs/promises';
import { crc32, markerLine } from '../../wal-format/commit-marker';
import { InternalError } from '../../util/internal-error';

/** What the group commit needs of the segment it writes to: its handle and where its committed bytes end. */
export interface GroupTarget {
  handle: FileHandle;
  committedBytes: number;
  /** Groups written to it so far: the next marker's number is one more. */
  groups: number;
}

/** What one round of the loop does besides writing a group: the WAL's rolling, asked before each group. */
export interface GroupCommitSteps<R> {
  /** Whether there is work without appends (a roll asked for): the loop keeps turning while it is true. */
  wanted(): boolean;
  /** Runs before each group (and when `wanted` with no appends): closes the active segment when it is time. */
  beforeGroup(): Promise<void>;
  /** Writes one group (every append waiting at that moment) and resolves with what each of them answers. */
  commit(group: readonly Uint8Array[]): Promise<R>;
  /** The error each append of a group that failed rejects with. */
  failure(error: unknown): Error;
  /** Runs after each group, written or not (a full segment asks for its roll). */
  afterGroup(): void;
}

interface Pending<R> {
  data: Uint8Array;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: appends waiting at the same moment share one write and one fdatasync. The loop
 * starts on the next turn of the event loop, so every append made until then joins the first
 * group; appends made while a group is written form the next one.
 *
 * @example
 * const commit = new GroupCommit({ wanted: () => false, beforeGroup: async () => {}, commit: async (g) => g.length, failure: (e) => e as Error, afterGroup: () => {} });
 * await Promise.all([commit.enqueue(a), commit.enqueue(b)]); // one group of two
 */
export class GroupCommit<R> {
  private queue: Pending<R>[] = [];
  private pending = 0;
  private flushing: Promise<void> | null = null;

  constructor(private readonly steps: GroupCommitSteps<R>) {}

  /** Bytes accepted but not yet written (fsynced or failed). */
  get pendingBytes(): number {
    return this.pending;
  }

  /** The loop now running, or null when idle. */
  get running(): Promise<void> | null {
    return this.flushing;
  }

  /** Queues `data` for the next group; resolves once its group is on disk. */
  enqueue(data: Uint8Array): Promise<R> {
    this.pending += data.length;
    const done = new Promise<R>((resolve, reject) => this.queue.push({ data, resolve, reject }));
    this.kick();
    return done;
  }

  /** Starts the loop unless it runs (after a roll is asked for with no append waiting). */
  kick(): void {
    if (this.flushing) return;
    this.flushing = new Promise<void>((resolve) => setImmediate(resolve))
      // Started on the next turn of the event loop: every append made until then joins the first group.
      .then(() => this.loop())
      .finally(() => {
        this.flushing = null;
        // Appends made after the loop's last look (by callers its groups just answered) go next.
        if (this.queue.length || this.steps.wanted()) this.kick();
      });
  }

  private async loop(): Promise<void> {
    while (this.queue.length || this.steps.wanted()) {
      await this.steps.beforeGroup();
      if (!this.queue.length) continue;
      // Every append waiting now is one group: one write, one fdatasync.
      const group = this.queue;
      this.queue = [];
      try {
        const result = await this.steps.commit(group.map((p) => p.data));
        for (const p of group) p.resolve(result);
      } catch (error) {
        const failure = this.steps.failure(error);
        for (const p of group) p.reject(failure);
      } finally {
        for (const p of group) this.pending -= p.data.length;
      }
      this.steps.afterGroup();
    }
  }
}

/**
 * Writes one group at the committed end of `target`, its commit marker after it (the group's
 * bytes and CRC-32), and fdatasyncs; returns the bytes written. On a failed write what may have
 * landed is cut again; `onBroken` is told when the file's state is unknown (the cut or the
 * fdatasync failed), after which nothing more may be written to it.
 *
 * @example
 * const bytes = await writeGroup(active, [Buffer.from('{"id":"a"}\n')], (error) => (failure = error)); // on disk now
 */
export async function writeGroup(target: GroupTarget, group: readonly Uint8Array[], onBroken: (error: unknown) => void): Promise<number> {
  let crc = 0;
  let bytes = 0;
  for (const data of group) {
    crc = crc32(data, crc);
    bytes += data.length;
  }
  const marker = Buffer.from(markerLine({ seq: target.groups + 1, bytes, crc32: crc }), 'latin1');
  const total = bytes + marker.length;
  try {
    const { bytesWritten } = await target.handle.writev([...group, marker], target.committedBytes);
    if (bytesWritten !== total) throw new InternalError('ENOSPC', `Short write: ${bytesWritten} of ${total} bytes.`);
  } catch (error) {
    // Cut what may have landed, so the next group starts at the committed end again.
    await target.handle.truncate(target.committedBytes).catch(onBroken);
    throw error;
  }
  try {
    await target.handle.datasync();
  } catch (error) {
    // After a failed fsync the file's state is unknown: accept nothing more until reopened.
    onBroken(error);
    throw error;
  }
  target.committedBytes += total;
  target.groups++;
  return total;
}
