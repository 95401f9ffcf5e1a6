import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../src/cli/main';
import { memoryIO } from './support/cli';
import { cliCommands, headingAnchor, headingAnchors, pageLinks, splitPage, type CodeBlock } from './support/markdown';

// The README and every page of docs/ (those others add later too): their examples are checked
// against the code and their links resolve, so the manual cannot drift from what it describes.

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PAGES = [
  'README.md',
  'CHANGELOG.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];
const TEXT = new Map(PAGES.map((page) => [page, readFileSync(join(ROOT, page), 'utf8')]));
const BLOCKS: Array<CodeBlock & { page: string }> = PAGES.flatMap((page) => splitPage(TEXT.get(page)!).blocks.map((b) => ({ ...b, page })));
const README = TEXT.get('README.md')!;

/**
 * Pages being written on other branches at the same time, linked to already: a link to one of
 * them may point nowhere until that branch is merged (its anchors are checked once it exists).
 * Empty this list once they are all merged.
 */
const PAGES_ON_OTHER_BRANCHES = new Set<string>();

describe('README', () => {
  it('fits in 300 lines', () => {
    expect(README.split('\n').length).toBeLessThanOrEqual(300);
  });

  it('shows both test commands', () => {
    expect(README).toContain('npm test ');
    expect(README).toContain('npm run test:integration');
  });

  it('cites no document the repository does not have', () => {
    for (const page of PAGES) expect(TEXT.get(page), page).not.toMatch(/shared\/spec|contract \u00a7/);
  });
});

describe('code comments', () => {
  it('cite the docs pages, not sections of a document outside the repository', () => {
    const cited = ['src', 'test', 'queries', 'bench', 'scripts']
      .flatMap((dir) => sourceFiles(join(ROOT, dir)))
      .filter((file) => /contract\s+§|contract's accuracy/i.test(readFileSync(file, 'utf8')) && !file.endsWith('readme.test.ts'))
      .map((file) => relative(ROOT, file));
    expect(cited).toEqual([]);
  });

  it('cite docs pages and headings that exist', () => {
    const broken: string[] = [];
    let citations = 0;
    for (const file of ['src', 'test', 'queries', 'bench', 'scripts'].flatMap((dir) => sourceFiles(join(ROOT, dir)))) {
      // `docs/semantics.md, "Timestamps"`, `docs/semantics.md, "Files" and "Compacted datasets"`, `docs/cache.md`
      for (const m of readFileSync(file, 'utf8').matchAll(/docs\/([\w-]+\.md)((?:(?:,| and) "[^"\n]+")*)/g)) {
        citations++;
        const page = `docs/${m[1]!}`;
        const where = `${relative(ROOT, file)}: ${m[0]}`;
        if (!existsSync(join(ROOT, page))) {
          if (!PAGES_ON_OTHER_BRANCHES.has(page)) broken.push(`${where}: no page`);
          continue;
        }
        const anchors = headingAnchors(readFileSync(join(ROOT, page), 'utf8'));
        for (const [, heading] of m[2]!.matchAll(/"([^"]+)"/g)) {
          if (!anchors.has(headingAnchor(heading!))) broken.push(`${where}: no heading "${heading}"`);
        }
      }
    }
    expect(citations).toBeGreaterThan(40);
    expect(broken).toEqual([]);
  });
});

describe('links between the README and the docs pages', () => {
  const links = PAGES.flatMap((page) => pageLinks(TEXT.get(page)!).map((link) => ({ ...link, page }))).filter(({ target }) => !/^[a-z][a-z+.-]*:/i.test(target));

  it('exist', () => {
    expect(links.length).toBeGreaterThan(50);
  });

  it('point to files of the repository, and to headings that exist', () => {
    const broken: string[] = [];
    for (const { page, target, line } of links) {
      const [path, anchor] = target.split('#') as [string, string | undefined];
      const file = path === '' ? page : relative(ROOT, join(ROOT, dirname(page), decodeURIComponent(path)));
      const where = `${page}:${line} -> ${target}`;
      if (file.startsWith('..')) {
        broken.push(`${where}: outside the repository`);
      } else if (!existsSync(join(ROOT, file))) {
        if (!PAGES_ON_OTHER_BRANCHES.has(file) || anchor !== undefined) broken.push(`${where}: no file ${file}`);
      } else if (anchor !== undefined && !(file.endsWith('.md') && headingAnchors(readFileSync(join(ROOT, file), 'utf8')).has(anchor))) {
        broken.push(`${where}: no heading #${anchor} in ${file}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('reach every docs page from the README', () => {
    const linked = new Set(pageLinks(README).map(({ target }) => target.split('#')[0]));
    expect(PAGES.filter((p) => p.startsWith('docs/') && !linked.has(p))).toEqual([]);
  });
});

describe('code examples', () => {
  it('use the log folders demo-data writes (logs/edge/, logs/functions/) and their compacted twins', () => {
    // A folder, not a URL path such as http://localhost:3000/logs/dashboard (a base path).
    const folders = new Set(BLOCKS.flatMap(({ code }) => [...code.matchAll(/(?<![\w/.-])logs\/([\w-]+)/g)].map((m) => m[1]!)));
    // logs/auth/ (and its compacted twin): the example of a source of your own (docs/definitions.md), which demo-data does not write.
    expect([...folders].sort()).toEqual(['auth', 'auth-parquet', 'edge', 'edge-parquet', 'functions', 'functions-parquet']);
  });

  it('show the Redis client with an error listener before it connects', () => {
    const redis = BLOCKS.find(({ code }) => code.includes('redisCache({ client'))!.code;
    expect(redis.indexOf("client.on('error'")).toBeGreaterThan(-1);
    expect(redis.indexOf("client.on('error'")).toBeLessThan(redis.indexOf('client.connect()'));
  });

  it('JSON blocks parse', () => {
    const json = BLOCKS.filter(({ lang }) => lang === 'json');
    expect(json.length).toBeGreaterThan(3);
    for (const { page, line, code } of json) expect(() => JSON.parse(code), `${page}:${line}`).not.toThrow();
  });

  it('shell blocks call the CLI with options it has', async () => {
    const commands = BLOCKS.filter(({ lang }) => lang === 'sh').flatMap(({ page, line, code }) => cliCommands(code).map((argv) => ({ argv, where: `${page}:${line}` })));
    expect(commands.length).toBeGreaterThan(20);
    const refused: string[] = [];
    for (const { argv, where } of commands) {
      // Every command parses its options strictly before it looks at --help, and then does nothing else.
      const { io, out } = memoryIO();
      const code = await main([...argv, '--help'], io, '0.0.0');
      if (code !== 0) refused.push(`${where}: log-endpoints ${argv.join(' ')}: ${out.stderr.trim()}`);
    }
    expect(refused).toEqual([]);
  });

  it('TypeScript blocks type-check against the package as written', () => {
    const examples = BLOCKS.filter(({ lang }) => lang === 'ts' || lang === 'js');
    expect(examples.filter(({ lang }) => lang === 'ts').length).toBeGreaterThan(15);
    // Inside the repository, so the examples' own imports (redis, hono, fastify) resolve.
    mkdirSync(join(ROOT, 'node_modules', '.cache'), { recursive: true });
    const dir = mkdtempSync(join(ROOT, 'node_modules', '.cache', 'le-docs-'));
    try {
      const files = examples.map(({ lang, code, page, line }, i) => {
        const file = join(dir, `${page.replace(/\W/g, '-')}-${line}-${i}.${lang === 'ts' ? 'ts' : 'cjs'}`);
        writeFileSync(file, lang === 'ts' ? asModule(code) : code);
        return { file, where: `${page}:${line}` };
      });
      const program = ts.createProgram(
        files.map(({ file }) => file),
        {
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          target: ts.ScriptTarget.ES2022,
          lib: ['lib.es2023.d.ts'],
          noUncheckedIndexedAccess: true,
          module: ts.ModuleKind.ESNext,
          moduleResolution: ts.ModuleResolutionKind.Bundler,
          types: ['node'],
          typeRoots: [join(ROOT, 'node_modules/@types')],
          // JavaScript blocks (a pino setup) are checked for syntax only.
          allowJs: true,
          checkJs: false,
          baseUrl: ROOT,
          paths: { 'log-endpoints': ['src/index.ts'], 'log-endpoints/*': ['src/*.ts'] },
        },
      );
      // Only the examples are checked, not the whole package they import (npm test's tsc does that).
      const problems = files.flatMap(({ file, where }) => {
        const source = program.getSourceFile(file)!;
        return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)].map(
          (d) => `${where} (block line ${d.start === undefined ? '?' : source.getLineAndCharacterOfPosition(d.start).line + 1}): ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
        );
      });
      expect([...program.getGlobalDiagnostics(), ...program.getOptionsDiagnostics()].map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the README's first example", () => {
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'le-first-example-'));
    // Exactly what the README tells a new user to run first.
    const command = cliCommands(splitPage(README).blocks.find(({ lang, code }) => lang === 'sh' && code.includes('demo-data'))!.code)[0]!;
    expect(command).toEqual(['demo-data', '--out', 'logs']);
    const { io, out } = memoryIO();
    expect(await main(['demo-data', '--out', join(dir, 'logs')], io, '0.0.0'), out.stderr).toBe(0);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('answers rows of all three endpoints over the demo data', async () => {
    const example = splitPage(README).blocks.find(({ lang }) => lang === 'ts')!.code;
    const file = join(dir, 'app.ts');
    writeFileSync(file, example.replaceAll("'log-endpoints'", `'${join(ROOT, 'src', 'index.ts')}'`).replaceAll("'logs/", `'${dir}/logs/`));
    const printed: unknown[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((value: unknown) => {
      printed.push(value);
    });
    try {
      await import(pathToFileURL(file).href);
    } finally {
      log.mockRestore();
    }
    expect(printed).toHaveLength(3);
    for (const rows of printed) expect((rows as unknown[]).length).toBeGreaterThan(0);
  });
});

/** A TypeScript block as a module of its own; one that goes on from an earlier block gets its `ep` declared. */
function asModule(code: string): string {
  const preamble = /\bep\b/.test(code) && !/\bconst ep\b/.test(code) ? "import type { Endpoints } from 'log-endpoints';\ndeclare const ep: Endpoints;\n" : '';
  // The generator example runs from the repository's root (`npx tsx gen.ts`).
  return `${preamble}${code.replaceAll("'./src/", `'${ROOT}src/`)}\nexport {};\n`;
}

/** The TypeScript and JavaScript files under a folder. */
function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|mts|cts|js|mjs|cjs|sql)$/.test(e.name))
    .map((e) => join(e.parentPath ?? e.path, e.name));
}
