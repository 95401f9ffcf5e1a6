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
}

/** When a segment closes: by size, by the age of its first group. */
export interface RollingRules {
  maxSegmentBytes: number;
  maxSegmentAgeMs: number;
  /** Monotonic milliseconds. */
  now: () => number;
  /** Runs the age-based roll of an idle segment. */
  scheduler: CacheScheduler;
}

/**
 * Rolling: which segment is active, when it closes (it holds `maxSegmentBytes`, or its first group
 * is `maxSegmentAgeMs` old: a timer asks for the roll of an idle one; an empty segment never
 * closes) and the next one's file (`segmentFileName`, created and its folder fsynced).
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
    return a.committedBytes >= this.rules.maxSegmentBytes || this.rules.now() - a.firstWriteAt >= this.rules.maxSegmentAgeMs;
  }

  /** After the first group of the active segment is written: its age counts from now, and its timer starts. */
  written(): void {
    const a = this.active;
    if (!a || a.firstWriteAt !== null) return;
    a.firstWriteAt = this.rules.now();
    this.cancelAgeTimer = this.rules.scheduler.schedule(this.rules.maxSegmentAgeMs, async () => {
      this.cancelAgeTimer = null;
      this.ask();
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
    this.stopAgeTimer();
    // Its bytes are fsynced already, and nothing writes to it any more; a failing close loses nothing.
    await old.handle.close().catch(() => undefined);
    return closed;
  }

  /** Cancels the age timer of the active segment (the WAL closes). */
  stopAgeTimer(): void {
    this.cancelAgeTimer?.();
    this.cancelAgeTimer = null;
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
  return { seq, path, handle, committedBytes: 0, groups: 0, firstWriteAt: null };
}
