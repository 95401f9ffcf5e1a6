/** A container being read: an array, or an object and the key whose value comes next. */
interface Frame {
  array: boolean;
  key: string | null;
}

/** The digits in a row from which a text may hold a big timestamp or an integer past 2^53. */
const LONG_RUN = 16;

/**
 * Whether a text holds 16 digits in a row: without them there is no big timestamp to quote and no
 * integer past 2^53 (`parseExactJson`'s slow path), so `JSON.parse` reads it as sent.
 *
 * Every run of 16 digits covers one offset that is a multiple of 16, so only those offsets are
 * looked at, and the run is measured around one only when it is a digit: a sixteenth of the text
 * read instead of all of it (`/\d{16}/` tried a match at every offset: 0.9 µs an event of the
 * nine feeds, now about a tenth of that; docs/performance.md, "Footprint").
 *
 * @example
 * hasLongDigitRun('{"timestamp":1795256102123456789}'); // true
 */
export function hasLongDigitRun(text: string): boolean {
  for (let at = LONG_RUN - 1; at < text.length; at += LONG_RUN) {
    if (!isDigit(text.charCodeAt(at))) continue;
    let start = at;
    while (start > 0 && isDigit(text.charCodeAt(start - 1))) start--;
    let end = at + 1;
    while (end < text.length && end - start < LONG_RUN && isDigit(text.charCodeAt(end))) end++;
    if (end - start >= LONG_RUN) return true;
    // The next offset looked at is past this run's end, which is not a digit (or the text's end).
  }
  return false;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/**
 * The body text with each event's own `timestamp` written as a JSON integer of 16 digits or more
 * (nanoseconds since the epoch) turned into a string of the same digits: as a JavaScript number
 * it would lose its last digits, and with them the microsecond, while a numeric string counts the
 * same (docs/semantics.md, "Timestamps"). Only an event's top-level field is touched: the events are the body's
 * object, each element of its array, each element of its `"batch"` array, or each NDJSON line;
 * a `"timestamp"` deeper inside an event is kept exactly as sent.
 *
 * @example
 * quoteBigTimestamps('{"batch":[{"timestamp":1795256102123456789,"metadata":{"timestamp":1795256102123456789}}]}');
 * // '{"batch":[{"timestamp":"1795256102123456789","metadata":{"timestamp":1795256102123456789}}]}'
 */
export function quoteBigTimestamps(text: string): string {
  if (!hasLongDigitRun(text)) return text;
  const stack: Frame[] = [];
  // In an object, whether the next string is a key.
  let expectKey = false;
  const quoted: Array<[start: number, end: number]> = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const end = stringEnd(text, i);
      const top = stack.at(-1);
      if (top && !top.array && expectKey) {
        top.key = keyText(text.slice(i, end + 1));
        expectKey = false;
      }
      i = end;
    } else if (c === 0x7b) {
      stack.push({ array: false, key: null });
      expectKey = true;
    } else if (c === 0x5b) {
      stack.push({ array: true, key: null });
    } else if (c === 0x7d || c === 0x5d) {
      stack.pop();
      expectKey = false;
    } else if (c === 0x2c) {
      const top = stack.at(-1);
      expectKey = top !== undefined && !top.array;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      let end = i + 1;
      while (end < text.length && isNumberChar(text.charCodeAt(end))) end++;
      const top = stack.at(-1);
      if (top?.key === 'timestamp' && /^-?\d{16,}$/.test(text.slice(i, end)) && isEventLevel(stack)) quoted.push([i, end]);
      i = end - 1;
    }
  }
  if (!quoted.length) return text;
  let out = '';
  let from = 0;
  for (const [start, end] of quoted) {
    out += `${text.slice(from, start)}"${text.slice(start, end)}"`;
    from = end;
  }
  return out + text.slice(from);
}

/** The objects whose fields are an event's: the body's own, its array's elements, its batch's elements. */
function isEventLevel(stack: readonly Frame[]): boolean {
  if (stack.length === 1) return !stack[0]!.array;
  if (stack.length === 2) return stack[0]!.array && !stack[1]!.array;
  return stack.length === 3 && !stack[0]!.array && stack[0]!.key === 'batch' && stack[1]!.array && !stack[2]!.array;
}

/** Index of the quote that closes the string opening at `start` (the text's end when there is none). */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c) i++;
    else if (c === 0x22) return i;
  }
  return text.length;
}

/** A key as JSON.parse reads it (escapes decoded); null when it is not a valid string. */
function keyText(token: string): string | null {
  if (!token.includes('\\')) return token.slice(1, -1);
  try {
    return JSON.parse(token) as string;
  } catch {
    return null;
  }
}

function isNumberChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x2d || c === 0x2b || c === 0x65 || c === 0x45;
}
