import fc from 'fast-check';
import { LIST, listValue, VARCHAR, type DuckDBConnection } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../src/duckdb/open-database';
import { intervalSeconds } from '../src/definitions/intervals';
import { eventTimestampMicros } from '../src/time/event-timestamp';
import { formatIsoMicros, parseIsoMicros } from '../src/time/iso';
import { addUnits, spanSeconds, subtractSpan, truncate, UNIT_MICROS, unitMs, unitSeconds } from '../src/time/units';

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

  it('formats the same on both sides of the exact-double range (a fast path below 2^53, BigInt above)', () => {
    // The plain BigInt arithmetic, written out: what every instant must format as.
    const reference = (m: bigint) => {
      const ms = m / 1000n - (m % 1000n < 0n ? 1n : 0n);
      return `${new Date(Number(ms)).toISOString().slice(0, 23)}${(m - ms * 1000n).toString().padStart(3, '0')}Z`;
    };
    const edge = BigInt(Number.MAX_SAFE_INTEGER);
    for (const m of [edge, edge - 1n, edge + 1n, edge + 999n, -edge, -edge - 1n, -edge + 1n, 1n, -1000n, -1001n, 999n, 8_640_000_000_000_000_000n]) {
      expect(formatIsoMicros(m), String(m)).toBe(reference(m));
    }
    expect(formatIsoMicros(edge)).toBe('2255-06-05T23:47:34.740991Z');
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
  it('has one table of unit lengths, as the calendar arithmetic counts them; milliseconds, seconds and spans derived from it', () => {
    for (const unit of ['second', 'minute', 'hour', 'day'] as const) {
      const length = addUnits(t, unit, 1).getTime() - t.getTime();
      expect([unit, unitMs(unit), UNIT_MICROS[unit]]).toEqual([unit, length, length * 1000]);
    }
    expect(UNIT_MICROS.week).toBe(7 * unitMs('day') * 1000);
    expect([UNIT_MICROS.millisecond, UNIT_MICROS.microsecond, unitSeconds('hour'), unitSeconds('day')]).toEqual([1000, 1, 3600, 86_400]);
    for (const span of [{ minutes: 15 }, { hours: 3 }, { days: 7 }]) expect(spanSeconds(span) * 1000).toBe(t.getTime() - subtractSpan(t, span).getTime());
    // What descriptions (and so the dashboard) carry for an interval parameter's values.
    expect([intervalSeconds('15min'), intervalSeconds('1day'), intervalSeconds('7day')]).toEqual([
      { span: 900, bucket: 60 },
      { span: 86_400, bucket: 3600 },
      { span: 604_800, bucket: 86_400 },
    ]);
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
      const samples = fc.sample(
        fc.oneof(numberText, fc.constantFrom('1795256102', '1795256102.5', '1795256102123', '1795256102123456', '1795256102123456789', '1e11', '99999999999.9999999999', '-1.5', '0', '1e17')),
        { numRuns: 400, seed: 7 },
      );
      const reader = await connection.runAndReadAll(`SELECT s, epoch_us(le_timestamp(s)) AS micros FROM unnest(${`[${samples.map((s) => `'${s}'`).join(', ')}]`}) AS t(s)`);
      for (const row of reader.getRowObjects()) {
        const sql = row.micros === null ? null : BigInt(row.micros as bigint);
        expect(eventTimestampMicros(String(row.s)), String(row.s)).toBe(sql);
      }
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });

  it('on every text form: each one is read by both, at the same instant, or by neither', async () => {
    const { instance, connection } = await openDatabase();
    try {
      // Forms a logger or a hand may write, valid and not: what DuckDB's cast alone gets wrong both ways.
      const corpus = [
        '2026-11-23T10:00:00,5Z',
        '2026-11-23T10:00Z',
        '2026-11-23T10:00:00z',
        '2026-11-23T10:00',
        '2026-11-23 10:00+01:30',
        '2026-11-23Z',
        '2026-11-23-0130',
        '2026-11-23T10:00:00.123456789z',
        '2026-11-23T10:00:00,123456789+01',
        '2026-11-23T10:00:00+24:00',
        '2026-11-23T10:00:00.1234567891Z',
        '2026-11-23T10:00:00.Z',
        '2026-11-23T24:00:00Z',
        '2026-11-23T10:00:00 UTC',
        '0000-01-01T00:00:00Z',
        '0001-01-01T00:00:00+01:00',
        '9999-12-31T23:59:59-01:00',
        '9999-12-31T23:59:59.999999Z',
        '10000-01-01T00:00:00Z',
        '2026-1-23T10:00:00Z',
        '2026-11-23T1:00:00Z',
        '2026-11-23T10:00:00+01:30:00',
        '2026-11-23T10:00:00 America/New_York',
        '2026-11-23  10:00:00',
        '2026-11-23 (BC)',
        '2026-11-23T10:00:0',
        '2026-02-29T10:00:00Z',
        '2024-02-29T10:00:00Z',
        '1900-02-29',
        '2000-02-29',
        '2026-04-31',
        '0x10',
        '1_000',
        'epoch',
        'infinity',
        '1e-99999999999999999999',
        '1e99999999999999999999',
        '-0',
        '5.',
        '.5',
        '.',
        'e5',
        '\u00a02026-11-23T10:00:00Z\u3000',
        '\ufeff1795428000',
        ' \t2026-11-23\n',
        '\u200b2026-11-23',
        '2026-11-23T10:00:00\u00a0Z',
        `1${'0'.repeat(400)}`,
        `0.${'0'.repeat(400)}1`,
        `-1${'0'.repeat(16)}.5e-3`,
        '99999999999999999999999999999999',
        '2026-11-23T10:00:00.5 Z',
        '2026-11-23T10:00:00.12345Z ',
        '2026-1a-23T10:00:00Z',
        '2026-11-23T10:00:0aZ',
        '2026-11-23T10:00:00.1a2Z',
        '2026-11-23T10:00:00+0Z',
        '2026-11-23T10:00:00.+01Z',
        '0000-12-31T23:59:59.999999Z',
        '+795428000',
        '0795428000',
        '-0',
        '00',
      ];
      const pick = <T>(...options: T[]) => fc.constantFrom(...options);
      const isoLike = fc
        .tuple(
          pick('2026', '0000', '0001', '1969', '9999', '1900', '2000', '12026', '226'),
          pick('-11-23', '-02-29', '-02-28', '-04-31', '-13-01', '-00-10', '-1-05', '/11/23', '-11-32'),
          fc.option(
            fc.tuple(
              pick('T', ' ', 't', '  '),
              pick('10', '00', '23', '24', '9', '1'),
              pick(':00', ':59', ':60', ':5', ''),
              fc.option(fc.tuple(pick(':00', ':59', ':60', ':7'), fc.option(fc.tuple(pick('.', ','), fc.stringMatching(/^[0-9]{0,11}$/))))),
            ),
          ),
          pick('', 'Z', 'z', '+01', '-0130', '+01:30', '+23:59', '+24:00', '-00:00', '+1', ' Z', 'UTC', ' UTC', '+01:30:00', 'Zz'),
          pick('', ' ', '\t', '\n', '\u00a0', '\u3000', '\ufeff', '\u200b'),
        )
        .map(([y, md, time, offset, space]) => {
          const clock = time === null ? '' : `${time[0]}${time[1]}${time[2]}${time[3] === null ? '' : `${time[3][0]}${time[3][1] === null ? '' : `${time[3][1][0]}${time[3][1][1]}`}`}`;
          return `${space}${y}${md}${clock}${offset}${space}`;
        });
      const numberLike = fc
        .tuple(
          pick('', '-', '+', ' ', '\u00a0'),
          fc.stringMatching(/^[0-9]{0,22}$/),
          fc.option(fc.stringMatching(/^[0-9]{0,12}$/)),
          fc.option(fc.integer({ min: -30, max: 30 })),
          pick('', 'x', '_1', ' '),
        )
        .map(([sign, whole, fraction, exponent, tail]) => `${sign}${whole}${fraction === null ? '' : `.${fraction}`}${exponent === null ? '' : `e${exponent}`}${tail}`);
      // The form loggers write nearly always, which the SQL tells by its fixed places, with a few
      // characters changed, dropped or added anywhere.
      const nearCanonical = fc
        .tuple(
          fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }),
          fc.array(fc.tuple(fc.nat(30), fc.constantFrom('0', '9', '2', '4', '-', ':', '.', 'T', ' ', '\t', 'Z', 'z', 'a', '+', ',', ''), fc.boolean()), { minLength: 1, maxLength: 3 }),
        )
        .map(([date, edits]) => {
          let text = `${date.toISOString().slice(0, 19)}.${String(date.getUTCMilliseconds()).padStart(3, '0')}456Z`;
          for (const [at, char, insert] of edits) {
            const i = at % (text.length + 1);
            text = `${text.slice(0, i)}${char}${text.slice(insert ? i : i + 1)}`;
          }
          return text;
        });
      const samples = [...corpus, ...fc.sample(fc.oneof(isoLike, numberLike, nearCanonical, fc.string({ maxLength: 30 })), { numRuns: 4000, seed: 18 })];
      const sql = await readWithSql(connection, samples);
      const disagreements = samples.flatMap((s, i) => (eventTimestampMicros(s) === sql[i] ? [] : [`${JSON.stringify(s)}: TypeScript ${eventTimestampMicros(s)}, SQL ${sql[i]}`]));
      expect(disagreements).toEqual([]);
      // The forms the issue found acknowledged but never read are read now, at their instant.
      expect(sql.slice(0, 3)).toEqual([1795428000500000n, 1795428000000000n, 1795428000000000n]);
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });
});

/** `le_timestamp` of each text, as bound values (never pasted into the SQL). */
async function readWithSql(connection: DuckDBConnection, texts: string[]): Promise<Array<bigint | null>> {
  const prepared = await connection.prepare('SELECT epoch_us(le_timestamp(s)) AS micros FROM unnest($texts) WITH ORDINALITY AS t(s, n) ORDER BY n');
  prepared.bind({ texts: listValue(texts) }, { texts: LIST(VARCHAR) });
  const rows = (await prepared.runAndReadAll()).getRows();
  return rows.map(([micros]) => (micros === null ? null : BigInt(micros as bigint)));
}
