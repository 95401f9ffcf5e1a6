import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let path: string | null = null;

/**
 * An empty NDJSON file, made once per process and removed when it exits. DuckDB 1.5 reads the
 * first line of a file that starts with a UTF-8 byte order mark as broken when that file is the
 * only one in `read_json_objects`; with a second file in the list it strips the mark. So every
 * NDJSON read lists this file too: it adds no row and costs one empty read.
 */
export function emptyNdjsonFile(): string {
  if (path !== null) return path;
  const dir = mkdtempSync(join(tmpdir(), 'log-endpoints-'));
  const file = join(dir, 'empty.ndjson');
  writeFileSync(file, '');
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return (path = file);
}
