import { VARCHAR, type DuckDBConnection } from '@duckdb/node-api';
import { formatIsoMicros, type Micros } from '../../time/iso';
import { fileKind, partitionDay } from './file-kinds';

/** The UTC day (`YYYY-MM-DD`) of a query's earliest instant: partitions before it hold no answer. */
export function earliestDayOf(notBefore: Micros | undefined): string | null {
  return notBefore === undefined ? null : formatIsoMicros(notBefore).slice(0, 10);
}

export interface ListedFiles {
  ndjson: string[];
  parquet: string[];
}

/**
 * The files the globs match now, by format, each once, newest day partition first (descending
 * path order): a top-N query such as logs.all then meets the newest rows first and DuckDB's
 * dynamic top-N filter skips the older row groups. DuckDB's own `glob()` lists them, so the engine
 * reads exactly what it listed. Parquet files in a `date=YYYY-MM-DD/` partition before
 * `earliestDay` are left out, and so is whatever lies below the glob's fixed part in a file or
 * folder whose name starts with `.` or `_` (see `isHidden`).
 */
export async function listFiles(
  connection: DuckDBConnection,
  globs: readonly string[],
  earliestDay: string | null = null,
): Promise<ListedFiles> {
  const found = new Set<string>();
  for (const pattern of globs) {
    const reader = await connection.runAndReadAll('SELECT file FROM glob($pattern)', { pattern }, { pattern: VARCHAR });
    const prefix = staticPrefix(pattern);
    for (const [value] of reader.getRows()) {
      const file = String(value);
      if (!isHidden(file.startsWith(prefix) ? file.slice(prefix.length) : file)) found.add(file);
    }
  }
  const listed: ListedFiles = { ndjson: [], parquet: [] };
  for (const file of [...found].sort().reverse()) {
    const kind = fileKind(file);
    if (kind === 'ndjson') listed.ndjson.push(file);
    if (kind === 'parquet') {
      const day = partitionDay(file);
      if (earliestDay !== null && day !== null && day < earliestDay) continue;
      listed.parquet.push(file);
    }
  }
  return listed;
}

/** The part of a glob before its first wildcard segment (`logs/edge/` of `logs/edge/**\/*.parquet`). */
function staticPrefix(pattern: string): string {
  const wildcard = pattern.search(/[*?[{]/);
  // A path without wildcards names its file itself, hidden or not.
  if (wildcard < 0) return pattern;
  return pattern.slice(0, Math.max(pattern.lastIndexOf('/', wildcard), pattern.lastIndexOf('\\', wildcard)) + 1);
}

/**
 * Whether a matched path (below the glob's fixed prefix) goes through a name starting with `.`
 * or `_`: work in progress and bookkeeping by the Hive convention, such as the staging folder
 * and the manifests of a `compact` that is running. DuckDB's own glob would list them.
 */
function isHidden(path: string): boolean {
  return path.split(/[/\\]/).some((segment) => segment.startsWith('.') || segment.startsWith('_'));
}
