import { open } from 'node:fs/promises';
import { crc32, mayBeMarker, parseMarkerLine } from './commit-marker';

/** What recovery found in one segment. */
export interface SegmentRecovery {
  /** Bytes kept: the end of the last valid group. */
  committedBytes: number;
  /** Bytes cut off after it (a torn or partial group, or garbage). */
  cutBytes: number;
}

const CHUNK = 1024 * 1024;
/** A marker line is shorter than this; a tail check reads no more. */
const TAIL = 128;

/**
 * Recovers a segment at open: validates it group by group (each group's event bytes against its
 * marker's `bytes` and `crc32`, markers numbered 1, 2, 3, ...) and truncates the file right after
 * the last valid marker, then fsyncs it. A group whose marker is missing, cut short, or does not
 * match its bytes disappears whole: a request that was not acknowledged leaves nothing behind.
 *
 * With `full: false` (segments closed before a later one was started, hence fully fsynced) only
 * the tail is checked: when the file ends with a marker line it is kept as it is, otherwise it is
 * validated in full like the newest one.
 */
export async function recoverSegment(path: string, options: { full: boolean }): Promise<SegmentRecovery> {
  const handle = await open(path, 'r+');
  try {
    const { size } = await handle.stat();
    if (size === 0) return { committedBytes: 0, cutBytes: 0 };
    if (!options.full && (await endsWithMarker(handle, size))) return { committedBytes: size, cutBytes: 0 };
    const committedBytes = await lastValidEnd(handle, size);
    if (committedBytes < size) {
      await handle.truncate(committedBytes);
      await handle.sync();
    }
    return { committedBytes, cutBytes: size - committedBytes };
  } finally {
    await handle.close();
  }
}

async function endsWithMarker(handle: import('node:fs/promises').FileHandle, size: number): Promise<boolean> {
  const length = Math.min(TAIL, size);
  const buffer = Buffer.alloc(length);
  await handle.read(buffer, 0, length, size - length);
  if (buffer[length - 1] !== 0x0a) return false;
  const start = buffer.lastIndexOf(0x0a, length - 2) + 1;
  if (start === 0 && length < size) return false;
  return parseMarkerLine(buffer.subarray(start, length - 1).toString('latin1')) !== null;
}

/** Scans the whole file; returns the offset just past the last marker that validates its group. */
async function lastValidEnd(handle: import('node:fs/promises').FileHandle, size: number): Promise<number> {
  let validEnd = 0;
  let groupStart = 0;
  let crc = 0;
  let expectedSeq = 1;
  // Bytes of the current, not yet complete line and the file offset where it starts.
  let carry: Buffer = Buffer.alloc(0);
  let carryStart = 0;
  const chunk = Buffer.alloc(CHUNK);
  for (let position = 0; position < size; ) {
    const { bytesRead } = await handle.read(chunk, 0, Math.min(CHUNK, size - position), position);
    if (bytesRead === 0) break;
    const data = carry.length ? Buffer.concat([carry, chunk.subarray(0, bytesRead)]) : chunk.subarray(0, bytesRead);
    const dataStart = carry.length ? carryStart : position;
    position += bytesRead;
    let lineStart = 0;
    for (let nl = data.indexOf(0x0a); nl >= 0; nl = data.indexOf(0x0a, lineStart)) {
      const line = data.subarray(lineStart, nl);
      const offset = dataStart + lineStart;
      const marker = mayBeMarker(line) ? parseMarkerLine(line.toString('latin1')) : null;
      if (marker) {
        if (marker.seq !== expectedSeq || marker.bytes !== offset - groupStart || marker.crc32 !== crc) return validEnd;
        validEnd = offset + line.length + 1;
        groupStart = validEnd;
        crc = 0;
        expectedSeq++;
      } else {
        crc = crc32(data.subarray(lineStart, nl + 1), crc);
      }
      lineStart = nl + 1;
    }
    // Copied: `chunk` is reused by the next read.
    carry = Buffer.from(data.subarray(lineStart));
    carryStart = dataStart + lineStart;
  }
  return validEnd;
}
