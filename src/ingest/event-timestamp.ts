import { parseIsoMicros, type Micros } from '../time/iso';

/** 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999Z in microseconds: what ISO 8601 can write. */
const MIN = -62_135_596_800_000_000n;
const MAX = 253_402_300_799_999_999n;
const NUMERIC = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/**
 * The instant of an event's `timestamp` in any form of contract §1.3, or null when it has none:
 * an ISO 8601 string (offset optional, UTC when absent) or a number since the epoch whose unit
 * follows its magnitude (`|n| < 1e11` seconds, `< 1e14` milliseconds, `< 1e17` microseconds,
 * otherwise nanoseconds); a numeric string counts as the number. Instants outside years
 * 1 to 9999 are refused too.
 */
export function timestampMicros(value: unknown): Micros | null {
  let micros: Micros | null = null;
  if (typeof value === 'number') micros = numberMicros(value);
  else if (typeof value === 'string') {
    const text = value.trim();
    micros = NUMERIC.test(text) ? numberMicros(Number(text)) : parseIsoMicros(text);
  }
  return micros !== null && micros >= MIN && micros <= MAX ? micros : null;
}

function numberMicros(n: number): Micros | null {
  if (!Number.isFinite(n)) return null;
  const size = Math.abs(n);
  const micros = size < 1e11 ? n * 1e6 : size < 1e14 ? n * 1e3 : size < 1e17 ? n : n / 1e3;
  return BigInt(Math.round(micros));
}
