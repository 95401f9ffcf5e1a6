import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

// The empty file every NDJSON read lists beside its own files (docs/semantics.md, "Files"), made
// here in a temporary folder given by TMPDIR, which `os.tmpdir()` reads at each call.

let root: string;
const savedTmpdir = process.env.TMPDIR;
const uid = process.getuid!();

/** The module as a new process would load it: its file not made yet. */
async function fresh(): Promise<() => string> {
  vi.resetModules();
  return (await import('../src/duckdb/empty-ndjson-file')).emptyNdjsonFile;
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'empty-ndjson-test-'));
  process.env.TMPDIR = root;
});

afterEach(() => {
  if (savedTmpdir === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmpdir;
  rmSync(root, { recursive: true, force: true });
});

describe('the empty NDJSON file', () => {
  it("is one file per user, shared by the user's processes, so none is left behind per process", async () => {
    const first = (await fresh())();
    const second = (await fresh())();
    expect(first).toBe(join(root, `log-endpoints-${uid}`, 'empty.ndjson'));
    expect(second).toBe(first);
    expect(readFileSync(first, 'utf8')).toBe('');
    expect(lstatSync(dirname(first)).mode & 0o777).toBe(0o700);
    expect(readdirSync(root)).toEqual([`log-endpoints-${uid}`]);
  });

  it('is empty again if the shared file was written to', async () => {
    const file = (await fresh())();
    await import('node:fs').then(({ writeFileSync }) => writeFileSync(file, '{"a":1}\n'));
    expect((await fresh())()).toBe(file);
    expect(readFileSync(file, 'utf8')).toBe('');
  });

  it.each([
    ['a folder others may write', () => chmodSync(mkdirOwn(), 0o777)],
    ['a folder others may read', () => chmodSync(mkdirOwn(), 0o755)],
    ['a link to another folder', () => symlinkSync(mkdtempSync(join(root, 'elsewhere-')), join(root, `log-endpoints-${uid}`))],
  ])('is made in a folder of its own where the shared name is %s, removed when the process exits', async (_, place) => {
    place();
    const before = process.listeners('exit');
    const file = (await fresh())();
    expect(dirname(dirname(file))).toBe(root);
    expect(dirname(file)).not.toBe(join(root, `log-endpoints-${uid}`));
    expect(readFileSync(file, 'utf8')).toBe('');
    expect(existsSync(join(root, `log-endpoints-${uid}`, 'empty.ndjson'))).toBe(false);
    const added = process.listeners('exit').filter((listener) => !before.includes(listener));
    expect(added).toHaveLength(1);
    process.off('exit', added[0]!);
    added[0]!(0);
    expect(existsSync(dirname(file))).toBe(false);
  });
});

/** The shared folder's name, made by this user with the usual mode. */
function mkdirOwn(): string {
  const dir = join(root, `log-endpoints-${uid}`);
  mkdirSync(dir);
  return dir;
}
