import { join } from 'node:path';
import type { SourceName } from '../sources/source-descriptor';
import { statOrNull } from '../files/list-glob';
import type { ExtraInputs, FileRange } from '../files/source-reader';
import type { Wal } from './wal/wal';
import type { MemoryTables } from './memory-tables';
import { segmentFileName } from './wal/segment-name';

/** The compacted dataset of one source of managed storage. */
export function datasetDir(dataDir: string, source: SourceName): string {
  return join(dataDir, source, 'parquet');
}

/**
 * What a query of one source reads from managed storage: its dataset (through the dataset's log)
 * and every write-ahead segment up to the bytes that are committed (fsynced and acknowledged), so
 * a group of events still being written is never read and an acknowledged one always is. The
 * source reader leaves out what the dataset already holds, so a segment compacted meanwhile is
 * read once.
 */
export function managedInputs(dataDir: string, source: SourceName, wal: Pick<Wal, 'snapshot' | 'dir' | 'deferred'>, memory?: MemoryTables): ExtraInputs {
  return {
    datasets: () => [datasetDir(dataDir, source)],
    view: () => {
      // Taken first: a segment is read from memory or from its file by this view, whatever happens next.
      const held = memory?.view(source);
      // A backlog left by the previous process and recovered in the background is not parsed by
      // every query: until compaction commits it, it is left out and named (docs/durability.md).
      const recovering: FileRange[] = [];
      const deferred = new Set<number>();
      for (const segment of wal.deferred()) {
        deferred.add(segment.seq);
        const stats = statOrNull(segment.path);
        if (!stats) continue;
        recovering.push({ file: { path: segment.path, kind: 'ndjson', size: stats.size, mtimeMs: stats.mtimeMs, ino: stats.ino }, start: 0, end: stats.size });
      }
      const ranges: FileRange[] = [];
      const segments = wal.snapshot();
      const present = new Set(segments.map((s) => s.seq));
      for (const segment of segments) {
        if (segment.committedBytes === 0 || held?.mirrored(segment.seq) || deferred.has(segment.seq)) continue;
        const stats = statOrNull(segment.path);
        // Released (compacted and deleted) since the snapshot: the dataset holds its events.
        if (!stats) continue;
        ranges.push({
          file: { path: segment.path, kind: 'ndjson', size: stats.size, mtimeMs: stats.mtimeMs, ino: stats.ino },
          start: 0,
          end: segment.committedBytes,
          // The active segment is read from a copy of its committed bytes, never in place.
          growing: !segment.closed,
        });
      }
      return {
        ndjson: ranges,
        recovering,
        // A segment's rows in memory are left out once the dataset holds its events: when the
        // query's dataset state records it, or once it was released (only ever after its commit),
        // since its records are forgotten a while after that while its rows may stay until older
        // queries are done: judged by the records alone, they would then be read twice.
        memory: held && ((covered) => held.relation((seq) => !present.has(seq) || covered(join(wal.dir, segmentFileName(seq))))),
      };
    },
  };
}
