import { atRetryCeiling } from '../duckdb/compaction-duckdb';
import { memoryLimitBytes, type DatabaseSettings } from '../duckdb/open-database';
import { MAX_LINE_BYTES } from '../files/long-line-copies';

const MIB = 1024 * 1024;

/** What a compaction of one event needs besides the event: DuckDB's reader, writer and the run's own state. */
const FIXED_BYTES = 48 * MIB;

/**
 * The DuckDB memory one byte of the longest event takes at most while it is compacted: its line
 * in the NDJSON reader's buffers (which grow in powers of two), its `metadata` parsed for the typed
 * columns, and its copies in the Parquet writer.
 */
const BYTES_PER_EVENT_BYTE = 24;

/** Never less than this, whatever the budget: an ordinary event is a few KB. */
const FLOOR_BYTES = 256 * 1024;

/**
 * The longest event (bytes as stored, one JSON line) managed storage takes: the longest that its
 * compaction, at the most memory a retry gives it (`atRetryCeiling`), is sure to compact, at most
 * 16 MiB (the longest line DuckDB's NDJSON reader is sure to take). A longer one would be
 * acknowledged and then fail every compaction of its source, at every try, and hold up every later
 * event of it. Measured on one event, at a ceiling of 160MB (the default budget's: 80MB retried at
 * twice): a string of 5 MiB compacted, 6 MiB did not; 400,000 keys (6.3 MiB) did; at 80MB, 1.75 MiB
 * of string and 100,000 keys (1.4 MiB) did, 125,000 keys (1.8 MiB) did not (docs/performance.md,
 * "Compaction's memory for wide events"). So: (ceiling - 48 MiB) / 24, which gives 4.36 MiB at
 * 160MB (the default budget's) and 1.18 MiB at 80MB (a 256 MiB budget's), each checked there as
 * one string and as keys; a larger `--memory-limit` takes longer events.
 *
 * @example
 * largestEventBytes({ threads: 1, memoryLimit: '80MB' }); // 4569514 (160MB at the retry)
 */
export function largestEventBytes(settings: DatabaseSettings): number {
  const ceiling = atRetryCeiling(settings).memoryLimit;
  const bytes = ceiling === undefined ? null : memoryLimitBytes(ceiling);
  if (bytes === null) return MAX_LINE_BYTES;
  return Math.max(FLOOR_BYTES, Math.min(MAX_LINE_BYTES, Math.floor((bytes - FIXED_BYTES) / BYTES_PER_EVENT_BYTE)));
}
