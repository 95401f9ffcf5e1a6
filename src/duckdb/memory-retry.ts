import { memoryLimitBytes, type DatabaseSettings } from './open-database';

/** How far past its configured memory limit one piece of background work may be retried. */
export const MEMORY_RETRY_FACTOR = 2;

/** Whether DuckDB stopped a statement for want of memory (its message says so; no code is given). */
export function isDuckDBOutOfMemory(error: unknown): boolean {
  for (let e = error as { message?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (/Out of Memory Error/i.test(String(e.message))) return true;
  }
  return false;
}

/**
 * Runs background work (a compaction run, a merge) under its DuckDB settings; when DuckDB runs out
 * of memory, runs it again at once with twice the limit (MEMORY_RETRY_FACTOR times the configured
 * one at most). Why: a small limit suits nearly every run (the sort spills to disk), but a run
 * holding a few events of hundreds of thousands of keys needs about ten times their bytes to
 * parse them, and must not fail for good (the write-ahead log would fill). Work with no memory
 * limit set, or past the ceiling, fails as it would have.
 *
 * @example
 * const result = await withMemoryRetry(DEFAULT_COMPACTION_DUCKDB, (duckdb) => compactFiles({ ...options, duckdb }));
 */
export async function withMemoryRetry<T>(settings: DatabaseSettings | undefined, work: (settings: DatabaseSettings | undefined) => Promise<T>): Promise<T> {
  const configured = settings?.memoryLimit === undefined ? null : memoryLimitBytes(settings.memoryLimit);
  if (configured === null) return work(settings);
  for (let limit = configured; ; limit *= 2) {
    try {
      return await work(limit === configured ? settings : { ...settings, memoryLimit: `${Math.ceil(limit / 1e6)}MB` });
    } catch (error) {
      if (!isDuckDBOutOfMemory(error) || limit * 2 > configured * MEMORY_RETRY_FACTOR) throw error;
    }
  }
}
