import { appendFileSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from './support/log-files';
import { tmpdirPerTest } from './support/tmpdir-per-test';
import { RangeCopies } from '../src/files/range-copies';
import type { ListedFile } from '../src/files/list-glob';

// The copies of a growing NDJSON file's unread part, made here in a temporary folder given by
// TMPDIR (which `os.tmpdir()` reads at each call).

const tmp = tmpdirPerTest('range-copies-test-');
// Made before any test points TMPDIR elsewhere: the logs are not in the copies' folder.
const logs = tempDir('range-copies-logs-');
afterAll(() => logs.cleanup());

/** A log of two 8-byte lines, `{"a":1}` and `{"a":2}`, named `name`. */
function twoLineLog(name: string): string {
  const log = logs.path(name);
  writeFileSync(log, '{"a":1}\n{"a":2}\n');
  return log;
}

function listed(path: string): ListedFile {
  const { size, mtimeMs, ino } = statSync(path);
  return { path, kind: 'ndjson', size, mtimeMs, ino };
}

describe('range copies', () => {
  it('make no folder until a range is copied, so an engine never closed leaves nothing behind', () => {
    const copies = new RangeCopies();
    expect(readdirSync(tmp())).toEqual([]);
    copies.close();
    expect(readdirSync(tmp())).toEqual([]);
  });

  it('copy a range into a folder of their own, extend it as the file grows, and remove the folder on close', async () => {
    const log = twoLineLog('app.ndjson');
    const copies = new RangeCopies();
    const first = await copies.copy({ file: listed(log), start: 8, end: 16 });
    expect(readFileSync(first, 'utf8')).toBe('{"a":2}\n');
    expect(readdirSync(tmp())).toEqual([dirname(first).slice(tmp().length + 1)]);
    appendFileSync(log, '{"a":3}\n');
    const again = await copies.copy({ file: listed(log), start: 8, end: 24 });
    expect(again).toBe(first);
    expect(readFileSync(again, 'utf8')).toBe('{"a":2}\n{"a":3}\n');
    copies.close();
    expect(readdirSync(tmp())).toEqual([]);
  });

  it('make their folder again when a cleaner of the temporary folder removed it', async () => {
    const log = twoLineLog('cleaned.ndjson');
    const copies = new RangeCopies();
    const first = await copies.copy({ file: listed(log), start: 0, end: 8 });
    rmSync(dirname(first), { recursive: true });
    const second = await copies.copy({ file: listed(log), start: 8, end: 16 });
    expect(readFileSync(second, 'utf8')).toBe('{"a":2}\n');
    copies.close();
  });
});
