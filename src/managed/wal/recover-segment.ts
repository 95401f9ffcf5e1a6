import { open, type FileHandle } from 'node:fs/promises';
import { basename } from 'node:path';
import { crc32, parseMarkerLine } from '../../wal-format/commit-marker';
import type { Quarantine } from './quarantine';

/** Bytes of a segment that failed their checksum, set aside in the quarantine. */
export interface DamagedBytes {
  /** Offset of the first damaged byte in the segment. */
  offset: number;
  bytes: number;
  /** The quarantine file that holds them. */
  file: string;
}

/** What recovery or verification found in one segment. */
export interface SegmentRecovery {
  /** Bytes kept: the end of the last valid group. */
  committedBytes: number;
  /** Bytes cut off after it (the newest segment only: a write in progress at a crash). */
  cutBytes: number;
  /** Stretches before valid groups (or at the end of a segment older than the newest) that failed their checksum. */
  damaged: DamagedBytes[];
}

const CHUNK = 1024 * 1024;
const SPACE = 0x20;
const NEWLINE = 0x0a;

/**
 * Checks a segment group by group against the marker that closes each group (its byte count and
 * CRC-32; groups numbered upwards) and keeps every group that verifies, wherever it is:
 *
 * - after the last valid group of the newest segment (`newest`) are the bytes of a write that
 *   was in progress at a crash, never acknowledged: they are cut off (truncated);
 * - any other stretch that does not verify (bytes changed on disk, zeros over a group, or the end
 *   of a segment that was complete when a later one began) is damage: its bytes go to the
 *   quarantine, and in the segment they are overwritten with spaces ending in a newline, a blank
 *   line every reader skips. Every other byte keeps its offset (the positions the ClickHouse
 *   shipper and the compaction records name), and a stretch already blank is not reported again.
 *
 * A group is found from its marker: its bytes are the `bytes` just before it, so the groups after
 * a damaged one are found again whatever the damage did to the lines between them. Groups are
 * numbered 1, 2, 3, ...: one right after another is numbered next, one after damage skips the
 * number of at least one lost group.
 *
 * @example
 * const { committedBytes, cutBytes, damaged } = await recoverSegment(path, { newest: true, quarantine });
 */
export async function recoverSegment(path: string, options: { newest: boolean; quarantine: Quarantine }): Promise<SegmentRecovery> {
  const handle = await open(path, 'r+');
  try {
    const { size } = await handle.stat();
    const { gaps, validEnd } = await validGroups(handle, size);
    let cutBytes = 0;
    if (validEnd < size) {
      if (options.newest) cutBytes = size - validEnd;
      else gaps.push([validEnd, size]);
    }
    const damaged: DamagedBytes[] = [];
    for (const [start, end] of gaps) {
      const bytes = await readRange(handle, start, end);
      if (isBlank(bytes)) continue;
      const file = await options.quarantine.put(
        {
          reason: 'damaged',
          segment: basename(path),
          offsets: [start],
          bytes: bytes.length,
          lines: Math.max(1, countNewlines(bytes)),
          message: `${bytes.length} bytes at offset ${start} of ${basename(path)} do not match their group's checksum (changed on disk); the groups around them are intact and kept.`,
        },
        bytes,
      );
      await handle.write(blankLine(bytes.length), 0, bytes.length, start);
      damaged.push({ offset: start, bytes: bytes.length, file });
    }
    if (cutBytes > 0) await handle.truncate(validEnd);
    if (cutBytes > 0 || damaged.length) await handle.sync();
    return { committedBytes: cutBytes > 0 ? validEnd : size, cutBytes, damaged };
  } finally {
    await handle.close();
  }
}

/** The first bytes of every marker line (see commit-marker.ts): markers are found by searching for them. */
const MARKER_START = Buffer.from('{"_wal_commit":', 'latin1');

/**
 * One pass over the file: the end of the last valid group, and the stretches before valid groups
 * that are not part of any (damage, or blanks left by an earlier recovery). Marker lines are found
 * by a native search for their first bytes at a line start, and each group's CRC-32 is computed
 * over its bytes at once (per group and chunk, not per line): recovery reads about as fast as the disk.
 */
async function validGroups(handle: FileHandle, size: number): Promise<{ validEnd: number; gaps: Array<[number, number]> }> {
  const gaps: Array<[number, number]> = [];
  let validEnd = 0;
  let lastSeq = 0;
  // CRC-32 of the bytes since validEnd: what a group starting there has.
  let crc = 0;
  let carry: Buffer = Buffer.alloc(0);
  let carryStart = 0;
  const chunk = Buffer.alloc(CHUNK);
  for (let position = 0; position < size; ) {
    const { bytesRead } = await handle.read(chunk, 0, Math.min(CHUNK, size - position), position);
    if (bytesRead === 0) break;
    const data = carry.length ? Buffer.concat([carry, chunk.subarray(0, bytesRead)]) : chunk.subarray(0, bytesRead);
    const dataStart = carry.length ? carryStart : position;
    position += bytesRead;
    // Whole lines only; the rest waits for the next chunk.
    const linesEnd = data.lastIndexOf(NEWLINE) + 1;
    let done = 0;
    for (let at = data.indexOf(MARKER_START, 0); at >= 0 && at < linesEnd; at = data.indexOf(MARKER_START, at + 1)) {
      if (at > 0 && data[at - 1] !== NEWLINE) continue;
      const nl = data.indexOf(NEWLINE, at);
      const line = data.subarray(at, nl);
      const marker = parseMarkerLine(line.toString('latin1'));
      if (!marker) continue;
      crc = crc32(data.subarray(done, at), crc);
      done = at;
      const offset = dataStart + at;
      const start = offset - marker.bytes;
      // The usual case: the group runs from the end of the previous one, numbered next.
      let valid = start === validEnd && marker.seq === lastSeq + 1 && marker.crc32 === crc;
      // After damage: the group is the `bytes` before its marker, read again from the file,
      // and numbered past at least one lost group.
      if (!valid && start > validEnd && marker.seq > lastSeq + 1) valid = crc32(await readRange(handle, start, offset)) === marker.crc32;
      if (valid) {
        if (start > validEnd) gaps.push([validEnd, start]);
        validEnd = offset + line.length + 1;
        lastSeq = marker.seq;
        crc = 0;
        done = nl + 1;
      }
    }
    crc = crc32(data.subarray(done, linesEnd), crc);
    // Copied: `chunk` is reused by the next read.
    carry = Buffer.from(data.subarray(linesEnd));
    carryStart = dataStart + linesEnd;
  }
  return { validEnd, gaps };
}

async function readRange(handle: FileHandle, start: number, end: number): Promise<Buffer> {
  const buffer = Buffer.alloc(end - start);
  let done = 0;
  while (done < buffer.length) {
    const { bytesRead } = await handle.read(buffer, done, buffer.length - done, start + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return buffer.subarray(0, done);
}

/** Spaces, then a newline: what damaged bytes become in their segment. */
function blankLine(length: number): Buffer {
  const line = Buffer.alloc(length, SPACE);
  line[length - 1] = NEWLINE;
  return line;
}

function isBlank(bytes: Uint8Array): boolean {
  for (const b of bytes) if (b !== SPACE && b !== NEWLINE) return false;
  return true;
}

function countNewlines(bytes: Uint8Array): number {
  let n = 0;
  for (const b of bytes) if (b === NEWLINE) n++;
  return n;
}
