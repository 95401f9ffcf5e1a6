import { mkdir, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { timerScheduler, type CacheScheduler } from '../../util/scheduler';
import { EngineError } from '../../errors';
import { fsyncDir, isCode } from '../../util/durable-fs';
import { checkPositiveNumber } from '../../util/option-checks';
import { Quarantine } from './quarantine';
import { recoverSegment, type DamagedBytes } from './recover-segment';
import { recoverAtOpen, type DeferredSegment, type WalRecovery, type WalSegment } from './recover-at-open';
import { GroupCommit, writeGroup } from './group-commit';
import { createSegment, SegmentRolling, type ActiveSegment } from './segment-rolling';
import { monotonicMs } from '../../time/clock';
import { failpoint, holdpoint } from '../../util/failpoint';

export type { WalRecovery, WalSegment };

/** Limits and rolling of one WAL. */
export interface WalOptions {
  /** The folder of the segments (`<dataDir>/<source>/wal`); created when missing. */
  dir: string;
  /** The active segment is closed once it holds this many bytes (default 8 MiB). */
  maxSegmentBytes?: number;
  /** ... or once its first group is this old, in ms (default 60 000). An empty segment is never closed by age. */
  maxSegmentAgeMs?: number;
  /** ... or once it holds `quietRollBytes` and no group was written into it for this long, in ms (default 5 000). */
  segmentQuietMs?: number;
  /** The least a segment holds to be closed when quiet (default 256 KiB); a smaller one waits for its age. */
  quietRollBytes?: number;
  /** Past this many bytes accepted but not yet fsynced, `append` rejects with `overloaded` (default 64 MiB). */
  maxPendingBytes?: number;
  /** Past this many bytes in segments not yet released (compacted), `append` rejects with `overloaded` (default 1 GiB). */
  maxUncompactedBytes?: number;
  /** Monotonic milliseconds for segment age (default `performance.now`). */
  now?: () => number;
  /** Runs the age and quiet rolls of an idle segment (default `setTimeout`, unref'ed). */
  scheduler?: CacheScheduler;
  /** Where damaged bytes go (default: the `quarantine` folder beside `dir`). */
  quarantine?: Quarantine;
  /**
   * Segments left by the previous process are recovered by `open` while they hold at most this
   * many bytes, the newest first (default: all of them); the older rest is recovered in the
   * background (`recovery`), and readers leave it out until it is compacted (`deferred`).
   */
  recoverAtOpenBytes?: number;
}

export const WAL_DEFAULTS = {
  maxSegmentBytes: 8 * 1024 * 1024,
  maxSegmentAgeMs: 60_000,
  segmentQuietMs: 5_000,
  quietRollBytes: 256 * 1024,
  maxPendingBytes: 64 * 1024 * 1024,
  maxUncompactedBytes: 1024 * 1024 * 1024,
} as const;

/**
 * A write-ahead log of NDJSON segments (`<dir>/<20-digit seq>.ndjson`) with group commit:
 * appends waiting at the same moment share one write and one fdatasync, each group followed by a
 * commit marker line; an append resolves only once its group is on disk. At open, every
 * segment found is closed (its torn tail cut) and a new active segment is started. It composes
 * its rooms: recovery at open (`recover-at-open.ts`), group commit (`group-commit.ts`), rolling
 * (`segment-rolling.ts`); it keeps the bounds, the closed and deferred segments, verification,
 * the quarantine's hand-off and close.
 *
 * @example
 * const wal = await Wal.open({ dir: 'data/edgeLogs/wal' });
 * await wal.append(Buffer.from('{"id":"a"}\n{"id":"b"}\n')); // durable now
 * for (const s of wal.closedSegments()) { compact(s.path, s.committedBytes); await wal.release([s.path]); }
 * await wal.close();
 */
export class Wal {
  readonly dir: string;
  /** Segments cut at open (torn tails) or found damaged by recovery; empty after a clean shutdown. */
  readonly recovered: WalRecovery[];
  /** Settles once every segment left by the previous process is recovered (at once without deferred ones). */
  recovery: Promise<void> = Promise.resolve();
  /** Where damaged bytes went (recovery, `verify`). */
  readonly quarantine: Quarantine;
  private readonly maxPendingBytes: number;
  private readonly maxUncompactedBytes: number;
  /** Closed segments checked group by group since they were last written (at open, or by `verify`). */
  private readonly verified = new Set<string>();
  private closedList: WalSegment[];
  private readonly rolling: SegmentRolling;
  private readonly groups: GroupCommit<{ seq: number }>;
  private diskBytes: number;
  private failure: Error | null = null;
  private closing = false;
  private closed: Promise<void> | null = null;
  private readonly closeListeners = new Set<(segment: WalSegment) => void>();
  /** Old segments recovered in the background, or waiting for it, until released: readers leave them out. */
  private readonly deferredList: DeferredSegment[] = [];

  private constructor(dir: string, options: WalOptions, closed: WalSegment[], recovered: WalRecovery[], quarantine: Quarantine) {
    this.dir = dir;
    this.quarantine = quarantine;
    const rules = {
      maxSegmentBytes: positive(options.maxSegmentBytes, WAL_DEFAULTS.maxSegmentBytes, 'maxSegmentBytes'),
      maxSegmentAgeMs: positive(options.maxSegmentAgeMs, WAL_DEFAULTS.maxSegmentAgeMs, 'maxSegmentAgeMs'),
      quietMs: positive(options.segmentQuietMs, WAL_DEFAULTS.segmentQuietMs, 'segmentQuietMs'),
      quietRollBytes: positive(options.quietRollBytes, WAL_DEFAULTS.quietRollBytes, 'quietRollBytes'),
      now: options.now ?? monotonicMs,
      scheduler: options.scheduler ?? timerScheduler,
    };
    this.maxPendingBytes = positive(options.maxPendingBytes, WAL_DEFAULTS.maxPendingBytes, 'maxPendingBytes');
    this.maxUncompactedBytes = positive(options.maxUncompactedBytes, WAL_DEFAULTS.maxUncompactedBytes, 'maxUncompactedBytes');
    this.rolling = new SegmentRolling(
      rules,
      (seq) => this.createSegment(seq),
      () => {
        if (this.closing) return;
        this.rolling.requested = true;
        this.groups.kick();
      },
    );
    this.groups = new GroupCommit({
      wanted: () => this.rolling.requested,
      beforeGroup: () => this.rollIfDue(),
      commit: (group) => this.commit(group),
      failure: storageError,
      afterGroup: () => this.rolling.checkSize(),
    });
    this.closedList = closed;
    this.recovered = recovered;
    this.diskBytes = closed.reduce((sum, s) => sum + s.committedBytes, 0);
  }

  /**
   * Opens (creating) the WAL in `options.dir`: recovers the segments there (`recoverAtOpen`; all
   * closed from now on, the older ones of a large backlog in the background), then starts a new
   * active segment. Empty segments are deleted.
   */
  static async open(options: WalOptions): Promise<Wal> {
    const dir = resolve(options.dir);
    await mkdir(dir, { recursive: true });
    const quarantine = options.quarantine ?? (await Quarantine.open(join(dirname(dir), 'quarantine')));
    const { found, recovered, deferred, nextSeq } = await recoverAtOpen(dir, quarantine, options.recoverAtOpenBytes);
    const wal = new Wal(
      dir,
      options,
      found.filter((s) => s.committedBytes > 0),
      recovered,
      quarantine,
    );
    for (const segment of found) wal.verified.add(segment.path);
    wal.deferredList.push(...deferred);
    // Counted against the uncompacted bound from the start.
    wal.diskBytes += wal.deferredList.reduce((n, s) => n + s.bytes, 0);
    // The new active segment comes first: the highest number stays on disk, so numbers never repeat.
    wal.rolling.active = await wal.createSegment(nextSeq);
    const empty = found.filter((s) => s.committedBytes === 0);
    for (const s of empty) await unlink(s.path).catch(ignoreMissing);
    if (empty.length) await fsyncDir(dir);
    if (wal.deferredList.length) wal.recovery = wal.recoverDeferred();
    return wal;
  }

  /**
   * The segments left by the previous process that `open` left to the background, oldest first,
   * until compaction releases them: readers leave them out (and say so) instead of parsing a large
   * backlog on every query; each is handed to compaction (`onSegmentClosed`) once recovered.
   */
  deferred(): DeferredSegment[] {
    return this.deferredList.map((s) => ({ ...s }));
  }

  /** Recovers the deferred segments one by one, oldest first, as `open` recovers the others. */
  private async recoverDeferred(): Promise<void> {
    await holdpoint('wal:recovery');
    for (const pending of [...this.deferredList]) {
      if (this.closing) return;
      let outcome;
      try {
        outcome = await recoverSegment(pending.path, { newest: false, quarantine: this.quarantine });
      } catch {
        // Unreadable now: it stays deferred (left out, and said so); the next start tries again.
        continue;
      }
      const { committedBytes, cutBytes, damaged } = outcome;
      if (cutBytes > 0 || damaged.length) this.recovered.push({ path: pending.path, cutBytes, damaged });
      this.verified.add(pending.path);
      this.diskBytes -= pending.bytes - committedBytes;
      if (committedBytes === 0) {
        this.deferredList.splice(this.deferredList.indexOf(pending), 1);
        await unlink(pending.path).catch(ignoreMissing);
        continue;
      }
      const segment: WalSegment = { path: pending.path, seq: pending.seq, committedBytes, closed: true };
      this.closedList.push(segment);
      this.closedList.sort((a, b) => a.seq - b.seq);
      this.notifyClosed(segment);
    }
  }

  /**
   * Appends event lines (UTF-8, each ending with `\n`; several events at once stay together in
   * one group) and resolves once they are fsynced, with the segment they are in. Rejects at once with `EngineError('overloaded')`
   * past the pending or uncompacted bound, with `closed` after `close()`.
   */
  append(lines: Uint8Array): Promise<{ seq: number }> {
    if (this.closing) return Promise.reject(new EngineError('closed', 'The storage was closed.'));
    if (this.failure) return Promise.reject(this.failure);
    if (lines.length === 0) return Promise.resolve({ seq: this.active?.seq ?? 0 });
    // An invariant, not a caller's mistake: the WAL is internal and its one writer (the ingestor)
    // appends serialised lines, each ending with a newline (kept a TypeError for the WAL's tests).
    if (lines[lines.length - 1] !== 0x0a) return Promise.reject(new TypeError('WAL lines must end with a newline.'));
    const size = lines.length;
    const pending = this.groups.pendingBytes;
    if (pending > 0 && pending + size > this.maxPendingBytes) {
      return Promise.reject(new EngineError('overloaded', 'Too many events are waiting to be written; retry shortly.', { retryAfterSeconds: 1 }));
    }
    const held = this.diskBytes + pending;
    if (held > 0 && held + size > this.maxUncompactedBytes) {
      return Promise.reject(new EngineError('overloaded', 'The write-ahead log is full until compaction catches up; retry later.', { retryAfterSeconds: 5 }));
    }
    return this.groups.enqueue(lines);
  }

  /** Every segment on disk, oldest first, with its committed bytes; the active one last. */
  snapshot(): WalSegment[] {
    const list = this.closedList.map((s) => ({ ...s }));
    const active = this.active;
    if (active) list.push({ path: active.path, seq: active.seq, committedBytes: active.committedBytes, closed: false });
    return list;
  }

  /** The closed segments not yet released, oldest first: what compaction takes. */
  closedSegments(): WalSegment[] {
    return this.closedList.map((s) => ({ ...s }));
  }

  /**
   * Deletes closed segments (after compaction made their events readable elsewhere) and fsyncs
   * the folder. Throws for a path that is not a closed segment of this WAL.
   */
  async release(paths: readonly string[]): Promise<void> {
    const targets = paths.map((p) => {
      const segment = this.closedList.find((s) => s.path === resolve(p));
      if (!segment) throw new EngineError('storage_failed', `Not a closed segment of this WAL: ${p}`);
      return segment;
    });
    for (const segment of new Set(targets)) {
      await unlink(segment.path).catch(ignoreMissing);
      failpoint('wal:unlinked', basename(dirname(this.dir)));
      this.verified.delete(segment.path);
      const deferred = this.deferredList.findIndex((d) => d.path === segment.path);
      if (deferred >= 0) this.deferredList.splice(deferred, 1);
      const at = this.closedList.indexOf(segment);
      if (at >= 0) {
        this.closedList.splice(at, 1);
        this.diskBytes -= segment.committedBytes;
      }
    }
    if (targets.length) await fsyncDir(this.dir);
  }

  /**
   * Checks a closed segment group by group before its events go on (compaction, shipping), as
   * recovery does at open: bytes changed on disk since they were written go to the quarantine
   * and are blanked in place, every valid group is kept where it is. A segment is checked once
   * (those found at open were checked then). Returns what it set aside.
   */
  async verify(path: string): Promise<DamagedBytes[]> {
    const segment = this.closedList.find((s) => s.path === resolve(path));
    if (!segment) throw new EngineError('storage_failed', `Not a closed segment of this WAL: ${path}`);
    if (this.verified.has(segment.path)) return [];
    const { damaged } = await recoverSegment(segment.path, { newest: false, quarantine: this.quarantine });
    this.verified.add(segment.path);
    return damaged;
  }

  /** Calls `listener` with each segment the WAL closes (by size or age) from now on; returns the unsubscribe. */
  onSegmentClosed(listener: (segment: WalSegment) => void): () => void {
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  /** Whether the WAL refuses every append since a failed fsync (until the data dir is opened again). */
  get failed(): boolean {
    return this.failure !== null;
  }

  /** Bytes held: `disk` in segments not yet released (committed), `pending` accepted but not yet fsynced. */
  get bytes(): { disk: number; pending: number } {
    return { disk: this.diskBytes, pending: this.groups.pendingBytes };
  }

  /** Closes the active segment now if it holds anything (e.g. before a shutdown compaction). */
  async roll(): Promise<void> {
    this.rolling.requested = true;
    this.groups.kick();
    while (this.rolling.requested && this.groups.running) await this.groups.running;
    await this.groups.running;
  }

  /** Writes what was accepted, then closes the files. Later appends reject with `closed`. */
  close(): Promise<void> {
    // One close however often it is called: the active file is closed and listed once.
    return (this.closed ??= this.closeOnce());
  }

  private async closeOnce(): Promise<void> {
    this.closing = true;
    // A segment being recovered is finished (what is left waits for the next start).
    await this.recovery;
    while (this.groups.running) await this.groups.running;
    this.rolling.stopTimers();
    const active = this.active;
    if (!active) return;
    // Listed as active while its file closes and as closed after, never missing: a query still
    // answering takes a segment missing from its snapshot for compacted and released, and would
    // leave its events (still in memory) out. The file stays (it keeps the highest number); the
    // next open treats it as closed.
    await active.handle.close();
    this.closedList.push({ path: active.path, seq: active.seq, committedBytes: active.committedBytes, closed: true });
    this.rolling.active = null;
  }

  /** The segment written to now (rolling's). */
  private get active(): ActiveSegment | null {
    return this.rolling.active;
  }

  /** The one door through which segment files are made, at open and by every roll. */
  private createSegment(seq: number): Promise<ActiveSegment> {
    return createSegment(this.dir, seq);
  }

  /** Before each group: closes the active segment when a roll is asked for or due (by size or age). */
  private async rollIfDue(): Promise<void> {
    if (!this.rolling.due()) return;
    try {
      const closed = await this.rolling.roll((segment) => this.closedList.push(segment));
      if (closed) this.notifyClosed(closed);
    } catch {
      // No new segment (disk full?): the groups go on into the current one, the next group retries.
      this.rolling.requested = false;
    }
  }

  /** Writes one group into the active segment; each of its appends answers with that segment. */
  private async commit(group: readonly Uint8Array[]): Promise<{ seq: number }> {
    const active = this.active;
    if (!active) throw new EngineError('storage_failed', 'The WAL has no active segment.');
    const seq = active.seq;
    const written = await writeGroup(active, group, (error) => {
      this.failure = storageError(error);
    });
    this.diskBytes += written;
    this.rolling.written();
    return { seq };
  }

  private notifyClosed(segment: WalSegment): void {
    for (const listener of this.closeListeners) {
      try {
        listener({ ...segment });
      } catch {
        // A listener's failure is its own; the WAL goes on.
      }
    }
  }
}

/** A failed write as the error its callers get: disk full is pressure (503), anything else a 500. */
function storageError(error: unknown): Error {
  if (error instanceof EngineError) return error;
  if (isCode(error, 'ENOSPC') || isCode(error, 'EDQUOT')) {
    return new EngineError('overloaded', 'The disk of the data dir is full; retry later.', { cause: error, retryAfterSeconds: 30 });
  }
  return new EngineError('storage_failed', 'The events could not be stored.', { cause: error });
}

/** A bound of the options (createEndpoints checked it already, naming `storage.<name>`), or its default. */
function positive(value: number | undefined, fallback: number, name: string): number {
  checkPositiveNumber(name, value, name.endsWith('Ms') ? 'milliseconds' : 'bytes');
  return value ?? fallback;
}

function ignoreMissing(error: unknown): void {
  if (!isCode(error, 'ENOENT')) throw error;
}
