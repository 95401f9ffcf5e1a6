import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Every clock the product reads goes through src/time/clock.ts, so a read that should have been
// the injected clock (a window, retention, an arrival time) cannot hide in a default argument:
// the suite then passes on any date (CI runs it a year ahead).

const SRC = fileURLToPath(new URL('../src/', import.meta.url));
const CLOCK_MODULE = 'time/clock.ts';
/** `Date.now()`, `new Date()` with no argument, `performance.now()` / `.timeOrigin`. */
const CLOCK_READ = /\bDate\.now\s*\(|\bnew\s+Date\s*\(\s*\)|\bperformance\.(now|timeOrigin)\b/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    // The dashboard's page runs in the browser: its clock is the viewer's.
    if (statSync(path).isDirectory()) return relative(SRC, path) === 'dashboard/page' ? [] : sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

describe('clock reads', () => {
  it('happen in src/time/clock.ts only (code, not comments)', () => {
    const reads = sourceFiles(SRC)
      .filter((file) => relative(SRC, file) !== CLOCK_MODULE)
      .flatMap((file) =>
        readFileSync(file, 'utf8')
          .split('\n')
          .map((line, i) => ({ line, at: `${relative(SRC, file)}:${i + 1}` }))
          .filter(({ line }) => !/^\s*(\*|\/\/|\/\*)/.test(line) && CLOCK_READ.test(line.replace(/\/\/.*$/, '')))
          .map(({ at, line }) => `${at}: ${line.trim()}`),
      );
    expect(reads).toEqual([]);
  });

  it('the rule sees each kind of read', () => {
    for (const line of ['const t = Date.now();', 'x = new Date();', 'performance.now()', 'performance.timeOrigin + 1']) {
      expect(CLOCK_READ.test(line), line).toBe(true);
    }
    expect(CLOCK_READ.test('new Date(micros / 1000)')).toBe(false);
  });
});
