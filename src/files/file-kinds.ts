export type FileKind = 'ndjson' | 'parquet';

const NDJSON = /\.(ndjson|jsonl|json)(\.(gz|zst))?$/i;
const PARQUET = /\.parquet$/i;

/** The format of a log file follows its extension (docs/semantics.md, "Files"); null for anything else. */
export function fileKind(path: string): FileKind | null {
  if (PARQUET.test(path)) return 'parquet';
  if (NDJSON.test(path)) return 'ndjson';
  return null;
}

const DAY_PARTITION = /(?:^|[/\\])date=(\d{4}-\d{2}-\d{2})[/\\]/;

/**
 * The UTC day of a `date=YYYY-MM-DD/` partition path (the layout `compact` writes), or null.
 * Such a file holds only events of that day, so a query whose window starts later can skip it.
 */
export function partitionDay(path: string): string | null {
  return DAY_PARTITION.exec(path)?.[1] ?? null;
}
