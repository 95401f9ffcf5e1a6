import { unitMs } from '../time/units';

/**
 * Which of a day's files managed storage merges into one (dataset-maintenance.ts), by size: each
 * background compaction writes a file per day it touched (one of a few MB while ingesting, one of
 * a few events for a late event of another day), and every file costs a query its own reads (its
 * footer, its head, its stored rollups, row groups that compress across fewer rows). Merging
 * files of about the same size, smallest first, keeps a day at a few files (at most five below
 * 64 MiB) while each event is rewritten a few times on its way to 64 MiB (as a log-structured
 * merge tree's size tiers do), instead of eight files and the same growing file rewritten with
 * every seven new ones (the rule of before). A merge sorts no more events at once than fit its
 * DuckDB's memory limit (`mergeRowsFor` in background-compactor.ts): one of more sorts them in
 * slices (merge-slices.ts), so its size is not bounded by the limit. `maxRows` bounds a merge
 * only after one ran out of memory at the retry's ceiling (the next takes half its events).
 */

/** Files at least this large are left alone: merging them would rewrite much for little. */
export const MERGE_BELOW_BYTES = 64 * 1024 * 1024;

/**
 * A file joins the smaller ones before it when it is at most this many times their total size.
 * Two files of about one size merge (a file's size varies with each compaction's segments, so
 * "about": up to twice), then two of about twice that size, ...: a day keeps at most about
 * log3(64 MiB / smallest file) small files, and each byte is rewritten a few times on its way to
 * 64 MiB (six times for doublings from 1 MiB).
 */
export const MERGE_SIZE_RATIO = 2;

/**
 * Below this total, files merge whatever their sizes' ratio: a file of a few late events (a few
 * KB, one per compaction that met one) costs a query as much as a full one, and merging it into a
 * file of a few MB is cheap (measured on the bench's managed storage: days held files of 6, 44 and
 * 11 events beside ones of 28,000 and 56,000 until they were merged).
 */
export const MERGE_FLOOR_BYTES = 2 * 1024 * 1024;

/** What the merge policy reads of a data file: its path, its size and its events. */
export interface MergeCandidate {
  path: string;
  bytes: number;
  rows: number;
}

/**
 * The files of one day to merge now, or an empty list. The files below MERGE_BELOW_BYTES in
 * order of size, from the smallest that starts a run: a file joins the run while it is at most
 * MERGE_SIZE_RATIO times the run's total (or MERGE_FLOOR_BYTES, when that is more) and the run's
 * events stay within `maxRows` (the events one merge takes: no bound unless a merge ran out of
 * memory, `mergeBounded` in background-compactor.ts); a run of two or more is merged. Files of equal size are taken in
 * path order, so the choice is the same for the same files. Merged until nothing is left to
 * merge, a day holds at most five files below 64 MiB (each then more than twice the one before
 * it, the second more than 4 MiB) where `maxRows` allows it; past it, files stop merging once no
 * file and the next in order of size fit one merge, so a day may hold more files (after a burst,
 * many files of one size merge two by two, and on while they fit).
 *
 * @example
 * const mib = 1024 * 1024;
 * filesToMerge([{ path: 'a', bytes: 4 * mib, rows: 4e4 }, { path: 'b', bytes: 5 * mib, rows: 5e4 }, { path: 'c', bytes: 30 * mib, rows: 3e5 }]) // a and b
 * filesToMerge([{ path: 'a', bytes: 4 * mib, rows: 4e4 }, { path: 'b', bytes: 5 * mib, rows: 5e4 }], 8e4) // none: 90,000 events do not fit one merge
 */
export function filesToMerge<F extends MergeCandidate>(files: readonly F[], maxRows = Infinity): F[] {
  const small = bySize(files);
  // From the smallest file on, the first that gathers a run of two or more.
  for (let first = 0; first < small.length - 1; first++) {
    let total = small[first]!.bytes;
    let rows = small[first]!.rows;
    let end = first + 1;
    while (end < small.length && small[end]!.bytes <= MERGE_SIZE_RATIO * Math.max(total, MERGE_FLOOR_BYTES) && rows + small[end]!.rows <= maxRows) {
      total += small[end]!.bytes;
      rows += small[end++]!.rows;
    }
    if (end - first >= 2) return small.slice(first, end);
  }
  return [];
}

/** The files below MERGE_BELOW_BYTES, smallest first (equal sizes in path order: the same choice for the same files). */
function bySize<F extends MergeCandidate>(files: readonly F[]): F[] {
  return files.filter((f) => f.bytes < MERGE_BELOW_BYTES).sort((a, b) => a.bytes - b.bytes || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * A day ended this long ago (event time, on the storage's clock) takes few late events more: its
 * files merge into one once no compaction wrote one of its files for SETTLE_QUIET_MS either.
 */
export const SETTLE_AFTER_DAY_END_MS = unitMs('hour');

/**
 * How long no compaction may have written a file of a day (elapsed time) before the day is taken
 * as settled: a day that keeps receiving late events (a client whose clock is behind) is merged
 * whole at most once per this time, not after every compaction run.
 */
export const SETTLE_QUIET_MS = 60 * 1000;

/**
 * Whether `day` (`YYYY-MM-DD`) is settled: it ended SETTLE_AFTER_DAY_END_MS before `nowMs`, and
 * `quietForMs` (the time since a compaction last wrote a file of it; Infinity when none did since
 * the process started) is at least SETTLE_QUIET_MS.
 */
export function daySettled(day: string, nowMs: number, quietForMs: number): boolean {
  return nowMs >= Date.parse(`${day}T00:00:00Z`) + unitMs('day') + SETTLE_AFTER_DAY_END_MS && quietForMs >= SETTLE_QUIET_MS;
}

/**
 * The files of a settled day to merge into one: every file below MERGE_BELOW_BYTES, when there
 * are two or more. The size tiers keep a day that is still written at a few files; a day that is
 * over is read as it will stay, for the rest of its retention, and each file costs every query
 * that reads the day its own footer, head and stored rollups whatever its size. Measured on the
 * benchmark's newest events (two days, compacted in two runs, a file of a few KB beside one of
 * 23 MB for one day): invocation-stats over 7 days took 1.14 - 1.17x as long, usage daily 1.05 -
 * 1.12x, logs.all's first page 1.07 - 1.21x, as the same events in one file per day.
 *
 * Files that do not all fit one merge (`maxRows`, as in `filesToMerge`) are merged in parts: the
 * smallest first, as many as fit. Asked again after each merge, it takes the next part (the
 * merged file among them when it still fits), until the two smallest files do not fit one merge;
 * each merge removes a file at least, so it ends.
 *
 * @example
 * const mib = 1024 * 1024;
 * settledFilesToMerge([{ path: 'a', bytes: 0.01 * mib, rows: 10 }, { path: 'b', bytes: 23 * mib, rows: 2e5 }]) // a and b
 * settledFilesToMerge([{ path: 'a', bytes: mib, rows: 1e4 }, { path: 'b', bytes: mib, rows: 1e4 }, { path: 'c', bytes: mib, rows: 1e4 }], 2e4) // a and b
 */
export function settledFilesToMerge<F extends MergeCandidate>(files: readonly F[], maxRows = Infinity): F[] {
  const small = bySize(files);
  let end = 0;
  for (let rows = 0; end < small.length && rows + small[end]!.rows <= maxRows; end++) rows += small[end]!.rows;
  return end >= 2 ? small.slice(0, end) : [];
}
