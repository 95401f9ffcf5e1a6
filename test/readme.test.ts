import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
/** The fenced code blocks of the README. */
const blocks = [...README.matchAll(/```(\w*)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, code: m[2]! }));

describe('README', () => {
  it('links to nothing outside the repository', () => {
    expect(README).not.toMatch(/\]\(\.\.\//);
    expect(README).not.toMatch(/\.\.\/shared|shared\/spec/);
  });

  it('uses the log folders demo-data writes (logs/edge/, logs/functions/) and their compacted twins', () => {
    // A folder, not a URL path such as http://localhost:3000/logs/dashboard (a base path).
    const folders = new Set(blocks.flatMap(({ code }) => [...code.matchAll(/(?<![\w/])logs\/([\w-]+)/g)].map((m) => m[1]!)));
    expect([...folders].sort()).toEqual(['edge', 'edge-parquet', 'functions', 'functions-parquet']);
  });

  it('shows the Redis client with an error listener before it connects', () => {
    const redis = blocks.find(({ code }) => code.includes('redisCache({ client'))!.code;
    expect(redis.indexOf("client.on('error'")).toBeGreaterThan(-1);
    expect(redis.indexOf("client.on('error'")).toBeLessThan(redis.indexOf('client.connect()'));
  });

  it('shows both test commands', () => {
    expect(README).toContain('npm test ');
    expect(README).toContain('npm run test:integration');
  });

  it('has TypeScript examples that type-check against the package as written', () => {
    const root = fileURLToPath(new URL('..', import.meta.url));
    // Inside the repository, so the examples' own imports (redis, hono, fastify) resolve.
    mkdirSync(join(root, 'node_modules', '.cache'), { recursive: true });
    const dir = mkdtempSync(join(root, 'node_modules', '.cache', 'le-readme-'));
    try {
      const files = blocks.filter(({ lang }) => lang === 'ts').map(({ code }, i) => {
        // A snippet that goes on from an earlier one uses its `ep`; declared, not made, here.
        const preamble = /\bep\b/.test(code) && !/\bconst ep\b/.test(code) ? "import type { Endpoints } from 'log-endpoints';\ndeclare const ep: Endpoints;\n" : '';
        const file = join(dir, `example-${i}.ts`);
        // The generator example runs from the repository's root (`npx tsx gen.ts`).
        writeFileSync(file, `${preamble}${code.replaceAll("'./src/", `'${root}src/`)}\nexport {};\n`);
        return file;
      });
      expect(files.length).toBeGreaterThan(10);
      const program = ts.createProgram(files, {
        strict: true, noEmit: true, skipLibCheck: true, target: ts.ScriptTarget.ES2022, lib: ['lib.es2023.d.ts'], noUncheckedIndexedAccess: true, module: ts.ModuleKind.ESNext,
        moduleResolution: ts.ModuleResolutionKind.Bundler, types: ['node'], typeRoots: [join(root, 'node_modules/@types')],
        baseUrl: root, paths: { 'log-endpoints': ['src/index.ts'], 'log-endpoints/*': ['src/*.ts'] },
      });
      const problems = ts.getPreEmitDiagnostics(program).map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
      expect(problems).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
