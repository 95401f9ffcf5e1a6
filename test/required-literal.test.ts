import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPlainText, prefilterLiteral, requiredLiteral } from '../src/sql/required-literal';

describe('requiredLiteral: the plain text every match of a pattern contains', () => {
  it.each([
    ['abc', 'abc'],
    ['abc(\\.|$)', 'abc'],
    ['^https://abc\\.supabase\\.co/', 'https://abc.supabase.co/'],
    ['ab?c', 'a'],
    ['xy*zzz', 'zzz'],
    ['ab+c', 'ab'],
    ['a{2}bc', 'bc'],
    ['a.bcd', 'bcd'],
    ['[abc]def', 'def'],
    ['[]x]yz', 'yz'],
    ['\\dabc', 'abc'],
    ['(ab|cd)ef', 'ef'],
    ['ab\\.?c', 'ab'],
    ['東京/abc', '東京/abc'],
  ])('%s -> %s', (pattern, literal) => {
    expect(requiredLiteral(pattern)).toBe(literal);
  });

  it.each([['a|b'], ['(?i)abc'], ['(?:ab)cd'], [''], ['.*'], ['[a-z]+']])('%s has none', (pattern) => {
    expect(requiredLiteral(pattern)).toBe('');
  });

  it('binds the literal only when the pattern is more than plain text', () => {
    expect(prefilterLiteral('abc(\\.|$)')).toBe('abc');
    expect(prefilterLiteral('abc')).toBe('');
    expect(prefilterLiteral(null)).toBe('');
  });

  // usage.api-counts' rollup variants take a pattern equal to its required literal as plain text,
  // held by every URL of an origin that holds it: a pattern with a class, group, quantifier, anchor
  // or escape in it must never equal its literal.
  it('is the pattern itself only when the pattern is plain text', () => {
    for (const p of ['abc', '東京/abc', 'a-b_c d']) expect(requiredLiteral(p)).toBe(p);
    fc.assert(
      fc.property(pattern, (p) => {
        if (requiredLiteral(p) === p) expect(isPlainText(p)).toBe(true);
        return true;
      }),
      { numRuns: 5000 },
    );
  });

  // Every string a generated pattern matches holds its literal (JavaScript's RegExp agrees with
  // RE2 on this subset: literals, escapes, classes, groups, alternation, quantifiers, anchors).
  const atom = fc.oneof(fc.constantFrom('a', 'b', 'c', '.', '\\.', '/', '-', '^', '$', '[ab]', '[^a]', '\\d', '\\w'), fc.constantFrom('(a|b)', '(ab)', '(\\.|$)', '(c)'));
  const piece = fc.tuple(atom, fc.constantFrom('', '', '', '?', '*', '+', '{1,2}', '*?', '+?')).map(([a, q]) => a + q);
  const pattern = fc.array(piece, { minLength: 1, maxLength: 8 }).map((parts) => parts.join(''));
  it('never names text a match can lack', () => {
    fc.assert(
      fc.property(
        pattern,
        fc.array(fc.constantFrom('a', 'b', 'c', '.', '/', '-', '1', 'x'), { maxLength: 12 }).map((s) => s.join('')),
        (p, s) => {
          let re: RegExp;
          try {
            re = new RegExp(p, 'u');
          } catch {
            return true;
          }
          if (re.test(s)) expect(s.includes(requiredLiteral(p))).toBe(true);
          return true;
        },
      ),
      { numRuns: 5000 },
    );
  });
});
