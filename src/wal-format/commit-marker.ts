/**
 * The line that closes a group commit in a segment:
 * `{"_wal_commit":{"seq":<group>,"bytes":<n>,"crc32":<c>}}` where `bytes` and `crc32` cover the
 * group's event lines just before it. Recovery keeps a group only when both match, so a group
 * cut short by a crash (or a marker without its events) disappears whole.
 */
export interface CommitMarker {
  /** The group's number within its segment: 1, 2, 3, ... */
  seq: number;
  /** Byte length of the group's event lines (each ending with `\n`), marker excluded. */
  bytes: number;
  /** CRC-32 (zlib's) of those bytes. */
  crc32: number;
}

/** The top-level field no event may carry: it marks commit lines. */
export const MARKER_FIELD = '_wal_commit';

const PREFIX = `{"${MARKER_FIELD}":`;
const MARKER = /^\{"_wal_commit":\{"seq":(\d{1,15}),"bytes":(\d{1,15}),"crc32":(\d{1,10})\}\}$/;

/** The marker line, `\n` included. */
export function markerLine(marker: CommitMarker): string {
  return `${PREFIX}{"seq":${marker.seq},"bytes":${marker.bytes},"crc32":${marker.crc32}}}\n`;
}

/** The marker a line (without its `\n`) holds, or null when it is not exactly a marker line. */
export function parseMarkerLine(line: string): CommitMarker | null {
  if (!line.startsWith(PREFIX)) return null;
  const m = MARKER.exec(line);
  return m ? { seq: Number(m[1]), bytes: Number(m[2]), crc32: Number(m[3]) } : null;
}

/** Whether a line (bytes, without its `\n`) may be a marker: cheap test before decoding it. */
export function mayBeMarker(line: Uint8Array): boolean {
  if (line.length < PREFIX.length) return false;
  for (let i = 0; i < PREFIX.length; i++) if (line[i] !== PREFIX.charCodeAt(i)) return false;
  return true;
}

/** CRC-32 as `zlib.crc32` computes it (src/util/crc32.ts). */
export { crc32 } from '../util/crc32';
