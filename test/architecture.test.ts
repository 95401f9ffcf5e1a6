import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The layout of docs/architecture.md, held: each folder owns one mechanism and knows only the ones
// below it, so no file imports itself back, no folders import each other round a circle of any
// length, no engine imports another, and the drawing's floors are the ones the imports make.

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

  it('has no circle of folders of any length (the files making each of its edges named)', () => {
    const edges = folderEdges(graph);
    const circles = circlesOf(edges).map((folders) => {
      const inside = new Set(folders);
      const made = [...edges].flatMap(([from, to]) => (inside.has(from) ? [...to].filter(([t]) => inside.has(t)).map(([t, by]) => `${from} -> ${t} (${by.join(', ')})`) : []));
      return `${folders.join(', ')}: ${made.join('; ')}`;
    });
    expect(circles).toEqual([]);
  });

  it('finds a circle of three folders, as the one once made by duckdb/ -> files/ -> dataset/ -> duckdb/', () => {
    const edges = new Map([
      ['a', new Map([['b', ['x']]])],
      ['b', new Map([['c', ['y']]])],
      ['c', new Map([['a', ['z']]])],
      ['d', new Map([['a', ['w']]])],
    ]);
    expect(circlesOf(edges)).toEqual([['a', 'b', 'c']]);
    expect(
      circlesOf(
        new Map([
          ['a', new Map([['b', ['x']]])],
          ['b', new Map([['c', ['y']]])],
        ]),
      ),
    ).toEqual([]);
  });

  it('has no engine importing another, and nothing importing the entries or, from the core, an optional part', () => {
    const edges = [...folderEdges(graph)].flatMap(([from, to]) => [...to.keys()].map((t) => `${from} -> ${t}`));
    expect(edges.filter((e) => /^engine\/(duckdb|clickhouse) -> engine\/(duckdb|clickhouse)$/.test(e))).toEqual([]);
    expect(edges.filter((e) => e.endsWith('-> (entries)'))).toEqual([]);
    // The core never loads an optional part: the ClickHouse engine and the HTTP adapter are imported by their entries only.
    expect(edges.filter((e) => /^(api|cache|definitions|sources|engine|files|dataset|compaction|duckdb) -> (http|cli|dashboard|node|redis)$/.test(e))).toEqual([]);
  });

  it('is drawn in docs/architecture.md: every folder of src/ on a floor, each importing only floors below its own', () => {
    const floors = drawnFloors(readFileSync(fileURLToPath(new URL('../docs/architecture.md', import.meta.url)), 'utf8'));
    const folders = readdirSync(SRC).flatMap((name) => {
      if (name === 'engine')
        return [
          'engine',
          ...readdirSync(join(SRC, name))
            .filter((n) => statSync(join(SRC, name, n)).isDirectory())
            .map((n) => `engine/${n}`),
        ];
      if (statSync(join(SRC, name)).isDirectory()) return [name];
      return name.endsWith('.ts') ? [folderOf(join(SRC, name))] : [];
    });
    expect([...new Set(folders)].filter((f) => !floors.has(f)).sort()).toEqual([]);
    const upward = [...folderEdges(graph)].flatMap(([from, to]) =>
      [...to].filter(([t]) => !(floors.get(t)! > floors.get(from)!)).map(([t, by]) => `${from} (floor ${floors.get(from)}) -> ${t} (floor ${floors.get(t)}): ${by.join(', ')}`),
    );
    expect(upward).toEqual([]);
  });
});

