import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { SourceDescriptor } from '../sources/source-descriptor';
import { openDatabase, type DatabaseSettings } from '../duckdb/open-database';
import { sourceRelation } from '../duckdb/source-relations';
import { eventTimestampMicros } from '../time/event-timestamp';
import type { Quarantine } from './wal/quarantine';
import { assignOffsets, eventLinesOf, type SegmentLine } from './segment-lines';

/**
 * Puts the event lines of a closed segment that no query reads (at the given offsets, or, without
 * them, those the engine reads as no event) in the quarantine, with why, so the segment can be
 * released: what compaction and shipping leave out is kept, and a segment is never pinned by a
 * line nobody can read. Returns how many lines it set aside (0: nothing to do, no file written).
 *
 * Since ingest checks each event by the rule every query reads with (docs/durability.md, "What
 * ingest accepts"), such lines come from an older version (a lone surrogate, a timestamp form
 * the SQL did not read) or from a case the rule missed.
 *
 * @example
 * await quarantineUnreadableLines({ source: edgeLogs, path, quarantine, duckdb: { threads: 1 } });
 */
export async function quarantineUnreadableLines(options: {
  source: SourceDescriptor;
  path: string;
  quarantine: Quarantine;
  /** The offsets of the lines left out, when the caller knows them (shipping does). */
  offsets?: readonly number[];
  duckdb?: DatabaseSettings;
}): Promise<number> {
  const bytes = await readFile(options.path);
  const lines = eventLinesOf(bytes);
  const offsets = new Set(options.offsets ?? (await unreadOffsets(options.source, options.path, lines, options.duckdb)));
  const unread = lines.filter((l) => offsets.has(l.offset));
  if (!unread.length) return 0;
  const texts = unread.map((l) => lineAt(bytes, l.offset));
  const kinds = new Map<string, number>();
  for (const text of texts) {
    const kind = kindOf(text);
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  const why = [...kinds].map(([kind, n]) => `${n} ${kind}`).join(', ');
  const data = Buffer.concat(texts.flatMap((t) => [t, Buffer.from('\n')]));
  await options.quarantine.put(
    {
      reason: 'unreadable',
      segment: basename(options.path),
      offsets: unread.map((l) => l.offset),
      bytes: data.length,
      lines: unread.length,
      message: `${unread.length} line${unread.length === 1 ? '' : 's'} of ${basename(options.path)} no query can read (${why}): set aside so the segment could be compacted and released.`,
    },
    data,
  );
  return unread.length;
}

/** The offsets of the lines the engine reads as no event: not JSON to it, or no usable timestamp. */
async function unreadOffsets(source: SourceDescriptor, path: string, lines: readonly SegmentLine[], duckdb: DatabaseSettings = {}): Promise<number[]> {
  // One thread: rows come back in line order.
  const { connection, close } = await openDatabase({ ...duckdb, threads: 1 });
  try {
    const relation = sourceRelation(source, { ndjson: [path], parquet: [], parquetTypes: new Map() });
    const rows = (await connection.runAndReadAll(`SELECT id, timestamp IS NULL AS unusable FROM (${relation})`)).getRows();
    const { offsets } = assignOffsets(
      lines,
      rows.map(([id]) => (id === null ? null : String(id))),
    );
    const read = new Set(offsets.filter((_, i) => rows[i]![1] === false));
    return lines.filter((l) => !read.has(l.offset)).map((l) => l.offset);
  } finally {
    await close();
  }
}

function lineAt(bytes: Buffer, offset: number): Buffer {
  const end = bytes.indexOf(0x0a, offset);
  return bytes.subarray(offset, end < 0 ? bytes.length : end);
}

/** Why a line is not an event, as people would say it. */
function kindOf(line: Buffer): string {
  let event: unknown;
  try {
    event = JSON.parse(line.toString('utf8'));
  } catch {
    return 'not JSON';
  }
  if (typeof event !== 'object' || event === null || Array.isArray(event)) return 'not a JSON object';
  if (/\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}/.test(line.toString('latin1'))) return 'with a lone surrogate';
  if (eventTimestampMicros((event as { timestamp?: unknown }).timestamp) === null) return 'without a usable timestamp';
  return 'refused by the engine';
}
