import { refuse } from './refuse';

/** A position of sqlparser-rs: line and column from 1, columns counted in code points. */
interface Location {
  line: number;
  column: number;
}

/**
 * The caller's text, to read a literal exactly as written (sqlparser-rs reads `'\s'` as `s`, where
 * BigQuery refuses it): positions in code points become string indices.
 *
 * @example
 * new SourceText("select 'a'").slice({ start: { line: 1, column: 8 }, end: { line: 1, column: 11 } }); // "'a'"
 */
export class SourceText {
  private readonly lines: string[];

  constructor(readonly text: string) {
    this.lines = text.split('\n');
  }

  slice(span: { start: Location; end: Location }): string {
    return this.text.slice(this.index(span.start), this.index(span.end));
  }

  private index({ line, column }: Location): number {
    let at = 0;
    for (let i = 0; i < line - 1; i++) at += this.lines[i]!.length + 1;
    const text = this.lines[line - 1] ?? '';
    let offset = 0;
    for (let c = 1; c < column && offset < text.length; c++) offset += text.codePointAt(offset)! > 0xffff ? 2 : 1;
    return at + offset;
  }
}

const SIMPLE_ESCAPES: Record<string, string> = {
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  '?': '?',
  '"': '"',
  "'": "'",
  '`': '`',
};

/**
 * The value of a BigQuery string literal as written (`'...'`, `"..."`, triple-quoted, `r'...'`):
 * BigQuery's escapes (`\n`, `\\`, `\'`, `\x41`, `\u00e9`, octal `\101`, ...), and a doubled quote
 * read as one quote as Logflare's parser reads it (Studio writes `''`). Any other escape is
 * refused, as BigQuery refuses it: `'\s'` is an error, `'\\s'` is the regular expression `\s`.
 *
 * @example
 * bigQueryString("'[0-9]\\\\s'"); // '[0-9]\\s'
 */
export function bigQueryString(raw: string): string {
  const raws = /^[rR]/.test(raw);
  const body = raws ? raw.slice(1) : raw;
  const quote = body.startsWith("'''") || body.startsWith('"""') ? body.slice(0, 3) : body[0];
  if ((quote !== "'" && quote !== '"' && quote !== "'''" && quote !== '"""') || !body.endsWith(quote) || body.length < quote.length * 2) {
    refuse('syntax', 'A string literal could not be read.');
  }
  const inner = body.slice(quote.length, body.length - quote.length);
  if (raws) return inner;
  let out = '';
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i]!;
    if (c === quote[0] && quote.length === 1 && inner[i + 1] === c) {
      out += c;
      i++;
    } else if (c !== '\\') {
      out += c;
    } else {
      const [value, length] = escape(inner, i + 1);
      out += value;
      i += length;
    }
  }
  return out;
}

/** The escape after a backslash at `at`: its value and how many characters it takes. */
function escape(text: string, at: number): [string, number] {
  const c = text[at];
  if (c !== undefined && c in SIMPLE_ESCAPES) return [SIMPLE_ESCAPES[c]!, 1];
  const forms: Array<[RegExp, number]> = [
    [/^[0-7]{3}/, 8],
    [/^[xX][0-9a-fA-F]{2}/, 16],
    [/^u[0-9a-fA-F]{4}/, 16],
    [/^U[0-9a-fA-F]{8}/, 16],
  ];
  for (const [pattern, base] of forms) {
    const m = pattern.exec(text.slice(at));
    if (!m) continue;
    const code = Number.parseInt(base === 8 ? m[0] : m[0].slice(1), base);
    if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) break;
    return [String.fromCodePoint(code), m[0].length];
  }
  const what = c === undefined ? 'a backslash at the end of a string' : `\\${/[\x21-\x7e]/.test(c) ? c : '?'}`;
  return refuse('syntax', `Illegal escape sequence in a string literal (${what}): BigQuery's escapes are \\n, \\t, \\\\, \\', \\", \\xhh, \\uhhhh, ...; write '\\\\s' for the regular expression \\s.`);
}
