import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { tmpdirPerTest } from './support/tmpdir-per-test';

// The empty file every NDJSON read lists beside its own files (docs/semantics.md, "Files"), made
// here in a temporary folder given by TMPDIR, which `os.tmpdir()` reads at each call.

const tmp = tmpdirPerTest('empty-ndjson-test-');
const uid = process.getuid!();

/** The module as a new process would load it: its file not made yet. */
async function fresh(): Promise<() => string> {
  vi.resetModules();
  return (await import('../src/duckdb/empty-ndjson-file')).emptyNdjsonFile;
}

describe('the empty NDJSON file', () => {
  it("is one file per user, shared by the user's processes, so none is left behind per process", async () => {
    const first = (await fresh())();
    const second = (await fresh())();
    expect(first).toBe(join(tmp(), `log-endpoints-${uid}`, 'empty.ndjson'));
    expect(second).toBe(first);
    expect(readFileSync(first, 'utf8')).toBe('');
    expect(lstatSync(dirname(first)).mode & 0o777).toBe(0o700);
    expect(readdirSync(tmp())).toEqual([`log-endpoints-${uid}`]);
  });

  it('is made again when a cleaner of the temporary folder removed it', async () => {
    const emptyNdjsonFile = await fresh();
    const file = emptyNdjsonFile();
    rmSync(dirname(file), { recursive: true });
    expect(emptyNdjsonFile()).toBe(file);
    expect(readFileSync(file, 'utf8')).toBe('');
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
    ['a link to another folder', () => symlinkSync(mkdtempSync(join(tmp(), 'elsewhere-')), join(tmp(), `log-endpoints-${uid}`))],
  ])('is made in a folder of its own where the shared name is %s, removed when the process exits', async (_, place) => {
    place();
    const before = process.listeners('exit');
    const file = (await fresh())();
    expect(dirname(dirname(file))).toBe(tmp());
    expect(dirname(file)).not.toBe(join(tmp(), `log-endpoints-${uid}`));
    expect(readFileSync(file, 'utf8')).toBe('');
    expect(existsSync(join(tmp(), `log-endpoints-${uid}`, 'empty.ndjson'))).toBe(false);
    const added = process.listeners('exit').filter((listener) => !before.includes(listener));
    expect(added).toHaveLength(1);
    process.off('exit', added[0]!);
    added[0]!(0);
    expect(existsSync(dirname(file))).toBe(false);
  });
});

/** The shared folder's name, made by this user with the usual mode. */
function mkdirOwn(): string {
  const dir = join(tmp(), `log-endpoints-${uid}`);
  mkdirSync(dir);
  return dir;
}
