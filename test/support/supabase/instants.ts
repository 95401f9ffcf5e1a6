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

/**
 * The fields of one UTC second, remembered for the next call: a feed's events come in time order,
 * many within one second, and formatting a `Date` is most of what an event costs to generate.
 */
let second = Number.NaN;
let secondFields = fieldsOf(0);

function fieldsOf(seconds: number) {
  const iso = new Date(seconds * 1000).toISOString();
  return {
    /** `2026-11-21T11:00:00` */
    iso: iso.slice(0, 19),
    year: iso.slice(0, 4),
    month: iso.slice(5, 7),
    monthName: ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'][Number(iso.slice(5, 7)) - 1]!,
    day: iso.slice(8, 10),
    time: iso.slice(11, 19),
  };
}

function fieldsAt(micros: Micros) {
  const s = Math.floor(micros / SECOND);
  if (s !== second) {
    second = s;
    secondFields = fieldsOf(s);
  }
  return secondFields;
}

/** Milliseconds (000-999) of `micros` within its second. */
export function millisOf(micros: Micros): string {
  return String(Math.floor((((micros % SECOND) + SECOND) % SECOND) / 1000)).padStart(3, '0');
}

/** `2026-11-21T11:00:00.123Z`: what `Date#toISOString` (and dayjs) writes, milliseconds truncated from `micros`. */
export function isoMillis(micros: Micros): string {
  return `${fieldsAt(micros).iso}.${millisOf(micros)}Z`;
}

/** `2026-11-21T11:00:00Z`: a Vector timestamp of whole seconds (nginx's, PostgREST's own clock). */
export function isoSeconds(micros: Micros): string {
  return `${fieldsAt(micros).iso}Z`;
}

/**
 * A Vector timestamp of nanosecond precision (Docker's clock) as Vector writes it: only the
 * sub-second digits there are, in groups of three (none, milli, micro or nano: chrono's `AutoSi`).
 * `nanos` (0-999) are the nanoseconds past `micros`.
 */
export function isoNanos(micros: Micros, nanos: number): string {
  const sub = (((micros % SECOND) + SECOND) % SECOND) * 1000 + nanos;
  const base = fieldsAt(micros).iso;
  if (sub === 0) return `${base}Z`;
  const digits = String(sub).padStart(9, '0');
  if (sub % 1_000_000 === 0) return `${base}.${digits.slice(0, 3)}Z`;
  if (sub % 1000 === 0) return `${base}.${digits.slice(0, 6)}Z`;
  return `${base}.${digits}Z`;
}

/** The fields of a UTC instant, for log line prefixes (`21/Nov/2026:11:00:00 +0000`, `2026/11/21 11:00:00`). */
export function utcParts(micros: Micros): Readonly<{ year: string; month: string; monthName: string; day: string; time: string }> {
  return fieldsAt(micros);
}
