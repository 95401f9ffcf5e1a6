import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';

/**
 * A fresh temporary folder for each test of the calling file, made the process's temporary folder
 * (TMPDIR, which `os.tmpdir()` reads at each call) while the test runs and removed after it: for
 * code that makes its own files under `os.tmpdir()`. Returns the current test's folder.
 */
export function tmpdirPerTest(prefix: string): () => string {
  let root = '';
  const saved = process.env.TMPDIR;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), prefix));
    process.env.TMPDIR = root;
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
    rmSync(root, { recursive: true, force: true });
  });
  return () => root;
}
