import { UTCDateMini } from '@date-fns/utc/date/mini';
import { addDays, addHours, addMinutes, addSeconds, startOfDay, startOfHour, startOfMinute, startOfSecond, subDays, subHours, subMinutes } from 'date-fns';
import { dateToMicros, type Micros } from './iso';

/** The bucket units of the endpoints; also the DuckDB `date_trunc` part names. */
export type BucketUnit = 'second' | 'minute' | 'hour' | 'day';

/** A window length, as date-fns counts it. */
export type Span = { minutes: number } | { hours: number } | { days: number };

/**
 * The fixed units of time in microseconds: the one table of their lengths (a day is 24 hours in
 * UTC, which has no daylight saving); milliseconds and seconds are derived from it.
 *
 * @example
 * UNIT_MICROS.hour; // 3600000000
 * unitMs('day'); // 86400000
 */
export const UNIT_MICROS = {
  microsecond: 1,
  millisecond: 1_000,
  second: 1_000_000,
  minute: 60 * 1_000_000,
  hour: 60 * 60 * 1_000_000,
  day: 24 * 60 * 60 * 1_000_000,
  week: 7 * 24 * 60 * 60 * 1_000_000,
} as const;

/** A unit of `UNIT_MICROS`. */
export type TimeUnitName = keyof typeof UNIT_MICROS;

/** Milliseconds in a unit (`unitMs('day')` is 86,400,000). */
export const unitMs = (unit: TimeUnitName): number => UNIT_MICROS[unit] / UNIT_MICROS.millisecond;

/** Seconds in a unit (`unitSeconds('hour')` is 3,600). */
export const unitSeconds = (unit: TimeUnitName): number => UNIT_MICROS[unit] / UNIT_MICROS.second;

/** A span's length in seconds (`spanSeconds({ days: 1 })` is 86,400). */
export function spanSeconds(span: Span): number {
  if ('minutes' in span) return span.minutes * unitSeconds('minute');
  if ('hours' in span) return span.hours * unitSeconds('hour');
  return span.days * unitSeconds('day');
}

// date-fns on UTCDateMini does the calendar arithmetic in UTC whatever the process time zone is.
// The mini class, not the package's UTCDate: UTCDate builds three Intl.DateTimeFormat objects when
// its module loads (for its toString), which reads ICU's locale data into the process: 9 MiB of
// RSS in every process that imports the library, measured (docs/performance.md, "ICU's data left
// unread"). Its results leave as plain Dates, so no caller sees the class.
const TRUNC = { second: startOfSecond, minute: startOfMinute, hour: startOfHour, day: startOfDay } as const;
const ADD = { second: addSeconds, minute: addMinutes, hour: addHours, day: addDays } as const;

const plain = (date: Date): Date => new Date(date.getTime());

/** `trunc(t, unit)` of docs/semantics.md, "Windows and the clock", in UTC. */
export function truncate(date: Date, unit: BucketUnit): Date {
  return plain(TRUNC[unit](new UTCDateMini(date.getTime())));
}

/** `date + n units`, in UTC. */
export function addUnits(date: Date, unit: BucketUnit, n: number): Date {
  return plain(ADD[unit](new UTCDateMini(date.getTime()), n));
}

/** `date - span`, in UTC. */
export function subtractSpan(date: Date, span: Span): Date {
  const d = new UTCDateMini(date.getTime());
  if ('minutes' in span) return plain(subMinutes(d, span.minutes));
  if ('hours' in span) return plain(subHours(d, span.hours));
  return plain(subDays(d, span.days));
}

/** Microseconds of a date, for binding into SQL. */
export const micros = (date: Date): Micros => dateToMicros(date);
