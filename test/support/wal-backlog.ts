import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32, markerLine } from '../../src/wal-format/commit-marker';
import { segmentFileName } from '../../src/managed/wal/segment-name';

/**
 * Writes a backlog straight into a write-ahead log folder, as a server that acknowledged it and
 * died before compacting it leaves it: segments of about `segmentBytes`, each group of lines
 * followed by its commit marker (byte count and CRC-32). Far faster than ingesting it: no fsync
 * per request. Returns the ids, in order, and how many events each segment holds (by file name).
 */
export function writeBacklog(
  walDir: string,
  options: { events: number; segmentBytes: number; firstSeq?: number; event: (i: number) => Record<string, unknown> },
): { ids: string[]; events: Map<string, number> } {
  mkdirSync(walDir, { recursive: true });
  const ids: string[] = [];
  const events = new Map<string, number>();
  let inSegment = 0;
  let seq = options.firstSeq ?? 1;
  let segment: Buffer[] = [];
  let bytes = 0;
  let groups = 0;
  const flush = () => {
    if (!segment.length) return;
    events.set(segmentFileName(seq), inSegment);
    inSegment = 0;
    writeFileSync(join(walDir, segmentFileName(seq++)), Buffer.concat(segment));
    segment = [];
    bytes = 0;
    groups = 0;
  };
  for (let i = 0; i < options.events; ) {
    const lines: string[] = [];
    for (let k = 0; k < 500 && i < options.events; k++, i++) {
      const event = options.event(i);
      ids.push(String(event.id));
      inSegment++;
      lines.push(JSON.stringify(event));
    }
    const group = Buffer.from(`${lines.join('\n')}\n`);
    const marker = Buffer.from(markerLine({ seq: ++groups, bytes: group.length, crc32: crc32(group) }), 'latin1');
    segment.push(group, marker);
    bytes += group.length + marker.length;
    if (bytes >= options.segmentBytes) flush();
  }
  flush();
  return { ids, events };
}
