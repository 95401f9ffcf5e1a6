/**
 * The longest run of plain characters that every match of an RE2 pattern contains, or '' when
 * none can be told (a top-level alternation, flags such as `(?i)`, an empty pattern).
 *
 * DuckDB rewrites `regexp_matches(x, 'literal')` to `contains`, but not a pattern with anything
 * else in it: `<ref>(\.|$)` ran 2.3-2.7x slower than `<ref>`. A `contains(x, literal)` in front
 * of the regular expression rejects most rows at the cost of a substring search, and never
 * changes an answer: a string without the literal cannot match.
 *
 * Conservative by design: a character followed by `?`, `*` or `{` is dropped from the run, any
 * group, class, escape of a letter (`\d`, `\b`, ...), `.`, `^` and `$` ends the run.
 *
 * @example
 * requiredLiteral('abc(\\.|$)') // 'abc'
 * requiredLiteral('a|b')        // ''
 */
export function requiredLiteral(pattern: string): string {
  // Flags (case folding, ...) and non-capturing groups: not worth the risk of a wrong literal.
  if (pattern.includes('(?')) return '';
  let best = '';
  let run = '';
  const close = () => {
    if (run.length > best.length) best = run;
    run = '';
  };
  const chars = [...pattern];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === '|') return '';
    if (c === '(' || c === '[') {
      close();
      const end = skipGroupOrClass(chars, i);
      if (end < 0) return '';
      // A group with an alternation at its top level is skipped whole; so is every class.
      i = end;
      continue;
    }
    if (c === '*' || c === '?' || c === '{') {
      // The atom before is optional (or repeated an unknown number of times): drop it.
      run = [...run].slice(0, -1).join('');
      close();
      if (c === '{') {
        const end = chars.indexOf('}', i);
        if (end < 0) return '';
        i = end;
      }
      if (chars[i + 1] === '?') i++;
      continue;
    }
    if (c === '+') {
      close();
      if (chars[i + 1] === '?') i++;
      continue;
    }
    if (c === '.' || c === '^' || c === '$' || c === ')' || c === ']') {
      close();
      continue;
    }
    if (c === '\\') {
      const next = chars[i + 1];
      if (next === undefined) return '';
      // `\Q...\E` quotes, and letters and digits are classes, anchors or back-references.
      if (/[0-9A-Za-z]/.test(next)) {
        close();
        if (next === 'Q' || next === 'p' || next === 'P' || next === 'x') return best.length >= run.length ? best : run;
        i++;
        continue;
      }
      run += next;
      i++;
      // A quantifier after the escaped character applies to it.
      continue;
    }
    run += c;
  }
  close();
  return best;
}

/** The index of the `)` or `]` that closes the group or class opening at `start`, or -1. */
function skipGroupOrClass(chars: readonly string[], start: number): number {
  if (chars[start] === '[') {
    let i = start + 1;
    if (chars[i] === '^') i++;
    // A `]` right after the opening bracket is a member, not the end.
    if (chars[i] === ']') i++;
    for (; i < chars.length; i++) {
      if (chars[i] === '\\') i++;
      else if (chars[i] === '[' && chars[i + 1] === ':') {
        const end = chars.indexOf(']', i + 2);
        if (end < 0) return -1;
        i = end;
      } else if (chars[i] === ']') return i;
    }
    return -1;
  }
  let depth = 0;
  for (let i = start; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === '\\') i++;
    else if (c === '[') {
      const end = skipGroupOrClass(chars, i);
      if (end < 0) return -1;
      i = end;
    } else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i;
  }
  return -1;
}

/**
 * What usage.api-counts binds as `$project_literal` for its pattern: the pattern's required
 * literal, or '' (`contains(x, '')` holds for all text) when there is none, when the pattern is
 * itself plain text (DuckDB already searches that as such) or when there is no pattern.
 *
 * @example
 * prefilterLiteral('abc(\\.|$)') // 'abc'
 * prefilterLiteral('abc')        // ''
 */
export function prefilterLiteral(pattern: string | null): string {
  if (pattern === null) return '';
  return isPlainText(pattern) ? '' : requiredLiteral(pattern);
}

/**
 * Whether an RE2 pattern has no special character, so that it matches exactly the strings that
 * contain it as text (a substring search answers it).
 *
 * @example
 * isPlainText('abc')        // true
 * isPlainText('abc(\\.|$)') // false
 */
export function isPlainText(pattern: string): boolean {
  return !/[\\^$.|?*+()[\]{}]/.test(pattern);
}
