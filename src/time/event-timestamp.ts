import { parseIsoMicros, type Micros } from './iso';

/** Below this magnitude a number is seconds (docs/semantics.md, "Timestamps", as Logflare's ingest reads it). */
const SECONDS_BELOW = 100_000_000_000n; // 1e11
/** Below this, milliseconds (`Date.now()`). */
const MILLIS_BELOW = 100_000_000_000_000n; // 1e14
/** Below this, microseconds (how Logflare stores it); anything larger is nanoseconds. */
const MICROS_BELOW = 100_000_000_000_000_000n; // 1e17

/** Fractional digits kept from a decimal number: DuckDB's DECIMAL(38,9), rounded half away from zero. */
const SCALE = 9;
const ONE = 10n ** BigInt(SCALE);

const NUMBER = /^\s*([+-])?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?\s*$/;

/** 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999Z in microseconds: the years ISO 8601 writes. */
const FIRST = -62_135_596_800_000_000n;
const LAST = 253_402_300_799_999_999n;

/**
 * The instant of an event's `timestamp` (docs/semantics.md, "Timestamps") in microseconds, or null when it has none:
 * the one rule of what a readable timestamp is, which ingest checks and the SQL macro
 * `le_timestamp` (src/duckdb/source-relations.ts) applies, so an event ingest accepts is an
 * event every query reads (docs/durability.md, "What ingest accepts").
 * An ISO 8601 string (offset optional, UTC when absent, up to nine fractional digits cut to the
 * microsecond), or a number since the Unix epoch whose unit follows its magnitude: below 1e11
 * seconds (a fraction allowed), below 1e14 milliseconds, below 1e17 microseconds, otherwise
 * nanoseconds. A numeric string counts as the number; whitespace around the text is ignored.
 * Only instants within years 1 to 9999 count. Both round the same way.
 *
 * @example
 * eventTimestampMicros(1795256102.5);              // 1795256102500000n (seconds)
 * eventTimestampMicros('1795256102123');           // 1795256102123000n (milliseconds)
 * eventTimestampMicros('2026-11-21T10:15:02,5z');  // 1795256102500000n
 */
export function eventTimestampMicros(value: unknown): Micros | null {
  const micros = instantOf(value);
  return micros !== null && micros >= FIRST && micros <= LAST ? micros : null;
}

function instantOf(value: unknown): Micros | null {
  if (typeof value === 'bigint') return byMagnitude(value * ONE);
  if (typeof value === 'number') {
    const number = Number.isFinite(value) ? scaled(String(value)) : null;
    return number === null ? null : byMagnitude(number);
  }
  if (typeof value !== 'string') return null;
  const number = startsAsDate(value) ? null : scaled(value);
  return number === null ? parseIsoMicros(value) : byMagnitude(number);
}

/**
 * Four digits then `-` (`2026-...`): no number's text, so `scaled`'s pattern is not tried on the
 * timestamps most events carry.
 */
function startsAsDate(text: string): boolean {
  if (text.length < 5 || text.charCodeAt(4) !== 0x2d) return false;
  for (let i = 0; i < 4; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

/**
 * A decimal text as an integer scaled by 10^9 (rounded half away from zero, as DuckDB's cast), or
 * null. Only the digits that can matter are turned into a bigint: a number past 10^40 is no
 * instant, and below the scale only the first dropped digit decides the rounding, so a text of
 * millions of digits or an exponent of thousands costs no more than a short one.
 */
function scaled(text: string): bigint | null {
  const m = NUMBER.exec(text);
  if (!m) return null;
  const [, sign = '', whole = '', fraction = '', exponent = '0'] = m;
  if (whole === '' && fraction === '') return null;
  const digits = (whole + fraction).replace(/^0+/, '');
  if (digits === '') return 0n;
  // value = digits * 10^(exponent - fraction.length); scaled, the power grows by SCALE.
  const power = Number(exponent) - fraction.length + SCALE;
  let magnitude: bigint;
  if (digits.length + power > 41)
    magnitude = 10n ** 41n; // far past any instant: byMagnitude refuses it
  else if (power >= 0) magnitude = BigInt(digits) * 10n ** BigInt(power);
  else if (digits.length + power < 0)
    magnitude = 0n; // below half a unit of the scale
  else {
    // The digits above the scale and the first one below it (which rounds).
    const kept = BigInt(digits.slice(0, digits.length + power + 1));
    magnitude = kept / 10n + (kept % 10n >= 5n ? 1n : 0n);
  }
  return sign === '-' ? -magnitude : magnitude;
}

/** Microseconds of a number scaled by 10^9, by the magnitude rule; floor, as DuckDB's `floor`. */
function byMagnitude(n: bigint): Micros {
  const abs = n < 0n ? -n : n;
  let micros: bigint;
  if (abs < SECONDS_BELOW * ONE) micros = floorDiv(n * 1_000_000n, ONE);
  else if (abs < MILLIS_BELOW * ONE) micros = floorDiv(n * 1_000n, ONE);
  else if (abs < MICROS_BELOW * ONE) micros = floorDiv(n, ONE);
  else micros = floorDiv(n, ONE * 1_000n);
  return micros;
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}
