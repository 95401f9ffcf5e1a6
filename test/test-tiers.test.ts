import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import config from '../vitest.config';

// The tiers of `npm test` (docs/development.md, "Tests in tiers"): a file in no project would run
// in no command at all, a file in two would run twice.

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const INTEGRATION = join(ROOT, 'test', 'integration');

/** Every `*.test.ts` of test/ but test/integration/ (its own config), relative to the root. */
function testFiles(dir = join(ROOT, 'test')): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return path === INTEGRATION ? [] : testFiles(path);
    return name.endsWith('.test.ts') ? [relative(ROOT, path)] : [];
  });
}

/** The projects of vitest.config.ts: name and the paths it includes. */
function projects(): Array<{ name: string; include: string[] }> {
  return (config.test?.projects ?? []).map((project) => {
    const test = typeof project === 'object' && 'test' in project ? project.test : undefined;
    if (test?.name === undefined || test.include === undefined) throw new Error(`a project without a name or an include: ${JSON.stringify(project)}`);
    return { name: typeof test.name === 'string' ? test.name : test.name.label, include: test.include };
  });
}

describe('the tiers of npm test (vitest.config.ts)', () => {
  it('are unit, heavy, process and crash, each a list of paths', () => {
    expect(projects().map((p) => p.name)).toEqual(['unit', 'heavy', 'process', 'crash']);
  });

  it('hold every test file in exactly one tier, and name no file that is not there', () => {
    const files = testFiles();
    const tiersOf = new Map<string, string[]>();
    for (const { name, include } of projects()) for (const path of include) tiersOf.set(path, [...(tiersOf.get(path) ?? []), name]);
    expect(files.length).toBeGreaterThan(90);
    expect(files.filter((file) => tiersOf.get(file)?.length !== 1).map((file) => `${file}: ${tiersOf.get(file)?.join(' and ') ?? 'no tier'}`)).toEqual([]);
    // A glob, or a file renamed or removed, would match nothing by its text.
    expect([...tiersOf.keys()].filter((path) => !files.includes(path))).toEqual([]);
  });

  it('keep every process, server and kill out of unit', () => {
    // This file names them in the pattern, and starts none.
    const unit = projects()
      .find((p) => p.name === 'unit')!
      .include.filter((file) => file !== relative(ROOT, fileURLToPath(import.meta.url)));
    const outside = /node:child_process|\bspawnCli\(|\brunCli\(|\blisten\(|createServer|failpoint|SIGKILL/;
    expect(unit.length).toBeGreaterThan(30);
    expect(unit.filter((file) => outside.test(readFileSync(join(ROOT, file), 'utf8')))).toEqual([]);
  });
});
