import type { SourceName } from '../engine';
import { sourceRelation, type SourceFiles } from './source-relations';
import { sqlString } from './sql-literal';
import { PROVENANCE_KEY } from '../../storage/dataset-orphans';

/** The column Parquet files are sorted by first, so a project's rows sit in few row groups. */
const PROJECT_COLUMN: Record<SourceName, string> = { edgeLogs: 'project', functionEdgeLogs: 'project_ref' };

/**
 * Rows per row group, chosen by measurement (bench, default scale): 20k for both logs. The
 * edge-function log's columns are small, and 20k-row groups let a short window (invocation-stats
 * 1hr) skip all but one group of a project (3.7 ms instead of 6.7; 7 days: 107 ms instead of
 * 134). The gateway log went from 100k to 20k when logs.all started reading older pages in two
 * phases: the second decodes the `metadata` of the row groups that hold the page, and on one day
 * of the default data (1.4 M rows) a page one day back took 84 -> 20 ms of CPU for that, its first
 * phase 8.7 -> 3.1 ms, while usage.api-counts' URL scan took 3-9 % more CPU and the file 7 % more
 * bytes (10k-row groups: 14 ms for the page, usage 10-30 % more).
 */
export const ROW_GROUP_ROWS: Record<SourceName, number> = { edgeLogs: 20_000, functionEdgeLogs: 20_000 };

/**
 * Dictionary entries per column chunk before DuckDB falls back to plain encoding. The gateway
 * log's `request_url` has about 20k distinct values per 100k rows, past DuckDB's default: encoded
 * as a dictionary in every row group, usage.api-counts' URL search runs once per distinct URL
 * (measured: a third less CPU, for 6 % more bytes). The edge-function log keeps the default.
 */
export const DICTIONARY_ENTRIES: Partial<Record<SourceName, number>> = { edgeLogs: 100_000 };

/**
 * The one definition of the fast Parquet layout, shared by `compact` and the generator: the
 * source relation itself (timestamp as TIMESTAMP, metadata whole as JSON, the used fields flat),
 * sorted by project, newest first, then id (the same input gives the same bytes), zstd, row
 * groups of ROW_GROUP_ROWS, optionally one folder per UTC day (`date=YYYY-MM-DD/`).
 *
 * `where` picks the rows to keep: a broken NDJSON line reads as a row of NULLs.
 */
export function parquetLayoutCopy(options: {
  source: SourceName;
  /** NDJSON files to read, or the source files (NDJSON and Parquet, with the Parquet schema). */
  ndjson?: readonly string[];
  files?: SourceFiles;
  target: string;
  where: string;
  partitionByDay?: { filenamePattern: string };
  /** Text every file written carries in its key-value metadata under PROVENANCE_KEY (see dataset-orphans.ts). */
  provenance?: string;
}): string {
  const relation = sourceRelation(options.source, options.files ?? { ndjson: [...(options.ndjson ?? [])], parquet: [], parquetTypes: new Map() });
  const day = options.partitionByDay;
  return `
    COPY (
      SELECT *${day ? ", strftime(timestamp, '%Y-%m-%d') AS date" : ''}
      FROM (${relation})
      WHERE ${options.where}
      ORDER BY ${day ? 'date, ' : ''}${PROJECT_COLUMN[options.source]}, timestamp DESC, id
    ) TO ${sqlString(options.target)} (
      FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${ROW_GROUP_ROWS[options.source]}${
        DICTIONARY_ENTRIES[options.source] ? `, DICTIONARY_SIZE_LIMIT ${DICTIONARY_ENTRIES[options.source]}` : ''
      }${
        day ? `, PARTITION_BY (date), FILENAME_PATTERN ${sqlString(day.filenamePattern)}, OVERWRITE_OR_IGNORE true` : ''
      }${options.provenance === undefined ? '' : `, KV_METADATA {${PROVENANCE_KEY}: ${sqlString(options.provenance)}}`}
    )`;
}

/** Rows that hold an event: a broken line has none of these. */
export const IS_EVENT = 'id IS NOT NULL OR timestamp IS NOT NULL OR event_message IS NOT NULL OR metadata IS NOT NULL';
