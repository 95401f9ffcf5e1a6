import type { Expr } from './ir';

// The text of ClickHouse 18.16 that print-clickhouse.ts writes for strings, times and patterns:
// string literals safe from its placeholder binding, FORMAT_TIMESTAMP's formats, and RE2 patterns
// as BigQuery reads them.

/**
 * A string literal. A `{` starts a literal of its own: the engine binds `{name:Type}` placeholders
 * by their text (as external data on 18.x), so none may appear inside a caller's string.
 */
export const str = (text: string): string => {
  const literal = (t: string) => `'${t.replace(/[\\']/g, (c) => `\\${c}`)}'`;
  if (!text.includes('{')) return literal(text);
  return `concat(${text
    .split('{')
    .map((part, i) => (i === 0 ? literal(part) : `'{', ${literal(part)}`))
    .join(', ')})`;
};

/**
 * formatDateTime of a FORMAT_TIMESTAMP format, each `%M` (the minute) cut from `%T`: ClickHouse
 * 18.16 writes the minute for `%M`, current ClickHouse the month's name ("November"), and the
 * `%i` current ClickHouse has for the minute does not exist on 18.16.
 *
 * @example
 * formatTime('__f', '%H:%M'); // "concat(formatDateTime(__f, '%H:', 'UTC'), substring(formatDateTime(__f, '%T', 'UTC'), 4, 2))"
 */
export function formatTime(dateTime: string, format: string): string {
  const pieces: string[] = [];
  let text = '';
  const flush = () => {
    if (text !== '') pieces.push(`formatDateTime(${dateTime}, ${str(text)}, 'UTC')`);
    text = '';
  };
  for (let i = 0; i < format.length; i++) {
    if (format[i] === '%' && format[i + 1] === 'M') {
      flush();
      pieces.push(`substring(formatDateTime(${dateTime}, '%T', 'UTC'), 4, 2)`);
      i++;
    } else if (format[i] === '%') {
      text += format.slice(i, i + 2);
      i++;
    } else {
      text += format[i];
    }
  }
  flush();
  return pieces.length === 0 ? "''" : pieces.length === 1 ? pieces[0]! : `concat(${pieces.join(', ')})`;
}

/** An RE2 pattern where `.` does not match a newline, as in BigQuery (ClickHouse's does). */
export function regex(pattern: Expr, printed: string): string {
  return pattern.t === 'lit' ? str(`(?-s)${scopedFlags(String(pattern.value))}`) : `concat('(?-s)', ${printed})`;
}

/**
 * A pattern's flag groups `(?i)` made scoped groups `(?i:...)` to the end of the group they stand
 * in: the same RE2 meaning, but ClickHouse 18.16's match() first looks for a literal it thinks
 * required, case-sensitively, and takes `(?i)COnnecTion` to need `COnnecTion` (never found in
 * `connection`), while it skips a `(?` group's contents.
 *
 * @example
 * scopedFlags('a(?i)b(c(?s)d)e'); // 'a(?i:b(c(?s:d))e)'
 */
function scopedFlags(pattern: string): string {
  let out = '';
  const open: number[] = [0];
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      out += pattern.slice(i, i + 2);
      i++;
    } else if (inClass) {
      out += c;
      if (c === ']') inClass = false;
    } else if (c === '[') {
      out += c;
      inClass = true;
      // A `]` (or `^]`) first in a class is literal.
      const lead = /^\^?\]/.exec(pattern.slice(i + 1))?.[0] ?? '';
      out += lead;
      i += lead.length;
    } else if (c === '(') {
      const flags = /^\(\?[imsU-]+\)/.exec(pattern.slice(i))?.[0];
      if (flags) {
        out += `${flags.slice(0, -1)}:`;
        open[open.length - 1]!++;
        i += flags.length - 1;
      } else {
        out += c;
        open.push(0);
      }
    } else if (c === ')') {
      out += ')'.repeat(open.pop() ?? 0) + c;
      if (open.length === 0) open.push(0);
    } else {
      out += c;
    }
  }
  return out + ')'.repeat(open.reduce((a, b) => a + b, 0));
}
