import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RangeCopies } from '../src/files/range-copies';
import type { ListedFile } from '../src/files/list-glob';

// The copies of a growing NDJSON file's unread part, made here in a temporary folder given by
// TMPDIR (which `os.tmpdir()` reads at each call).

let root: string;
let logs: string;
const savedTmpdir = process.env.TMPDIR;

beforeEach(() => {
  logs = mkdtempSync(join(tmpdir(), 'range-copies-logs-'));
  root = mkdtempSync(join(tmpdir(), 'range-copies-test-'));
  process.env.TMPDIR = root;
});

afterEach(() => {
  if (savedTmpdir === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmpdir;
  rmSync(root, { recursive: true, force: true });
  rmSync(logs, { recursive: true, force: true });
});

function listed(path: string): ListedFile {
  const { size, mtimeMs, ino } = statSync(path);
  return { path, kind: 'ndjson', size, mtimeMs, ino };
}

describe('range copies', () => {
  it('make no folder until a range is copied, so an engine never closed leaves nothing behind', () => {
    const copies = new RangeCopies();
    expect(readdirSync(root)).toEqual([]);
    copies.close();
    expect(readdirSync(root)).toEqual([]);
  });

  it('copy a range into a folder of their own, extend it as the file grows, and remove the folder on close', async () => {
    const log = join(logs, 'app.ndjson');
    writeFileSync(log, '{"a":1}\n{"a":2}\n');
    const copies = new RangeCopies();
    const first = await copies.copy({ file: listed(log), start: 8, end: 16 });
    expect(readFileSync(first, 'utf8')).toBe('{"a":2}\n');
    expect(readdirSync(root)).toEqual([dirname(first).slice(root.length + 1)]);
    appendFileSync(log, '{"a":3}\n');
    const again = await copies.copy({ file: listed(log), start: 8, end: 24 });
    expect(again).toBe(first);
    expect(readFileSync(again, 'utf8')).toBe('{"a":2}\n{"a":3}\n');
    copies.close();
    expect(readdirSync(root)).toEqual([]);
  });
});
