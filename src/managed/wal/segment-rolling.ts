import { open } from 'node:fs/promises';
import { join } from 'node:path';
import type { CacheScheduler } from '../../util/scheduler';
import { fsyncDir } from '../../util/durable-fs';
import type { GroupTarget } from './group-commit';
import type { WalSegment } from './recover-at-open';
import { segmentFileName } from './segment-name';

/** The segment the WAL writes to now. */
export interface ActiveSegment extends GroupTarget {
  seq: number;
  path: string;
  /** When its first group was written (monotonic ms), null while empty. */
  firstWriteAt: number | null;
  /** When its last group was written (monotonic ms), null while empty. */
  lastWriteAt: number | null;
}

/** When a segment closes: by size, by the age of its first group, by a quiet spell after its last. */
export interface RollingRules {
  maxSegmentBytes: number;
  maxSegmentAgeMs: number;
  /** A segment holding at least `quietRollBytes` closes once no group was written into it for this long. */
  quietMs: number;
  /** Below this a quiet segment waits for its age: a trickle of events is not a compaction run each. */
  quietRollBytes: number;
  /** Monotonic milliseconds. */
  now: () => number;
  /** Runs the age-based and quiet rolls of an idle segment. */
  scheduler: CacheScheduler;
}

/**
 * Rolling: which segment is active, when it closes (it holds `maxSegmentBytes`, or its first group
 * is `maxSegmentAgeMs` old, or it holds `quietRollBytes` and nothing was written into it for
 * `quietMs`: a timer asks for the roll of an idle one; an empty segment never closes, so an idle
 * log has no timer) and the next one's file (`segmentFileName`, created and its folder fsynced).
 * The quiet roll hands a segment to compaction soon after its sender stops, so the memory tables
 * give its rows back then, not up to a minute later.
 *
 * @example
 * const rolling = new SegmentRolling(rules, (seq) => createSegment(dir, seq), () => { rolling.requested = true; groupCommit.kick(); });
 * rolling.active = await createSegment(dir, 1);
 * const closed = await rolling.roll((s) => closedList.push(s)); // the old segment, or null when it held nothing
 */
export class SegmentRolling {
  active: ActiveSegment | null = null;
  /** A roll asked for (by size, by the age timer, by `Wal.roll`), done before the next group. */
  requested = false;
  private cancelAgeTimer: (() => void) | null = null;
  private cancelQuietTimer: (() => void) | null = null;

  /**
   * `create` makes the file of the next segment (`createSegment`, through the WAL); `ask` is
   * called when the age timer of the active segment runs out (the WAL asks for the roll, unless
   * it closes).
   */
  constructor(
    private readonly rules: RollingRules,
    private readonly create: (seq: number) => Promise<ActiveSegment>,
    private readonly ask: () => void,
  ) {}

  /** Whether the active segment should close now (a roll asked for, full, or old). */
  due(): boolean {
    if (this.requested) return true;
    const a = this.active;
    if (!a || a.firstWriteAt === null) return false;
    return a.committedBytes >= this.rules.maxSegmentBytes || this.rules.now() - a.firstWriteAt >= this.rules.maxSegmentAgeMs || this.quiet(a);
  }

  /**
   * After each group written into the active segment: the first starts its age and the age timer;
   * each one restarts its quiet spell, and once it holds `quietRollBytes` a quiet timer runs (one
   * at a time: when it fires early, because groups came meanwhile, it waits for the rest).
   */
  written(): void {
    const a = this.active;
    if (!a) return;
    const now = this.rules.now();
    a.lastWriteAt = now;
    if (a.firstWriteAt === null) {
      a.firstWriteAt = now;
      this.cancelAgeTimer = this.rules.scheduler.schedule(this.rules.maxSegmentAgeMs, async () => {
        this.cancelAgeTimer = null;
        this.ask();
      });
    }
    if (this.cancelQuietTimer === null && a.committedBytes >= this.rules.quietRollBytes) this.waitQuiet(a, this.rules.quietMs);
  }

  /** Whether `segment` holds enough to be closed when quiet, and has been quiet for `quietMs`. */
  private quiet(segment: ActiveSegment): boolean {
    return segment.lastWriteAt !== null && segment.committedBytes >= this.rules.quietRollBytes && this.rules.now() - segment.lastWriteAt >= this.rules.quietMs;
  }

  private waitQuiet(segment: ActiveSegment, delayMs: number): void {
    this.cancelQuietTimer = this.rules.scheduler.schedule(delayMs, async () => {
      this.cancelQuietTimer = null;
      if (this.active !== segment || segment.lastWriteAt === null) return;
      if (this.quiet(segment)) this.ask();
      else this.waitQuiet(segment, segment.lastWriteAt + this.rules.quietMs - this.rules.now());
    });
  }

  /** After each group, written or not: a full segment asks for the roll. */
  checkSize(): void {
    if (this.active && this.active.committedBytes >= this.rules.maxSegmentBytes) this.requested = true;
  }

  /**
   * Closes the active segment when it holds anything and makes the next one active; returns the
   * closed one (null when there was nothing to close). `listClosed` is called in the same turn as
   * the next segment becomes active: a snapshot taken while the old file closes must hold it
   * (queries take a segment missing from their snapshot for one compacted and released, and leave
   * its events out). Throws when the next file cannot be created: the active segment stays.
   */
  async roll(listClosed: (segment: WalSegment) => void): Promise<WalSegment | null> {
    this.requested = false;
    const old = this.active;
    if (!old || old.firstWriteAt === null) return null;
    const next = await this.create(old.seq + 1);
    const closed: WalSegment = { path: old.path, seq: old.seq, committedBytes: old.committedBytes, closed: true };
    this.active = next;
    listClosed(closed);
    this.stopTimers();
    // Its bytes are fsynced already, and nothing writes to it any more; a failing close loses nothing.
    await old.handle.close().catch(() => undefined);
    return closed;
  }

  /** Cancels the age and quiet timers of the active segment (it closed, or the WAL closes). */
  stopTimers(): void {
    this.cancelAgeTimer?.();
    this.cancelAgeTimer = null;
    this.cancelQuietTimer?.();
    this.cancelQuietTimer = null;
  }
}

/**
 * Creates segment `seq`'s file in `dir` (never one that exists, so numbers never repeat) and fsyncs the folder.
 *
 * @example
 * const active = await createSegment('data/edgeLogs/wal', 42); // data/edgeLogs/wal/00000000000000000042.ndjson
 */
export async function createSegment(dir: string, seq: number): Promise<ActiveSegment> {
  const path = join(dir, segmentFileName(seq));
  const handle = await open(path, 'wx');
  await fsyncDir(dir);
  return { seq, path, handle, committedBytes: 0, groups: 0, firstWriteAt: null, lastWriteAt: null };
}
