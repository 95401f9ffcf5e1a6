import { open } from 'node:fs/promises';
import { mayBeMarker, parseMarkerLine } from '../wal-format/commit-marker';
import { EngineError } from '../errors';

/** An event line of a write-ahead segment: where it starts, and the `id` it carries. */
export interface SegmentLine {
  /** Byte offset of the line's first byte in the segment: the event's position, never reused. */
  offset: number;
  /** The event's `id` (ingest gives every event one), or null when the line holds none. */
  id: string | null;
}

/** `{"id":"..."` at the start of a line, as ingest writes every event: read without parsing the rest. */
const LEADING_ID = /^\{"id":("(?:[^"\\]|\\.)*")/;

/**
 * The event lines of a segment's first `committedBytes` bytes, in file order: commit markers and
 * blank lines are not events. A closed segment never changes, so the offsets are the same on every
 * read, in this process or after a restart.
 *
 * @example
 * const lines = await segmentEventLines('data/edgeLogs/wal/00000000000000000003.ndjson', 4096);
 * // [{ offset: 0, id: 'e1' }, { offset: 180, id: 'e2' }, ...]
 */
export async function segmentEventLines(path: string, committedBytes: number): Promise<SegmentLine[]> {
  const buffer = Buffer.alloc(committedBytes);
  const handle = await open(path, 'r');
  try {
    let done = 0;
    while (done < committedBytes) {
      const { bytesRead } = await handle.read(buffer, done, committedBytes - done, done);
      if (bytesRead === 0) throw new EngineError('storage_failed', `${path} holds ${done} bytes, fewer than the ${committedBytes} committed.`);
      done += bytesRead;
    }
  } finally {
    await handle.close();
  }
  return eventLinesOf(buffer);
}

/** The event lines of segment bytes (see `segmentEventLines`). */
export function eventLinesOf(bytes: Buffer): SegmentLine[] {
  const lines: SegmentLine[] = [];
  for (let start = 0; start < bytes.length; ) {
    let end = bytes.indexOf(0x0a, start);
    if (end < 0) end = bytes.length;
    const line = bytes.subarray(start, end);
    const blank = line.every((b) => b === 0x20 || b === 0x09 || b === 0x0d);
    const marker = mayBeMarker(line) && parseMarkerLine(line.toString('latin1')) !== null;
    if (!blank && !marker) lines.push({ offset: start, id: idOf(line.toString('utf8')) });
    start = end + 1;
  }
  return lines;
}

function idOf(text: string): string | null {
  try {
    const leading = LEADING_ID.exec(text);
    if (leading) return JSON.parse(leading[1]!) as string;
    const event = JSON.parse(text) as { id?: unknown } | null;
    return typeof event?.id === 'string' ? event.id : null;
  } catch {
    return null;
  }
}

/**
 * Which line each row read from a segment came from. The reader gives one row per line, in file
 * order (a line that is not JSON as a row of NULLs), so rows and lines pair up in order, and the
 * ids check it. Should the reader have left lines out, each row takes the next line with its id.
 * Either way the answer depends only on the segment's bytes, so every attempt to ship a segment
 * gives each event the same position, whether or not events share an id. Throws when the rows
 * cannot be this segment's.
 *
 * @example
 * assignOffsets([{ offset: 0, id: 'a' }, { offset: 9, id: 'b' }], ['a', 'b']); // { offsets: [0, 9], unread: 0 }
 */
export function assignOffsets(lines: readonly SegmentLine[], rowIds: ReadonlyArray<string | null>): { offsets: number[]; unread: number } {
  if (rowIds.length === lines.length) {
    rowIds.forEach((id, i) => {
      const line = lines[i]!;
      if (id !== null && line.id !== null && id !== line.id) {
        throw new EngineError('storage_failed', `Row ${i} read from the segment has the id ${JSON.stringify(id)}, its line ${JSON.stringify(line.id)}.`);
      }
    });
    return { offsets: lines.map((l) => l.offset), unread: 0 };
  }
  const offsets: number[] = [];
  let next = 0;
  for (const id of rowIds) {
    while (next < lines.length && lines[next]!.id !== id) next++;
    if (next === lines.length) throw new EngineError('storage_failed', `A row read from the segment (id ${JSON.stringify(id)}) matches none of its remaining lines.`);
    offsets.push(lines[next]!.offset);
    next++;
  }
  return { offsets, unread: lines.length - offsets.length };
}
