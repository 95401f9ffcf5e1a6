import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../src/engine/duckdb/open-database';
import { eventTimestampMicros } from '../src/time/event-timestamp';
import { formatIsoMicros, parseIsoMicros } from '../src/time/iso';
import { addUnits, subtractSpan, truncate } from '../src/time/units';

const us = (iso: string) => BigInt(Date.parse(iso)) * 1000n;

describe('ISO 8601 parsing (microseconds)', () => {
  it('reads Z, numeric offsets and no offset (UTC)', () => {
    expect(parseIsoMicros('2026-11-21T10:15:02Z')).toBe(us('2026-11-21T10:15:02Z'));
    expect(parseIsoMicros('2026-11-21T10:15:02')).toBe(us('2026-11-21T10:15:02Z'));
    expect(parseIsoMicros('2026-11-21T12:15:02+02:00')).toBe(us('2026-11-21T10:15:02Z'));
    expect(parseIsoMicros('2026-11-21T08:45:02-0130')).toBe(us('2026-11-21T10:15:02Z'));
    expect(parseIsoMicros('2026-11-21T12:15:02+02')).toBe(us('2026-11-21T10:15:02Z'));
    expect(parseIsoMicros('2026-11-21 10:15:02Z')).toBe(us('2026-11-21T10:15:02Z'));
    expect(parseIsoMicros('2026-11-21')).toBe(us('2026-11-21T00:00:00Z'));
  });

  it('keeps microseconds and truncates nanoseconds', () => {
    expect(parseIsoMicros('2026-11-21T10:15:02.123456Z')).toBe(us('2026-11-21T10:15:02Z') + 123456n);
    expect(parseIsoMicros('2026-11-21T10:15:02.123456789Z')).toBe(us('2026-11-21T10:15:02Z') + 123456n);
    expect(parseIsoMicros('2026-11-21T10:15:02.5Z')).toBe(us('2026-11-21T10:15:02Z') + 500000n);
  });

  it('reads years before 100 as they are written', () => {
    expect(formatIsoMicros(parseIsoMicros('0050-01-01T00:00:00Z')!)).toBe('0050-01-01T00:00:00.000000Z');
    expect(parseIsoMicros('2024-02-29T00:00:00Z')).toBe(us('2024-02-29T00:00:00Z'));
    expect(parseIsoMicros('2100-02-29T00:00:00Z')).toBeNull();
  });

  it('refuses what is not a timestamp', () => {
    for (const bad of ['', 'yesterday', '2026-13-01', '2026-02-30T00:00:00Z', '2026-11-21T24:00:00Z', '2026-11-21T10:15:02+25:00', '1795256102123456', '2026-11-21T10:15:02Zjunk']) {
      expect(parseIsoMicros(bad), bad).toBeNull();
    }
  });

  it('formats with exactly six fractional digits and Z, before 1970 too', () => {
    expect(formatIsoMicros(us('2026-11-21T10:00:00Z'))).toBe('2026-11-21T10:00:00.000000Z');
    expect(formatIsoMicros(us('2026-11-21T10:15:02Z') + 123456n)).toBe('2026-11-21T10:15:02.123456Z');
    expect(formatIsoMicros(-1n)).toBe('1969-12-31T23:59:59.999999Z');
  });
});

describe('UTC window arithmetic', () => {
  const t = new Date('2026-11-21T10:15:02.123Z');
  it('truncates to each unit', () => {
    expect(truncate(t, 'second').toISOString()).toBe('2026-11-21T10:15:02.000Z');
    expect(truncate(t, 'minute').toISOString()).toBe('2026-11-21T10:15:00.000Z');
    expect(truncate(t, 'hour').toISOString()).toBe('2026-11-21T10:00:00.000Z');
    expect(truncate(t, 'day').toISOString()).toBe('2026-11-21T00:00:00.000Z');
  });
  it('subtracts spans and adds units in UTC', () => {
    expect(subtractSpan(t, { days: 7 }).toISOString()).toBe('2026-11-14T10:15:02.123Z');
    expect(subtractSpan(t, { minutes: 5 }).toISOString()).toBe('2026-11-21T10:10:02.123Z');
    expect(addUnits(new Date('2026-11-21T23:00:00Z'), 'hour', 1).toISOString()).toBe('2026-11-22T00:00:00.000Z');
  });
});

describe('timestamps by magnitude: the TypeScript rule and the SQL macro agree', () => {
  it('on every number form (property test against DuckDB)', async () => {
    const { instance, connection } = await openDatabase();
    try {
      const numberText = fc
        .record({
          sign: fc.constantFrom('', '-', '+'),
          whole: fc.stringMatching(/^[0-9]{0,19}$/),
          fraction: fc.option(fc.stringMatching(/^[0-9]{0,12}$/)),
          // Positive exponents only: DuckDB rounds a value below a nanosecond written with a negative
          // exponent away from zero (1e-12 becomes 1e-9), which no timestamp ever is.
          exponent: fc.option(fc.integer({ min: 0, max: 12 })),
        })
        .filter((r) => r.whole !== '' || (r.fraction ?? '') !== '')
        .map((r) => `${r.sign}${r.whole}${r.fraction === null ? '' : `.${r.fraction}`}${r.exponent === null ? '' : `e${r.exponent}`}`);
      const samples = fc.sample(fc.oneof(numberText, fc.constantFrom('1795256102', '1795256102.5', '1795256102123', '1795256102123456', '1795256102123456789', '1e11', '99999999999.9999999999', '-1.5', '0', '1e17')), { numRuns: 400, seed: 7 });
      const reader = await connection.runAndReadAll(
        `SELECT s, epoch_us(le_timestamp(s)) AS micros FROM unnest(${`[${samples.map((s) => `'${s}'`).join(', ')}]`}) AS t(s)`,
      );
      for (const row of reader.getRowObjects()) {
        const sql = row.micros === null ? null : BigInt(row.micros as bigint);
        expect(eventTimestampMicros(String(row.s)), String(row.s)).toBe(sql);
      }
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });
});
