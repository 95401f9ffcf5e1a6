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

/**
 * The instant of an event's `timestamp` (docs/semantics.md, "Timestamps") in microseconds, or null when it has none.
 * An ISO 8601 string (offset optional, UTC when absent, up to nine fractional digits cut to the
 * microsecond), or a number since the Unix epoch whose unit follows its magnitude: below 1e11
 * seconds (a fraction allowed), below 1e14 milliseconds, below 1e17 microseconds, otherwise
 * nanoseconds. A numeric string counts as the number. This is the rule the SQL macro
 * `le_timestamp` applies (src/engine/duckdb/source-relations.ts); both round the same way.
 *
 * @example
 * eventTimestampMicros(1795256102.5);              // 1795256102500000n (seconds)
 * eventTimestampMicros('1795256102123');           // 1795256102123000n (milliseconds)
 * eventTimestampMicros('2026-11-21T10:15:02.123456Z');
 */
export function eventTimestampMicros(value: unknown): Micros | null {
  if (typeof value === 'bigint') return byMagnitude(value * ONE);
  if (typeof value === 'number') {
    const number = Number.isFinite(value) ? scaled(String(value)) : null;
    return number === null ? null : byMagnitude(number);
  }
  if (typeof value !== 'string') return null;
  const number = scaled(value);
  return number === null ? parseIsoMicros(value) : byMagnitude(number);
}

/** A decimal text as an integer scaled by 10^9 (rounded half away from zero, as DuckDB's cast), or null. */
function scaled(text: string): bigint | null {
  const m = NUMBER.exec(text);
  if (!m) return null;
  const [, sign = '', whole = '', fraction = '', exponent = '0'] = m;
  if (whole === '' && fraction === '') return null;
  const digits = BigInt(whole + fraction);
  // value = digits * 10^(exponent - fraction.length); scaled, the power grows by SCALE.
  const power = Number(exponent) - fraction.length + SCALE;
  let magnitude: bigint;
  if (power > 40) magnitude = 10n ** 40n; // far past any instant: byMagnitude refuses it
  else if (power >= 0) magnitude = digits * 10n ** BigInt(power);
  else {
    const divisor = 10n ** BigInt(-power);
    magnitude = digits / divisor + (2n * (digits % divisor) >= divisor ? 1n : 0n);
  }
  return sign === '-' ? -magnitude : magnitude;
}

/** Microseconds of a number scaled by 10^9, by the magnitude rule; floor, as DuckDB's `floor`. */
function byMagnitude(n: bigint): Micros | null {
  const abs = n < 0n ? -n : n;
  let micros: bigint;
  if (abs < SECONDS_BELOW * ONE) micros = floorDiv(n * 1_000_000n, ONE);
  else if (abs < MILLIS_BELOW * ONE) micros = floorDiv(n * 1_000n, ONE);
  else if (abs < MICROS_BELOW * ONE) micros = floorDiv(n, ONE);
  else micros = floorDiv(n, ONE * 1_000n);
  // DuckDB's TIMESTAMP range (years 290309 BC to 294247 AD); outside it there is no instant.
  return micros > 9_223_372_036_854_775_806n || micros < -9_223_372_022_400_000_000n ? null : micros;
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && (a < 0n) !== (b < 0n) ? q - 1n : q;
}
