/**
 * Instants of the Supabase fixtures as JavaScript numbers of microseconds since the epoch (exact
 * below 2^53, i.e. up to year 2255), and the ISO texts Vector and Studio write for them.
 */

/** Microseconds since the Unix epoch, UTC. */
export type Micros = number;

export const SECOND: Micros = 1_000_000;
export const MINUTE: Micros = 60 * SECOND;
export const HOUR: Micros = 60 * MINUTE;
export const DAY: Micros = 24 * HOUR;

/** Microseconds of a `Date`. */
export function microsOf(date: Date): Micros {
  return date.getTime() * 1000;
}

/** `2026-11-21T11:00:00.123Z`: what `Date#toISOString` (and dayjs) writes, milliseconds truncated from `micros`. */
export function isoMillis(micros: Micros): string {
  return new Date(Math.floor(micros / 1000)).toISOString();
}

/** `2026-11-21T11:00:00Z`: a Vector timestamp of whole seconds (nginx's, PostgREST's own clock). */
export function isoSeconds(micros: Micros): string {
  return `${isoMillis(micros).slice(0, 19)}Z`;
}

/**
 * A Vector timestamp of nanosecond precision (Docker's clock) as Vector writes it: only the
 * sub-second digits there are, in groups of three (none, milli, micro or nano: chrono's `AutoSi`).
 * `nanos` (0-999) are the nanoseconds past `micros`.
 */
export function isoNanos(micros: Micros, nanos: number): string {
  const sub = (((micros % SECOND) + SECOND) % SECOND) * 1000 + nanos;
  const base = isoMillis(micros).slice(0, 19);
  if (sub === 0) return `${base}Z`;
  const digits = String(sub).padStart(9, '0');
  if (sub % 1_000_000 === 0) return `${base}.${digits.slice(0, 3)}Z`;
  if (sub % 1000 === 0) return `${base}.${digits.slice(0, 6)}Z`;
  return `${base}.${digits}Z`;
}

/** The fields of a UTC instant, for log line prefixes (`21/Nov/2026:11:00:00 +0000`, `2026/11/21 11:00:00`). */
export function utcParts(micros: Micros) {
  const d = new Date(Math.floor(micros / 1000));
  const two = (n: number) => String(n).padStart(2, '0');
  const month = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'][d.getUTCMonth()]!;
  return {
    year: String(d.getUTCFullYear()),
    month: two(d.getUTCMonth() + 1),
    monthName: month,
    day: two(d.getUTCDate()),
    time: `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`,
    millis: String(d.getUTCMilliseconds()).padStart(3, '0'),
  };
}
