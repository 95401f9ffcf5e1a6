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
  const m = ISO.exec(text.trim());
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', offset] = m;
  const year = Number(y),
    month = Number(mo),
    day = Number(d);
  const hour = Number(h),
    minute = Number(mi),
    second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  let offsetMinutes = 0;
  if (offset && offset !== 'Z' && offset !== 'z') {
    const sign = offset[0] === '-' ? -1 : 1;
    const digits = offset.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
    if (oh > 23 || om > 59) return null;
    offsetMinutes = sign * (oh * 60 + om);
  }
  // Whole seconds by the proleptic Gregorian calendar (as Date counts), in plain numbers: exact
  // for years 0-9999, and no Date nor a second BigInt made (ingest checks every event's timestamp).
  const seconds = daysFromCivil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offsetMinutes * 60;
  const sub = frac === '' ? 0 : Number((frac + '00000').slice(0, 6));
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
