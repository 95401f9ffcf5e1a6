import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { copyByteRange } from '../src/files/copy-byte-range';
import { tempDir } from './support/log-files';

// The one byte-range copy (src/files/copy-byte-range.ts): compaction's inputs read from a copy
// (docs/cli.md, "Compacting logs exactly once") and the queries' range copies both go through it.

const tmp = tempDir('le-copy-range-');
afterAll(() => tmp.cleanup());

describe('copyByteRange', () => {
  const source = tmp.path('source.ndjson');
  writeFileSync(source, '0123456789');

  it('copies bytes [start, end) over the target, and appends after it with append', async () => {
    const target = tmp.path('copy.ndjson');
    writeFileSync(target, 'old content');
    await copyByteRange(source, 2, 6, target);
    expect(readFileSync(target, 'utf8')).toBe('2345');
    await copyByteRange(source, 6, 10, target, true);
    expect(readFileSync(target, 'utf8')).toBe('23456789');
  });

  it('an empty range leaves an empty target (or what an appended one held), where a read stream would refuse it', async () => {
    const target = tmp.path('empty.ndjson');
    writeFileSync(target, 'held');
    await copyByteRange(source, 4, 4, target, true);
    expect(readFileSync(target, 'utf8')).toBe('held');
    await copyByteRange(source, 4, 4, target);
    expect(readFileSync(target, 'utf8')).toBe('');
  });
});
