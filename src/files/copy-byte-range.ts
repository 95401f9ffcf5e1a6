import { createReadStream, createWriteStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';

/**
 * Copies bytes [start, end) of a file to `target`, streamed (never the whole range in memory),
 * written over it or, with `append`, after what it holds. The one byte-range copy: range copies
 * for queries (range-copies.ts) and compaction's inputs read from a copy.
 *
 * @example
 * await copyByteRange('app.ndjson', 4096, 8192, 'staging/0.ndjson'); // 4096 bytes
 */
export async function copyByteRange(path: string, start: number, end: number, target: string, append = false): Promise<void> {
  // An empty range: a read stream's inclusive `end` cannot say "nothing" (it refuses end < start).
  if (end <= start) return append ? undefined : writeFile(target, '');
  await pipeline(createReadStream(path, { start, end: end - 1 }), createWriteStream(target, { flags: append ? 'a' : 'w' }));
}