describe('the errors of src/', () => {
  it('are never a plain Error: each is a LogEndpointsError with a stable code, or an InternalError no caller sees as it is', () => {
    expect(plainErrors(sourceFiles(SRC))).toEqual([]);
  });

  it('are found by that check wherever one is made (new Error, throw Error), and not in a comment', () => {
    const dir = mkdtempSync(join(tmpdir(), 'plain-errors-'));
    try {
      writeFileSync(join(dir, 'a.ts'), "/** @example throw new Error('x') */\nconst e = new Error('x');\n  // new Error('y')\nthrow Error('z');\nthrow new EngineError('query_failed', 'w');\n");
      expect(plainErrors([join(dir, 'a.ts')]).map((at) => at.replace(/^.*\//, ''))).toEqual(['a.ts:2', 'a.ts:4']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * The `TypeError`s and `RangeError`s src/ may still make: invariants no caller can reach (their
 * inputs are the code's own), each said so in a comment where it is thrown. Anything a caller can
 * reach (an option, a body, a parameter) is an error of src/errors.ts with a stable code.
 */
const BUILT_IN_ERRORS_ALLOWED = new Map([
  ['managed/wal/wal.ts', 'the lines the ingestor appends end with a newline'],
  ['managed/wal/segment-name.ts', "segment numbers come from the WAL's own count"],
]);

/** `file` of each `new TypeError(` / `new RangeError(` (or `throw TypeError(`...) outside comments. */
function builtInErrors(files: readonly string[]): string[] {
  return files.flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line) => (/^\s*(\*|\/\/|\/\*)/.test(line) || !/\b(new|throw) (Type|Range)Error\(/.test(line) ? [] : [relative(SRC, file).split(sep).join('/')])),
  );
}

describe('the TypeErrors and RangeErrors of src/', () => {
  it('are made only where the allowed list says (invariants no caller reaches); the rest is the error family', () => {
    const found = builtInErrors(sourceFiles(SRC));
    expect([...new Set(found.filter((file) => !BUILT_IN_ERRORS_ALLOWED.has(file)))]).toEqual([]);
    // No stale entry: each allowed file still makes one.
    expect([...BUILT_IN_ERRORS_ALLOWED.keys()].filter((file) => !found.includes(file))).toEqual([]);
  });

  it('are found by that check wherever one is made, and not in a comment', () => {
    const dir = mkdtempSync(join(tmpdir(), 'built-in-errors-'));
    try {
      writeFileSync(join(dir, 'a.ts'), "// new TypeError('x')\nthrow new RangeError('y');\nreturn Promise.reject(new TypeError('z'));\nthrow new InvalidOptionError('o', 'w');\n");
      expect(builtInErrors([join(dir, 'a.ts')]).map((at) => at.replace(/^.*\//, ''))).toEqual(['a.ts', 'a.ts']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** `file:line` of each plain `new Error(` or `throw Error(` outside comments. */
function plainErrors(files: readonly string[]): string[] {
  return files.flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line, i) => (/^\s*(\*|\/\/|\/\*)/.test(line) || !/\bnew Error\(|\bthrow Error\(/.test(line) ? [] : [`${relative(SRC, file)}:${i + 1}`])),
  );
}

/** Folder -> the folders it imports -> the imports (`file -> file`) that make each edge. */
function folderEdges(graph: Map<string, Set<string>>): Map<string, Map<string, string[]>> {
  const edges = new Map<string, Map<string, string[]>>();
  for (const [file, targets] of graph) {
    for (const target of targets) {
      const [from, to] = [folderOf(file), folderOf(target)];
      if (from === to) continue;
      if (!edges.has(from)) edges.set(from, new Map());
      const by = edges.get(from)!;
      if (!by.has(to)) by.set(to, []);
      by.get(to)!.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`);
    }
  }
  return edges;
}

/** The circles of a graph: its strongly connected components of more than one node (Tarjan's), each sorted. */
function circlesOf(edges: ReadonlyMap<string, ReadonlyMap<string, unknown>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node)?.keys() ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) circles.push(component.sort());
  };
  for (const node of edges.keys()) if (!index.has(node)) visit(node);
  return circles;
}

/**
 * The floors of the drawing in docs/architecture.md, top first: each line of its first code block
 * that starts with folders (`src/api/, src/redis/   ...`) is a floor; `src/*.ts` are the entries.
 */
function drawnFloors(markdown: string): Map<string, number> {
  const drawing = /```\n([\s\S]*?)```/.exec(markdown)![1]!;
  const floors = new Map<string, number>();
  let floor = 0;
  for (const line of drawing.split('\n')) {
    const names = /^(src\/[\w/*.-]+(?:, src\/[\w/*.-]+)*)(\s|$)/.exec(line)?.[1];
    if (!names) continue;
    floor++;
    for (const name of names.split(', ')) {
      const folder = name === 'src/*.ts' ? '(entries)' : name.slice('src/'.length).replace(/\/$/, '').replace(/\.ts$/, '');
      floors.set(folder, floor);
    }
  }
  return floors;
}
