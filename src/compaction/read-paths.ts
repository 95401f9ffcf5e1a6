import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { copyByteRange } from '../files/copy-byte-range';
import type { InputScan } from './input-scan';

/** What one run reads and where: a whole input read in place, or a copy of the byte range its record claims. */
export type ReadPaths = Map<string, InputScan>;

/**
 * Exactly the bytes each record will claim are read: a whole input is read in place when it
 * cannot be growing under the run (`readsInPlace`); a file still being appended, or one part of
 * which is already in the dataset, is read from a copy of that byte range in the staging folder.
 *
 * @example
 * const readPaths = await readPathsOf(work, staging, false); // path DuckDB reads -> the scan it stands for
 */
export async function readPathsOf(work: InputScan[], staging: string, sealed: boolean): Promise<ReadPaths> {
  // "Now" on the filesystem's own clock (the staging folder was just made), never this host's:
  // the inputs' mtimes are stamped by that same clock, whoever wrote them.
  const quietBeforeMs = (await stat(staging)).mtimeMs - QUIET_MS;
  const readPaths: ReadPaths = new Map();
  for (const [i, scan] of work.entries()) {
    if (readsInPlace(scan, sealed ? Infinity : quietBeforeMs)) {
      readPaths.set(scan.file.path, scan);
    } else {
      const copy = join(staging, 'inputs', `${i}.ndjson`);
      await copyByteRange(scan.file.path, scan.covered, scan.end, copy);
      readPaths.set(copy, scan);
    }
  }
  return readPaths;
}

/** How long an input's mtime must lie behind the run's start before it counts as no longer written. */
const QUIET_MS = 2000;

/**
 * Whether compaction reads an input where it is (docs/cli.md, "Compacting logs exactly once"):
 * whole, and compressed, or steady (unchanged from its listing to the end of its scan) and last
 * written before `quietBeforeMs` on the filesystem's clock (a live log appended every second is
 * steady for the instant of a scan, then grows while DuckDB reads it, and the run would commit
 * nothing). Sealed inputs pass `Infinity`: nobody writes them again.
 *
 * @example
 * readsInPlace(await scanInput(file, index, listed, hashes), stagingMtimeMs - 2000); // false for a file appended since its listing
 */
export function readsInPlace(scan: Pick<InputScan, 'covered' | 'end' | 'file' | 'compressed' | 'steady'>, quietBeforeMs: number): boolean {
  const whole = scan.covered === 0 && scan.end === scan.file.size;
  return whole && (scan.compressed || (scan.steady && scan.file.mtimeMs <= quietBeforeMs));
}
