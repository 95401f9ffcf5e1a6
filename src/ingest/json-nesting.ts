/**
 * How deep ingest lets JSON nest: a body (HTTP) or an event (`ep.ingest`) nested deeper is refused
 * with `invalid_body` before it is parsed, so no request can make the parser recurse millions of
 * levels (6 million nested `[` fit in 12 KB of gzip) while every other request waits.
 */
export const MAX_NESTING = 128;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;
const COMMA = 0x2c;

/**
 * Follows the nesting of JSON bytes as they arrive (UTF-8: no byte of a multi-byte character is
 * a bracket or a quote), brackets inside strings left out, and counts their values (`values`). `feed` returns the offset, within the
 * bytes fed so far, of the first bracket past the limit, or -1. One pass, no parsing: a 12 MiB
 * body costs about 40 ms, in the chunks it arrives in.
 *
 * @example
 * const nesting = new NestingScan(MAX_NESTING);
 * for (const chunk of chunks) if (nesting.feed(chunk) >= 0) throw new Error('too deep');
 */
export class NestingScan {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private seen = 0;
  /** Commas outside strings so far: one per value after the first of an array or object, what a parse's memory grows with. */
  values = 0;

  constructor(private readonly max: number = MAX_NESTING) {}

  feed(bytes: Uint8Array): number {
    let { depth, inString, escaped, values } = this;
    const max = this.max;
    let found = -1;
    for (let i = 0; i < bytes.length; i++) {
      if (inString) {
        // Strings are most of an event's bytes: jump to the quote that ends this one (indexOf is
        // native; a byte loop over them was 9% of the ingest's main thread).
        const end = closingQuote(bytes, i, escaped);
        escaped = end.escaped;
        if (end.at < 0) break;
        inString = false;
        i = end.at;
        continue;
      }
      const b = bytes[i]!;
      if (b === QUOTE) inString = true;
      else if (b === COMMA) values++;
      else if (b === OPEN_ARRAY || b === OPEN_OBJECT) {
        if (++depth > max) {
          found = this.seen + i;
          break;
        }
      } else if ((b === CLOSE_ARRAY || b === CLOSE_OBJECT) && depth > 0) depth--;
    }
    Object.assign(this, { depth, inString, escaped, values });
    this.seen += bytes.length;
    return found;
  }
}

/**
 * Inside a string from `from` on (`escaped`: the byte at `from` follows a backslash of an earlier
 * chunk): the offset of the quote that ends it, or -1 with whether the chunk ends in the middle
 * of an escape. A quote is escaped when an odd number of backslashes precedes it.
 */
function closingQuote(bytes: Uint8Array, from: number, escaped: boolean): { at: number; escaped: boolean } {
  let start = from;
  let carried = escaped;
  for (;;) {
    const quote = bytes.indexOf(QUOTE, start);
    const end = quote < 0 ? bytes.length : quote;
    let run = 0;
    while (end - run > start && bytes[end - run - 1] === BACKSLASH) run++;
    // The backslash that ended the previous chunk counts when the run reaches back to it.
    if (end - run === start && carried) run++;
    if (quote < 0) return { at: -1, escaped: run % 2 === 1 };
    if (run % 2 === 0) return { at: quote, escaped: false };
    start = quote + 1;
    carried = false;
  }
}

/**
 * The offset of the first bracket of `bytes` nested past `max` levels, or -1. For lines of
 * complete JSON values, so the depth of each line starts at 0.
 */
export function tooDeepAt(bytes: Uint8Array, max: number = MAX_NESTING): number {
  return new NestingScan(max).feed(bytes);
}
