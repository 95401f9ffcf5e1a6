/**
 * Timestamps travel through the library as bigint microseconds since the Unix epoch (UTC):
 * log data has microsecond precision and a JS `Date` would silently drop it.
 */
export type Micros = bigint;

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

/**
 * Parses an ISO 8601 timestamp (date, or date and time; offset optional, UTC when absent; up to
 * nine fractional digits, truncated to microseconds). Returns null when the text is not one.
 */
export function parseIsoMicros(text: string): Micros | null {
  const common = commonIsoMicros(text);
  if (common !== undefined) return common;
  const m = ISO.exec(text.trim());
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', offset] = m;
  let offsetMinutes = 0;
  if (offset && offset !== 'Z' && offset !== 'z') {
    const sign = offset[0] === '-' ? -1 : 1;
    const digits = offset.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
    if (oh > 23 || om > 59) return null;
    offsetMinutes = sign * (oh * 60 + om);
  }
  return instant(Number(y), Number(mo), Number(d), Number(h), Number(mi), Number(s), frac === '' ? 0 : Number((frac + '00000').slice(0, 6)), offsetMinutes);
}

/**
 * The form nearly every event's timestamp has, `YYYY-MM-DDTHH:MM:SS`, a fraction of 1-9 digits
 * and `Z` (both optional), read digit by digit: no pattern, no trim, no substrings. Any other text
 * (an offset, a date alone, spaces around it) is undefined and goes through `ISO`; a text of this
 * form matches `ISO` with the same fields, so both give the same instant.
 */
function commonIsoMicros(text: string): Micros | null | undefined {
  const length = text.length;
  if (length < 19 || text.charCodeAt(4) !== 0x2d || text.charCodeAt(7) !== 0x2d || text.charCodeAt(13) !== 0x3a || text.charCodeAt(16) !== 0x3a) return undefined;
  const t = text.charCodeAt(10);
  if (t !== 0x54 && t !== 0x20) return undefined;
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  const hour = digits(text, 11, 2);
  const minute = digits(text, 14, 2);
  const second = digits(text, 17, 2);
  if (year < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return undefined;
  let at = 19;
  let sub = 0;
  const mark = text.charCodeAt(at);
  if (mark === 0x2e || mark === 0x2c) {
    // The first six digits are the microseconds (fewer: padded with zeros), the rest cut.
    let scale = 100_000;
    for (at++; at < length && at <= 28 && isDigit(text.charCodeAt(at)); at++) {
      sub += (text.charCodeAt(at) - 0x30) * scale;
      scale = scale >= 10 ? scale / 10 : 0;
    }
    // No digit after the mark, or a tenth one: not the common form (ISO refuses the latter).
    if (at === 20 || (at === 29 && at < length && isDigit(text.charCodeAt(at)))) return undefined;
  }
  if (at < length && (text.charCodeAt(at) === 0x5a || text.charCodeAt(at) === 0x7a)) at++;
  if (at !== length) return undefined;
  return instant(year, month, day, hour, minute, second, sub, 0);
}

/** The number written by `count` ASCII digits at `from`, or -1. */
function digits(text: string, from: number, count: number): number {
  let n = 0;
  for (let i = from; i < from + count; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return -1;
    n = n * 10 + (c - 0x30);
  }
  return n;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** The instant of a civil date and time (checked: null when no such day or time) at an offset from UTC. */
function instant(year: number, month: number, day: number, hour: number, minute: number, second: number, sub: number, offsetMinutes: number): Micros | null {
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  // Whole seconds by the proleptic Gregorian calendar (as Date counts), in plain numbers: exact
  // for years 0-9999, and no Date nor a second BigInt made (ingest checks every event's timestamp).
  const seconds = daysFromCivil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offsetMinutes * 60;
  const micros = seconds * 1_000_000 + sub;
  return Number.isSafeInteger(micros) ? BigInt(micros) : BigInt(seconds) * 1_000_000n + BigInt(sub);
}

/**
 * Days from 1970-01-01 to a date of the proleptic Gregorian calendar (H. Hinnant's
 * `days_from_civil`): whole eras of 400 years, then the day within the era, March first.
 */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Formats microseconds as `YYYY-MM-DDTHH:MM:SS.ffffffZ` (docs/semantics.md, "Values in results": exactly six digits). */
export function formatIsoMicros(micros: Micros): string {
  // Every instant of years 1685-2255 fits a double exactly: plain numbers there (BigInt division
  // is most of this function's cost, and result rows format one per row), BigInt beyond.
  const n = Number(micros);
  if (Number.isSafeInteger(n)) {
    // Remainder first (exact on integers), never a rounded quotient; floored for instants before 1970.
    const sub = ((n % 1000) + 1000) % 1000;
    return `${new Date((n - sub) / 1000).toISOString().slice(0, 23)}${String(sub).padStart(3, '0')}Z`;
  }
  const ms = floorDiv(micros, 1000n);
  const sub = micros - ms * 1000n;
  const iso = new Date(Number(ms)).toISOString(); // 2026-11-21T10:15:02.123Z
  return `${iso.slice(0, 23)}${sub.toString().padStart(3, '0')}Z`;
}

/** Microseconds of a `Date`. */
export function dateToMicros(date: Date): Micros {
  return BigInt(date.getTime()) * 1000n;
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}
