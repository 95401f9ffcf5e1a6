import { VARCHAR, type DuckDBConnection } from '@duckdb/node-api';
import { fileKind, partitionDay } from './file-kinds';

export interface ListedFiles {
  ndjson: string[];
  parquet: string[];
}

/**
 * The files the globs match now, by format, each once, newest day partition first (descending
 * path order): a top-N query such as logs.all then meets the newest rows first and DuckDB's
 * dynamic top-N filter skips the older row groups. DuckDB's own `glob()` lists them, so the engine
 * reads exactly what it listed. Parquet files in a `date=YYYY-MM-DD/` partition before
 * `earliestDay` are left out.
 */
export async function listFiles(
  connection: DuckDBConnection,
  globs: readonly string[],
  earliestDay: string | null = null,
): Promise<ListedFiles> {
  const found = new Set<string>();
  for (const pattern of globs) {
    const reader = await connection.runAndReadAll('SELECT file FROM glob($pattern)', { pattern }, { pattern: VARCHAR });
    for (const [file] of reader.getRows()) found.add(String(file));
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
