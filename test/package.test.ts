import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Runs an ES module script in a fresh Node process (TypeScript through tsx), with `preload` modules first. */
function runScript(script: string, preload: string[] = []): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const args = ['--import', 'tsx', ...preload.flatMap((p) => ['--import', p]), '--input-type=module', '-e', script];
    execFile(process.execPath, args, { cwd: ROOT, timeout: 60_000 }, (error, _stdout, stderr) => {
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
});
