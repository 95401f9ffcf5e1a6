import { UTCDate } from '@date-fns/utc';
import { addDays, addHours, addMinutes, addSeconds, startOfDay, startOfHour, startOfMinute, startOfSecond, subDays, subHours, subMinutes } from 'date-fns';
import { dateToMicros, type Micros } from './iso';

/** The bucket units of the endpoints; also the DuckDB `date_trunc` part names. */
export type BucketUnit = 'second' | 'minute' | 'hour' | 'day';

/** A window length, as date-fns counts it. */
export type Span = { minutes: number } | { hours: number } | { days: number };

// date-fns on UTCDate does the calendar arithmetic in UTC whatever the process time zone is.
const TRUNC = { second: startOfSecond, minute: startOfMinute, hour: startOfHour, day: startOfDay } as const;
const ADD = { second: addSeconds, minute: addMinutes, hour: addHours, day: addDays } as const;

/** `trunc(t, unit)` of docs/semantics.md, "Windows and the clock", in UTC. */
export function truncate(date: Date, unit: BucketUnit): Date {
  return TRUNC[unit](new UTCDate(date.getTime()));
}

/** `date + n units`, in UTC. */
export function addUnits(date: Date, unit: BucketUnit, n: number): Date {
  return ADD[unit](new UTCDate(date.getTime()), n);
}

/** `date - span`, in UTC. */
export function subtractSpan(date: Date, span: Span): Date {
  const d = new UTCDate(date.getTime());
  if ('minutes' in span) return subMinutes(d, span.minutes);
  if ('hours' in span) return subHours(d, span.hours);
  return subDays(d, span.days);
}

/** Microseconds of a date, for binding into SQL. */
export const micros = (date: Date): Micros => dateToMicros(date);
