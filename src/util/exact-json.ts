import { isInteger, isSafeNumber, parse, stringify } from 'lossless-json';

/**
 * JSON whose integers past 2^53 are kept as sent (docs/ingest.md, "Requests"): `JSON.parse` rounds
 * them (9007199254740993 becomes ...992) and Node 20's reviver cannot see the digits, so a text
 * that may hold one (16 digits or more after a `:`, `[` or `,`) is parsed by `lossless-json`, which
 * gives those integers as `bigint`; every other text by `JSON.parse`, the fast path ingest and
 * answers take (the library parses about 6 times slower; digits inside strings rarely follow those).
 */
const LONG_NUMBER = /[:[,]\s*-?\d{16}/;

/** Unsafe integers as bigint, every other number as JSON.parse reads it. */
const numberOf = (text: string): number | bigint => (isInteger(text) && !isSafeNumber(text) ? BigInt(text) : parseFloat(text));

/**
 * `JSON.parse`, except that integers past 2^53 come back as `bigint`. Throws `SyntaxError` as
 * JSON.parse does (with the library's message when the text has a long digit run).
 *
 * @example
 * parseExactJson('{"n":9007199254740993}'); // { n: 9007199254740993n }
 */
export function parseExactJson(text: string): unknown {
  if (!LONG_NUMBER.test(text)) return JSON.parse(text);
  return parse(text, null, numberOf);
}

/**
 * `JSON.stringify`, except that a `bigint` is written as its digits (JSON.stringify throws on it).
 * The fast path runs first; the library only for a value that holds a bigint.
 *
 * @example
 * stringifyExactJson({ n: 9007199254740993n }); // '{"n":9007199254740993}'
 */
export function stringifyExactJson(value: unknown, indent?: number): string {
  try {
    return JSON.stringify(value, null, indent);
  } catch (error) {
    if (!isBigIntError(error)) throw error;
    return stringifyLosslessJson(value, indent);
  }
}

/** The library's stringify alone (a bigint as its digits): for values known to hold one. */
export function stringifyLosslessJson(value: unknown, indent?: number): string {
  return stringify(value, null, indent) as string;
}

/** The error JSON.stringify throws for a bigint. */
export function isBigIntError(error: unknown): boolean {
  return error instanceof TypeError && /BigInt/i.test(error.message);
}
