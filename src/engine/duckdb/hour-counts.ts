import type { CompiledQuery } from '../engine';
import type { ListedFile } from '../../files/list-glob';
import { partitionDay } from '../../files/file-kinds';

const HOUR = 3_600_000_000n;
const DAY = 24n * HOUR;

/** Floor division of microseconds by a unit (towards minus infinity, before 1970 too). */
const floorTo = (micros: bigint, unit: bigint) => micros - (((micros % unit) + unit) % unit);

/**
 * The whole hours of a caller's chart's window (`[from, to)`, microseconds; null for no bound on
 * that side) that the hour counts may give: every instant of each is inside the caller's own WHERE
 * (`hourCounts.from` / `until`: first and last instants kept) and inside its source table's bounds,
 * the statement's `notBefore` (an hour is taken only from the first one starting after it, whether
 * the bound keeps that instant or not) and its `newestFirst.until` (an hour only if it ends at or
 * before it, whether the bound keeps that instant or not). Null when no hour is.
 *
 * @example
 * servedHours({ hourCounts: { from: 10n, until: null, ... }, params: { until: null }, newestFirst: { limit: 'limit', until: 'until' } }); // { from: 3600000000n, to: null }
 */
export function servedHours(query: Pick<CompiledQuery, 'hourCounts' | 'params' | 'notBefore' | 'newestFirst'>): { from: bigint | null; to: bigint | null } | null {
  const h = query.hourCounts;
  if (h === undefined || query.newestFirst === undefined) return null;
  const bound = query.params[query.newestFirst.until];
  const until = bound && typeof bound === 'object' ? bound.timestamp : null;
  const firsts = [...(h.from === null ? [] : [floorTo(h.from + HOUR - 1n, HOUR)]), ...(query.notBefore === undefined ? [] : [floorTo(query.notBefore, HOUR) + HOUR])];
  // The caller's last instant kept, and the template's `until` as if it kept only what is before it
  // (an hour ending at it is whole either way: a template bounding by `<` or `<=` alike).
  const ends = [...(h.until === null ? [] : [h.until + 1n]), ...(until === null ? [] : [until])];
  const from = firsts.length ? firsts.reduce((a, b) => (a > b ? a : b)) : null;
  const to = ends.length
    ? floorTo(
        ends.reduce((a, b) => (a < b ? a : b)),
        HOUR,
      )
    : null;
  return from !== null && to !== null && from >= to ? null : { from, to };
}

/**
 * Whether some served hour has ended by `now` (the request's clock, microseconds): only then may
 * the hour counts hold anything of the window. Studio's "last hour" has no upper bound, so its
 * served hours start at the hour after its start and run on: at 12:00 they hold nothing yet, and
 * reading the hour counts' files and planning the two-step text only cost (the Explorer's last
 * hour 0.74 - 0.81 of main's CPU per call before this was asked; docs/performance.md, "The
 * Explorer's 7-day templates from the hour counts"). Either way the answer is the same.
 *
 * @example
 * anHourHasPassed({ from: 3600000000n, to: null }, 3600000000n); // false
 */
export function anHourHasPassed(hours: { from: bigint | null; to: bigint | null }, now: bigint | null): boolean {
  return now === null || hours.from === null || hours.from + HOUR <= now;
}

/**
 * Whether a compacted file's day overlaps the served hours, and whether it lies wholly inside them
 * (then none of its rows is read: compaction puts each event in its UTC day's file). A file outside
 * a day folder is neither.
 */
export function dayWithin(file: ListedFile, hours: { from: bigint | null; to: bigint | null }): 'inside' | 'overlaps' | 'outside' {
  const day = file.dataset ? partitionDay(file.path) : null;
  if (day === null) return 'outside';
  const start = BigInt(Date.parse(`${day}T00:00:00Z`)) * 1000n;
  const end = start + DAY;
  if ((hours.to !== null && start >= hours.to) || (hours.from !== null && end <= hours.from)) return 'outside';
  return (hours.from === null || start >= hours.from) && (hours.to === null || end <= hours.to) ? 'inside' : 'overlaps';
}

/** SQL conditions on `timestamp` of the served hours (`within`) and of every other row, NULL and infinite included (`without`). */
export function hoursCondition(hours: { from: bigint | null; to: bigint | null }): { within: string; without: string } {
  const parts = [...(hours.from === null ? [] : [`timestamp >= make_timestamp(${hours.from})`]), ...(hours.to === null ? [] : [`timestamp < make_timestamp(${hours.to})`])];
  const within = parts.length ? parts.join(' AND ') : 'true';
  // Infinite timestamps compare beyond every finite bound; NULL is no hour's.
  return { within: `(${within} AND isfinite(timestamp))`, without: `NOT coalesce(${within} AND isfinite(timestamp), false)` };
}
