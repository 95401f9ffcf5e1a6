import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fsyncDir } from '../../util/durable-fs';
import type { Quarantine } from './quarantine';
import { recoverSegment, type DamagedBytes } from './recover-segment';
import { segmentFileName, segmentSeqOf } from './segment-name';

/** A segment of the WAL as readers see it. */
export interface WalSegment {
  /** Absolute path of the segment file. */
  path: string;
  /** Its number (the file name without zeros and extension). */
  seq: number;
  /**
   * Bytes of complete, fsynced groups. A reader reads only these: past them may be a group being
   * written, whose requests have not been answered yet.
   */
  committedBytes: number;
  /** Closed segments never change again; the active one (one at most, the newest) grows. */
  closed: boolean;
}

/** What recovery did at open, per segment it had to cut (a torn tail) or found damaged. */
export interface WalRecovery {
  path: string;
  /** Bytes of a write in progress at a crash, never acknowledged, cut off the newest segment. */
  cutBytes: number;
  /** Stretches that failed their checksum, set aside in the quarantine (the groups around them are kept). */
  damaged: DamagedBytes[];
}

/** A segment left by the previous process whose recovery waits for the background. */
export interface DeferredSegment {
  path: string;
  seq: number;
  bytes: number;
}

/** What a WAL's folder held at open, recovered: the segments read now, what they cut or set aside, the ones left for later. */
export interface RecoveredAtOpen {
  /** Recovered now, closed from now on (some may be empty: the caller deletes those). */
  found: WalSegment[];
  recovered: WalRecovery[];
  /** Left to the background, oldest first (`recoverDeferred`). */
  deferred: DeferredSegment[];
  /** The number of the next segment: above every one on disk, so numbers never repeat. */
  nextSeq: number;
}

/**
 * The recovery of a WAL's folder at open (docs/durability.md, "Crashes and recovery"): each
 * segment verified group by group against its checksums (`recoverSegment`), the newest cut after
 * its last valid group (a write in progress at a crash), damage anywhere set aside in the
 * quarantine with every valid group around it kept. The newest first, then the next newest while
 * `budgetBytes` lasts; the older ones are left to the background, so a start serves at once
 * whatever the backlog.
 *
 * @example
 * const { found, deferred, nextSeq } = await recoverAtOpen(dir, quarantine, 8 * 1024 * 1024);
 */
export async function recoverAtOpen(dir: string, quarantine: Quarantine, budgetBytes = Number.POSITIVE_INFINITY): Promise<RecoveredAtOpen> {
  const seqs = (await readdir(dir))
    .map(segmentSeqOf)
    .filter((s): s is number => s !== null)
    .sort((a, b) => a - b);
  const sizes = await Promise.all(seqs.map(async (seq) => (await stat(join(dir, segmentFileName(seq)))).size));
  const newest = sizes.findLastIndex((size) => size > 0);
  // The newest first (its torn tail is cut before anything is appended after it), then the
  // next newest while the budget lasts; the rest waits for the background.
  const atOpen = new Set<number>();
  let budget = budgetBytes;
  for (let i = seqs.length - 1; i >= 0; i--) {
    if (i !== newest && sizes[i]! > budget) break;
    atOpen.add(i);
    budget -= sizes[i]!;
  }
  const found: WalSegment[] = [];
  const recovered: WalRecovery[] = [];
  const deferred: DeferredSegment[] = [];
  for (const [i, seq] of seqs.entries()) {
    const path = join(dir, segmentFileName(seq));
    if (!atOpen.has(i)) {
      deferred.push({ path, seq, bytes: sizes[i]! });
      continue;
    }
    const { committedBytes, cutBytes, damaged } = await recoverSegment(path, { newest: i === newest, quarantine });
    if (cutBytes > 0 || damaged.length) recovered.push({ path, cutBytes, damaged });
    found.push({ path, seq, committedBytes, closed: true });
  }
  if (recovered.length) await fsyncDir(dir);
  return { found, recovered, deferred, nextSeq: (seqs.at(-1) ?? 0) + 1 };
}
