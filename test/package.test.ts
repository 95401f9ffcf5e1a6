import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { HANG_MS } from './support/hang-guard';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Runs an ES module script in a fresh Node process (TypeScript through tsx), with `preload` modules first. */
function runScript(script: string, preload: string[] = []): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const args = ['--import', 'tsx', ...preload.flatMap((p) => ['--import', p]), '--input-type=module', '-e', script];
    execFile(process.execPath, args, { cwd: ROOT, timeout: HANG_MS }, (error, _stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stderr });
    });
  });
}

describe('the package', () => {
  it('does not load apache-arrow on import (any entry), only for the first Arrow answer', async () => {
    const { code, stderr } = await runScript(
      `
      import { writeSync } from 'node:fs';
      const { createEndpoints } = await import('./src/index.ts');
      await import('./src/http.ts');
      await import('./src/node.ts');
      await import('./src/redis.ts');
      writeSync(2, 'imported\\n');
      const ep = await createEndpoints({ sources: { edgeLogs: 'test/no-such-folder/*.ndjson' } });
      await ep.query('usage.api-counts', { project: 'a', interval: 'daily' });
      writeSync(2, 'answered as rows\\n');
      const { table } = await ep.query('usage.api-counts', { project: 'a', interval: 'daily' }, { format: 'arrow' });
      writeSync(2, 'answered as Arrow: ' + table.numCols + ' columns\\n');
      await ep.close();
      `,
      ['./test/support/trace-arrow-load.mjs'],
    );
    expect(stderr).toBe('imported\nanswered as rows\napache-arrow resolved\nanswered as Arrow: 5 columns\n');
    expect(code).toBe(0);
  });

  it('ships a LICENSE (MIT, as package.json says) and names its repository', () => {
    const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8'));
    expect(pkg.license).toBe('MIT');
    expect(readFileSync(`${ROOT}LICENSE`, 'utf8')).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} /);
    expect(pkg.files).toContain('LICENSE');
    expect(pkg.repository).toMatchObject({ type: 'git', url: expect.stringMatching(/^git\+https:\/\/.+\.git$/) });
  });

  it('packs the JavaScript, the types, the CLI and queries/, built by `npm pack` itself (prepack) from a fresh clone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'le-pack-'));
    try {
      // What a fresh clone holds (no dist/), with the installed packages linked in.
      const clone = join(dir, 'clone');
      for (const entry of ['package.json', 'tsconfig.json', 'tsup.config.ts', 'tsup.dashboard.config.ts', 'src', 'queries', 'README.md', 'LICENSE']) {
        cpSync(join(ROOT, entry), join(clone, entry), { recursive: true });
      }
      symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
      await run('npm', ['pack', '--pack-destination', dir], { cwd: clone, timeout: HANG_MS });
      const tarball = join(dir, readdirSync(dir).find((name) => name.endsWith('.tgz'))!);
      const files = new Set(
        (await run('tar', ['-tzf', tarball])).stdout
          .split('\n')
          .filter(Boolean)
          .map((f) => f.replace(/^package\//, '')),
      );

      const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8'));
      // Every file an entry of `exports` names (JavaScript and types, import and require), and `main`, `module`, `types`.
      const named = [pkg.main, pkg.module, pkg.types, ...Object.values(pkg.exports as Record<string, unknown>).flatMap(leaves)].map((f: string) => f.replace(/^\.\//, ''));
      expect(named).toContain('dist/index.d.cts');
      expect(named.filter((f) => !files.has(f))).toEqual([]);
      // The CLI, as a program.
      const bin = pkg.bin['log-endpoints'] as string;
      expect(files).toContain(bin);
      expect((await run('tar', ['-xzf', tarball, '-O', `package/${bin}`])).stdout).toMatch(/^#!\/usr\/bin\/env node\n/);
      // The saved queries the engines read at run time, and the dashboard page.
      const queries = readdirSync(join(ROOT, 'queries'), { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.sql'))
        .map((f) => `queries/${f}`);
      expect(queries.length).toBeGreaterThan(5);
      expect(queries.filter((f) => !files.has(f))).toEqual([]);
      expect(files).toContain('dist/dashboard/dashboard.js');
      // Nothing of the sources or the tests.
      expect([...files].filter((f) => /^(src|test)\//.test(f))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

const run = promisify(execFile);

/** The file paths of an `exports` entry (its conditions nest). */
function leaves(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Object.values(value as Record<string, unknown>).flatMap(leaves);
}
