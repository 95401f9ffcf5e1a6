/**
 * The ingest path's checks written for speed (docs/performance.md, "Footprint") answer exactly
 * what the plain forms they replaced answered: each is compared, over generated and edge-case
 * inputs, with that form kept here as the oracle.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Prng } from '../src/fixtures/prng';
import { hasLongDigitRun } from '../src/ingest/big-timestamps';
import { bodyDigest, bodyKey, derivedId } from '../src/ingest/body-digest';
import { bodyLines } from '../src/ingest/body-lines';
import { MAX_NESTING, NestingScan } from '../src/ingest/json-nesting';
import { InvalidBodyError } from '../src/errors';
import { feedBodies } from '../bench/parse';
import { eventTimestampMicros } from '../src/time/event-timestamp';
import { parseIsoMicros } from '../src/time/iso';

/** The pattern `hasLongDigitRun` replaced. */
const oracleLongRun = (text: string) => /\d{16}/.test(text);

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

/** `parseIsoMicros` as it was, through `Date`. */
function oracleIso(text: string): bigint | null {
  const m = ISO.exec(text.trim());
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', offset] = m;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number) as [number, number, number, number, number, number];
  const days = month === 2 ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
  if (month < 1 || month > 12 || day < 1 || day > days) return null;
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
  const date = new Date(Date.UTC(2000, month - 1, day, hour, minute, second));
  date.setUTCFullYear(year);
  const ms = date.getTime() - offsetMinutes * 60_000;
  return BigInt(ms) * 1000n + BigInt((frac + '000000').slice(0, 6));
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');

describe('16 digits in a row, looked for at every 16th offset', () => {
  it('answers as /\\d{16}/ on runs of every length at every offset, and on generated text', () => {
    const texts: string[] = ['', '1', '1'.repeat(15), '1'.repeat(16), '١'.repeat(20)];
    for (let length = 14; length <= 34; length++) {
      for (let at = 0; at < 40; at++) {
        const run = '7'.repeat(length);
        texts.push(`${'x'.repeat(at)}${run}${'y'.repeat(at % 7)}`, `${'1'.repeat(at % 16)}a${run}b${'2'.repeat(15)}`);
      }
    }
    const prng = new Prng(16);
    const alphabet = '0123456789012345678901234567890123456789"{}:, -.eE\\u';
    for (let i = 0; i < 20_000; i++) texts.push(Array.from({ length: prng.int(80) }, () => alphabet[prng.int(alphabet.length)]).join(''));
    const answers = texts.map((text) => [text, hasLongDigitRun(text)]);
    expect(answers).toEqual(texts.map((text) => [text, oracleLongRun(text)]));
    expect(answers.some(([, long]) => long)).toBe(true);
    expect(answers.some(([, long]) => !long)).toBe(true);
  });
});

describe('ISO 8601 timestamps without Date', () => {
  it('read the same instant as through Date, over years 0 to 9999, leap days, offsets and fractions', () => {
    const prng = new Prng(8601);
    const texts: string[] = [
      '0000-01-01T00:00:00Z',
      '0000-02-29T23:59:59.999999999Z',
      '0001-01-01T00:00:00Z',
      '1969-12-31T23:59:59.999999Z',
      '1970-01-01',
      '1900-02-29',
      '2000-02-29T12:00',
      '2100-02-29',
      '9999-12-31T23:59:59.999999999-23:59',
      '9999-12-31T23:59:59.999999+14:00',
      ' 2026-11-21 10:15:02,5z ',
      '2026-11-21T10:15:02.1+0530',
      '2026-11-21T10:15:02.123456789+05',
      '2026-13-01',
      '2026-04-31',
      '2026-11-21T24:00:00Z',
      '2026-11-21T10:60:00Z',
      '2026-11-21T10:15:60Z',
      '2026-11-21T10:15:02+24:00',
      '2026-11-21T10:15:02+05:60',
      '2026-11-21T10:15:02.1234567890Z',
      '1795256102123',
      '2026-11-21T10:15:02.Z',
      '2026-11-21T10:15:02.',
      '2026-11-21T10:15:02,123456789z',
      '2026-11-21 10:15:02.1234567',
      '2026-11-21T10:15:02ZZ',
      '2026-11-21T10:15:02 ',
      '2026-11-21T10:15',
      '2026-11-21T1:15:02Z',
      '2026-1a-21T10:15:02Z',
      '2026-11-21X10:15:02Z',
      '2026-11-21T10:15:02.12a',
      '\u00a02026-11-21T10:15:02Z',
    ];
    for (let i = 0; i < 20_000; i++) {
      const year = prng.chance(0.5) ? 1600 + prng.int(800) : prng.int(10_000);
      const month = 1 + prng.int(prng.chance(0.05) ? 13 : 12);
      const day = 1 + prng.int(prng.chance(0.1) ? 31 : 29);
      const time = prng.chance(0.1) ? '' : `T${pad(prng.int(24), 2)}:${pad(prng.int(60), 2)}${prng.chance(0.1) ? '' : `:${pad(prng.int(60), 2)}`}`;
      const fraction = time.length > 6 && prng.chance(0.7) ? `.${pad(prng.int(1_000_000_000), 9).slice(0, 1 + prng.int(9))}` : '';
      const offset = prng.pick(['', 'Z', 'z', `+${pad(prng.int(24), 2)}:${pad(prng.int(60), 2)}`, `-${pad(prng.int(24), 2)}${pad(prng.int(60), 2)}`, `-${pad(prng.int(24), 2)}`]);
      const text = `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}${time}${time.length > 6 ? fraction : ''}${time ? offset : ''}`;
      texts.push(prng.chance(0.1) ? text.replace('T', ' ').replace('.', ',') : text);
    }
    const answers = texts.map((text) => [text, parseIsoMicros(text)]);
    expect(answers).toEqual(texts.map((text) => [text, oracleIso(text)]));
    expect(answers.filter(([, micros]) => micros === null).length).toBeGreaterThan(100);
  });

  it('are checked as timestamps the same way when they start as a date, and numbers that look alike are still numbers', () => {
    expect(eventTimestampMicros('2026-11-21T10:15:02.123456789Z')).toBe(1795256102123456n);
    expect(eventTimestampMicros('0000-01-01T00:00:00Z')).toBeNull();
    // Four digits then a sign or an exponent's sign: a number's text, not a date.
    expect(eventTimestampMicros('    -5')).toBe(-5_000_000n);
    expect(eventTimestampMicros('123e-5')).toBe(1230n);
    expect(eventTimestampMicros('1234-')).toBeNull();
  });
});

describe('derived ids', () => {
  it('are the key and the position as a UUID, whichever key came before', () => {
    const prng = new Prng(9562);
    const keys = Array.from({ length: 5 }, (_, i) => bodyKey(`source${i}`, bodyDigest(Buffer.from(String(i)))));
    for (let i = 0; i < 2000; i++) {
      const key = keys[prng.int(keys.length)]!;
      const position = prng.chance(0.1) ? 0xffffff : prng.int(100_000);
      const hex = key + position.toString(16).padStart(6, '0');
      expect(derivedId(key, position)).toBe(`${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`);
    }
  });
});

describe('lines of a body whose nesting was bounded as it was read', () => {
  const ARRIVAL = '2026-11-21T12:00:00.000000Z';
  const nested = (depth: number) => `${'['.repeat(depth)}0${']'.repeat(depth)}`;

  it('are the same bytes as when they are scanned again, over the nine feeds and bodies up to the bound', () => {
    const bodies = feedBodies(50).map((b) => b.body);
    for (let depth = 1; depth <= MAX_NESTING; depth += 9) {
      bodies.push(Buffer.from(`[{"message":"a","timestamp":"2026-11-21T10:00:00Z","metadata":{"x":${nested(Math.max(0, depth - 3))}}},{"timestamp":1795256102123456789,"x":[1,[2,[3]]]}]`));
      bodies.push(Buffer.from(`{"batch":[{"message":"b","id":"b1","m":${nested(Math.max(0, depth - 4))}}]}`));
    }
    for (const body of bodies) {
      // What withIngestBody lets through.
      expect(new NestingScan(MAX_NESTING).feed(body)).toBe(-1);
      const checked = bodyLines(body, 'application/json', ARRIVAL, undefined, 'edgeLogs', true);
      const scanned = bodyLines(body, 'application/json', ARRIVAL, undefined, 'edgeLogs', false);
      expect(checked.lines.equals(scanned.lines)).toBe(true);
      expect(checked.events).toBe(scanned.events);
    }
  });

  it('are scanned when the body was not: an event nested past the bound is refused, naming it', () => {
    const body = Buffer.from(`[{"message":"ok"},{"message":"deep","metadata":${nested(MAX_NESTING)}}]`);
    let error: unknown = null;
    try {
      bodyLines(body, 'application/json', ARRIVAL);
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(InvalidBodyError);
    expect(error).toMatchObject({ index: 1, message: `Event 1 is nested more than ${MAX_NESTING} levels deep.` });
  });
});

/**
 * The stored lines of each case as the parse wrote them before it was made cheaper (SHA-256 of the
 * lines, its first 16 bytes, and the events): recorded from that build, so any byte the parse now
 * writes differently fails here. The nine feeds' bodies and the edge cases of what is kept as sent.
 */
const PINNED: ReadonlyArray<[name: string, events: number, sha256: string]> = [
  ['edge_logs', 50, '5516583d56b19a3ac20cf7e5f93b4625'],
  ['auth_logs', 50, 'eddb19097260755408e64edb8fb84a8e'],
  ['postgrest_logs', 50, '0c5a37417abeb8b9803b66ac1a908b9d'],
  ['realtime_logs', 50, '3a9f44ca18af97edd842e5f57d3b2504'],
  ['storage_logs', 50, 'b9ce51295727d3b02887d798c5bbb10b'],
  ['postgres_logs', 50, 'a91791353de94eaa60b590daf2b18f4d'],
  ['function_edge_logs', 50, 'ef11bb2aa7dca6dfc9679d2edcf950b0'],
  ['function_logs', 50, 'd09f1d3795326acc5993647f90e5017a'],
  ['pgbouncer_logs', 50, '359dbfb73d179d6c4070fa339afe6ab7'],
  ['key order', 1, 'c8eb1f488cebc870b56000daf1d522e3'],
  ['unicode escapes', 1, 'c98d099b67c69d039ebddd244104c4b6'],
  ['lone surrogates', 1, '84cd667a0997f430568e0dbee3086dc4'],
  ['big numbers', 1, '727ba6cafb1569e2198828c98f031864'],
  ['numeric timestamps', 4, 'e186356d1fa30f80dd51dc372d8aaff0'],
  ['duplicate keys', 1, 'd10e244bbe66c6798d959220e5c18479'],
  ['whitespace', 1, 'c167104cc9e3df249189c629d3b42f21'],
  ['proto', 1, '78836d6d7f23ceda0809b04052b1fb86'],
  ['batch', 2, 'e42bce07dc473a0296585ccdf5685d93'],
  ['one object', 1, 'a151df5974e979e0af4f48bc624d9d74'],
  ['ndjson', 2, '6a5e7276b560733a7d83d99f1e18bc24'],
  ['ndjson without type', 2, '85736ac6be5658f74a273c6551c6060c'],
  ['offsets and dates', 4, '32f172fb36c01b6a663937499146e497'],
  ['long digit runs elsewhere', 1, '83e68760a260c7b7fe058863b45215f4'],
  ['bom', 1, '8da930283e0b15b7eb271f351621a870'],
];

const T = '"timestamp":"2026-11-21T10:15:02.123456789Z"';
const EDGE_CASES: ReadonlyArray<[name: string, body: string, contentType?: string]> = [
  ['key order', `[{"zeta":1,${T},"alpha":2,"message":"m","id":"given","event_message":"dropped"}]`],
  ['unicode escapes', `[{${T},"message":"caf\\u00e9 \\u2028 \\/ \\"q\\" \\u0001","k\\u00e9y":"\\ud83d\\ude00 é 😀"}]`],
  ['lone surrogates', `[{${T},"message":"cut \\ud83d","\\udc00k":["\\udfff",{"x":"\\ud800"}]}]`],
  ['big numbers', `[{"timestamp":1795256102123456789,"n":9007199254740993,"m":{"timestamp":1795256102123456789},"f":1.0,"e":1e21,"s":-0,"d":0.1000}]`],
  ['numeric timestamps', `[{"timestamp":1795256102,"a":1},{"timestamp":"1795256102123","a":2},{"timestamp":1795256102.5,"a":3},{"timestamp":1795256102123456,"a":4}]`],
  ['duplicate keys', `[{${T},"a":1,"a":2,"b":{"c":1,"c":[3]},"message":"x","message":"y"}]`],
  ['whitespace', ` \n [ { ${T.replace(':', ' : ')} , "a" : [ 1 , 2 ] , "b" :\t{ } } ] \n`],
  ['proto', `[{${T},"__proto__":{"x":1},"constructor":"c"}]`],
  ['batch', `{"batch":[{${T},"message":"a"},{"id":"i2","message":null,"event_message":"b"}]}`],
  ['one object', `{${T},"event_message":"only","metadata":{"deep":[[[[1]]]]}}`],
  ['ndjson', `{${T},"message":"l1"}\r\n\n{"id":"l2","timestamp":"2026-11-21 10:15:02,5+05:30"}\n`, 'application/x-ndjson'],
  ['ndjson without type', `{${T},"message":"l1"}\n{"id":"l2","message":"l2"}`],
  ['offsets and dates', `[{"timestamp":"2026-11-21","a":1},{"timestamp":"2026-11-21T10:15:02-0800","a":2},{"timestamp":" 2026-11-21T10:15:02z ","a":3},{"timestamp":"0001-01-01T00:00:00Z","a":4}]`],
  ['long digit runs elsewhere', `[{${T},"a":"12345678901234567890","b":12345678901234567890,"c":[1234567890123456]}]`],
  ['bom', `\ufeff[{${T},"a":"bom"}]`],
];

describe('the stored lines', () => {
  it('are the bytes the parse wrote before, over the nine feeds and the edge cases (key order, escapes, big numbers, duplicate keys, whitespace)', () => {
    const cases = [
      ...feedBodies(50).map(({ name, body }) => ({ name, body, contentType: 'application/json' })),
      ...EDGE_CASES.map(([name, text, contentType]) => ({ name, body: Buffer.from(text), contentType: contentType ?? 'application/json' })),
    ];
    const written = cases.map(({ name, body, contentType }) => {
      const { lines, events } = bodyLines(body, contentType, '2026-11-21T12:00:00.000000Z', undefined, 'edgeLogs', true);
      return [name, events, createHash('sha256').update(lines).digest('hex').slice(0, 32)];
    });
    expect(written).toEqual(PINNED);
  });
});
