import { isAbsolute, resolve, sep } from 'node:path';

/**
 * A source glob, compiled once: the folder its wildcards start below (`base`) and a matcher for
 * paths relative to it. Supported: `*` and `?` within a name, `[abc]` / `[!abc]` classes, and a
 * `**` segment for any depth. A path without wildcards names one file; when it names a folder,
 * it means every log file below it (`<folder>/**`).
 */
export interface CompiledGlob {
  /** The glob as configured. */
  readonly pattern: string;
  /** Absolute folder the wildcards start below (or the file itself, for a literal path). */
  readonly base: string;
  /** True for a path without wildcards. */
  readonly literal: boolean;
  /** Whether a path relative to `base` ('/'-separated) matches. */
  matches(relative: string): boolean;
  /** Whether a folder at this relative path may hold matches (prunes the walk). */
  mayContain(relativeDir: string): boolean;
}

const WILDCARD = /[*?[]/;

/**
 * Compiles a glob against a working directory (relative globs resolve against it).
 *
 * @example
 * const glob = compileGlob('logs/edge/**\/*.parquet');
 * glob.base;                                       // '/srv/app/logs/edge'
 * glob.matches('date=2026-11-21/part-1.parquet');  // true
 */
export function compileGlob(pattern: string, cwd: string = process.cwd()): CompiledGlob {
  const absolute = isAbsolute(pattern) ? pattern : resolve(cwd, pattern);
  const segments = absolute.split(/[\\/]+/);
  const first = segments.findIndex((s) => WILDCARD.test(s));
  if (first < 0) {
    return { pattern, base: resolve(absolute), literal: true, matches: () => true, mayContain: () => true };
  }
  const base = segments.slice(0, first).join(sep) || sep;
  const rest = segments.slice(first);
  const full = new RegExp(`^${rest.map((s, i) => segmentSource(s, i === rest.length - 1)).join('')}$`);
  const star = rest.indexOf('**');
  // A folder at depth k may hold matches when its names match the first k segments; past a `**`
  // any folder may (the segments before it were checked on the way down).
  const prefixes = rest.map(
    (_, k) =>
      new RegExp(
        `^${rest
          .slice(0, k + 1)
          .map((s, i) => segmentSource(s, i === k))
          .join('')}$`,
      ),
  );
  return {
    pattern,
    base: resolve(base),
    literal: false,
    matches: (relative) => full.test(relative),
    mayContain: (relativeDir) => {
      const depth = relativeDir.split('/').length;
      if (star >= 0 && depth > star) return true;
      if (depth >= rest.length) return false;
      return prefixes[depth - 1]!.test(relativeDir);
    },
  };
}

/** The regular expression of one segment; `**` absorbs any number of folders (including none). */
function segmentSource(segment: string, last: boolean): string {
  if (segment === '**') return last ? '.*' : '(?:[^/]+/)*';
  let out = '';
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i]!;
    if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else if (c === '[') {
      const close = segment.indexOf(']', i + 2);
      if (close < 0) {
        out += '\\[';
        continue;
      }
      let body = segment.slice(i + 1, close);
      const negate = body.startsWith('!') || body.startsWith('^');
      if (negate) body = body.slice(1);
      out += `[${negate ? '^/' : ''}${body.replace(/[\\\]]/g, '\\$&')}]`;
      i = close;
    } else out += c.replace(/[.+^${}()|\\/]/g, '\\$&');
  }
  return last ? out : `${out}/`;
}
