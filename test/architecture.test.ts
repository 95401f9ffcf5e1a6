import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The layout of docs/architecture.md, held: each folder owns one mechanism and knows only the ones
// below it, so no file imports itself back, no two folders import each other, and no engine
// imports another.

const SRC = fileURLToPath(new URL('../src/', import.meta.url));
/** The entry points of the package (src/*.ts but errors.ts): they import, nothing imports them. */
const ENTRIES = new Set(['index.ts', 'cli.ts', 'http.ts', 'node.ts', 'redis.ts', 'clickhouse.ts']);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'page' ? [] : sourceFiles(path); // the dashboard's browser code has its own tsconfig
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** The files of src/ each file imports (static imports, re-exports and dynamic imports of relative paths). */
function importGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles(SRC)) {
    const targets = new Set<string>();
    for (const m of readFileSync(file, 'utf8').matchAll(/\bfrom\s*['"](\.{1,2}\/[^'"\n]+)['"]|\bimport\(\s*['"](\.{1,2}\/[^'"\n]+)['"]\s*\)/g)) {
      const target = resolve(dirname(file), m[1] ?? m[2]!);
      targets.add(target.endsWith('.ts') ? target : `${target}.ts`);
    }
    graph.set(file, targets);
  }
  return graph;
}

/** A file's folder for the layout: `engine/duckdb` and `engine/clickhouse` apart, the entries together. */
function folderOf(file: string): string {
  const parts = relative(SRC, file).split('/');
  if (parts.length === 1) return ENTRIES.has(parts[0]!) ? '(entries)' : parts[0]!.replace(/\.ts$/, '');
  return parts[0] === 'engine' && parts.length > 2 ? `engine/${parts[1]}` : parts[0]!;
}

describe('the layout of src/', () => {
  const graph = importGraph();

  it('resolves every relative import to a file of src/', () => {
    const missing = [...graph].flatMap(([file, targets]) => [...targets].filter((t) => !graph.has(t)).map((t) => `${relative(SRC, file)} -> ${relative(SRC, t)}`));
    expect(missing).toEqual([]);
    expect(graph.size).toBeGreaterThan(150);
  });

  it('has no import circle between files', () => {
    const state = new Map<string, 'open' | 'done'>();
    const circles: string[] = [];
    const visit = (file: string, path: string[]) => {
      state.set(file, 'open');
      for (const next of graph.get(file) ?? []) {
        if (state.get(next) === 'open') circles.push([...path.slice(path.indexOf(next)), file, next].map((f) => relative(SRC, f)).join(' -> '));
        else if (!state.has(next)) visit(next, [...path, file]);
      }
      state.set(file, 'done');
    };
    for (const file of graph.keys()) if (!state.has(file)) visit(file, []);
    expect(circles).toEqual([]);
  });

  it('has no two folders importing each other, no engine importing another, and nothing importing the entries', () => {
    const edges = new Set<string>();
    for (const [file, targets] of graph) {
      for (const target of targets) {
        const [from, to] = [folderOf(file), folderOf(target)];
        if (from !== to) edges.add(`${from} -> ${to}`);
      }
    }
    const mutual = [...edges].filter((e) => {
      const [from, to] = e.split(' -> ');
      return from! < to! && edges.has(`${to} -> ${from}`);
    });
    expect(mutual).toEqual([]);
    expect([...edges].filter((e) => /^engine\/(duckdb|clickhouse) -> engine\/(duckdb|clickhouse)$/.test(e))).toEqual([]);
    expect([...edges].filter((e) => e.endsWith('-> (entries)'))).toEqual([]);
    // The core never loads an optional part: the ClickHouse engine and the HTTP adapter are imported by their entries only.
    expect([...edges].filter((e) => /^(api|cache|definitions|sources|engine|files|dataset|compaction|duckdb) -> (http|cli|dashboard|node|redis)$/.test(e))).toEqual([]);
  });
});
