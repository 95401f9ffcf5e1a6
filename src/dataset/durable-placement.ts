import { mkdir, rename, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fsyncDir, fsyncFile } from '../util/durable-fs';
import { fileCrc32 } from '../util/crc32';

/** What a commit records of a file placed into a dataset: its size and CRC-32 (docs/damaged-data.md). */
export interface PlacedFile {
  bytes: number;
  crc32: number;
}

/**
 * Moves a run's files from its staging folder into the dataset, durably before the commit that
 * names them: each file is fsynced and its CRC-32 read while it is still staged, all of a batch
 * at once (a batch's fsyncs go to the disk together instead of one after another; under ingest
 * the write-ahead log's own fsyncs queue with them), then renamed into place; the folders the
 * renames changed, and the parents of those created for them, are fsynced once each by `flush`,
 * before the commit. A crash before `flush` leaves placed files that no commit names: orphans
 * the next run settles (dataset-orphans.ts), as before.
 *
 * @example
 * const placement = new DurablePlacement();
 * const [data] = await placement.place([{ from: staged, to: join(root, 'date=2026-11-21/part-1-0.parquet') }]);
 * await placement.flush(); // then append the commit naming the file with data.bytes and data.crc32
 */
export class DurablePlacement {
  private readonly dirs = new Set<string>();

  /** Places a batch (fsync and CRC of each file at once, then the renames); resolves each file's size and CRC-32, in order. */
  async place(moves: ReadonlyArray<{ from: string; to: string }>): Promise<PlacedFile[]> {
    const placed = await Promise.all(
      moves.map(async ({ from }) => {
        const [, crc32, stats] = await Promise.all([fsyncFile(from), fileCrc32(from), stat(from)]);
        return { bytes: stats.size, crc32 };
      }),
    );
    for (const { to } of moves) {
      const dir = dirname(to);
      if (!this.dirs.has(dir)) {
        // A folder made here exists durably once its parent is fsynced: each one made is remembered with its parent.
        const first = await mkdir(dir, { recursive: true });
        if (first !== undefined) for (let made = dir; made.length >= first.length; made = dirname(made)) this.dirs.add(dirname(made));
        this.dirs.add(dir);
      }
    }
    for (const { from, to } of moves) await rename(from, to);
    return placed;
  }

  /** Fsyncs every folder a placement changed, once each, at once. */
  async flush(): Promise<void> {
    const dirs = [...this.dirs];
    this.dirs.clear();
    await Promise.all(dirs.map((dir) => fsyncDir(dir)));
  }

  /** The folders `flush` would fsync now (tests). */
  pendingDirs(): string[] {
    return [...this.dirs].sort();
  }
}
