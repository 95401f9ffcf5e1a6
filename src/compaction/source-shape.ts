import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import type { SourceDescriptor } from '../sources/source-descriptor';

/** Lines examined per file and in all, to tell which log a set of files holds. */
const LINES_PER_FILE = 200;
const LINES_IN_ALL = 2000;

/** How many sampled events exist, look like `source`, and look like each other source (by name). */
export interface ShapeVerdict {
  events: number;
  matching: number;
  other: number;
  /** The other sources some sampled events look like, by how many, most first. */
  others: Array<{ source: SourceDescriptor; events: number }>;
}

/**
 * Samples events from the start of each range and counts which look like `source` and which like
 * one of `others` (each descriptor's `looksLike`: the gateway log's top-level `project` or
 * `metadata.request`, the edge-function log's `metadata.project_ref`...). zstd files are not
 * sampled (Node 20 has no zstd decoder); a sample of none never refuses anything.
 */
export async function looksLikeSource(
  source: SourceDescriptor,
  others: readonly SourceDescriptor[],
  ranges: ReadonlyArray<{ path: string; start: number; end: number; compressed: boolean }>,
): Promise<ShapeVerdict> {
  const verdict: ShapeVerdict = { events: 0, matching: 0, other: 0, others: [] };
  const own = source.looksLike;
  const tests = others.filter((d) => d !== source && d.looksLike);
  const counts = new Map<SourceDescriptor, number>();
  let total = 0;
  for (const range of ranges) {
    if (total >= LINES_IN_ALL) break;
    if (/\.zst$/i.test(range.path) || range.end <= range.start) continue;
    const raw = createReadStream(range.path, range.compressed ? {} : { start: range.start, end: range.end - 1 });
    const stream = /\.gz$/i.test(range.path) ? raw.pipe(createGunzip()) : raw;
    const lines = createInterface({ input: stream, crlfDelay: Infinity });
    let n = 0;
    try {
      for await (const line of lines) {
        if (++n > LINES_PER_FILE || ++total > LINES_IN_ALL) break;
        const event = parseObject(line);
        if (!event) continue;
        verdict.events++;
        // Each source's own test (its descriptor's `looksLike`): this one's, or another's.
        if (own?.(event)) verdict.matching++;
        else {
          const like = tests.find((d) => d.looksLike!(event));
          if (like) {
            verdict.other++;
            counts.set(like, (counts.get(like) ?? 0) + 1);
          }
        }
      }
    } catch {
      // A file that cannot be sampled says nothing about the others.
    } finally {
      lines.close();
      raw.destroy();
    }
  }
  verdict.others = [...counts].map(([d, events]) => ({ source: d, events })).sort((a, b) => b.events - a.events);
  return verdict;
}

function parseObject(line: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(line.replace(/^\uFEFF/, ''));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
