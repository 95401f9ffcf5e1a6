import { MEMORY_RETRY_FACTOR } from './memory-retry';
import { memoryLimitBytes, type DatabaseSettings } from './open-database';

/**
 * The DuckDB of compaction and of the work beside it (compact's clean-up of orphans, check --repair,
 * managed storage opened without settings) where no memory budget gives it a share: one thread and
 * 256MB. `createEndpoints` gives compaction its share of the process's budget instead
 * (memory-budget.ts, docs/operations.md, "Memory"). A run's sort spills to disk
 * past it (staged-rows.ts); a run that still runs out of memory (a few events of hundreds of
 * thousands of keys) is retried with twice the limit (memory-retry.ts). At 128MB, sorted runs of
 * 800,000 gateway events ran out of memory in DuckDB's Parquet writer (its dictionaries), which
 * does not spill; 512MB, the default before, took a third more peak memory (docs/performance.md).
 *
 * @example
 * createEndpoints({ storage: { dataDir: './data', compactionDuckdb: DEFAULT_COMPACTION_DUCKDB } }); // the same as leaving it out
 */
export const DEFAULT_COMPACTION_DUCKDB = { threads: 1, memoryLimit: '256MB' } as const satisfies DatabaseSettings;

/**
 * The settings at the most a retry gives them (`MEMORY_RETRY_FACTOR` times the limit): for work
 * that runs once with no retry (check --repair), so it never has less than a retried compaction.
 *
 * @example
 * atRetryCeiling(DEFAULT_COMPACTION_DUCKDB); // { threads: 1, memoryLimit: '512MB' }
 */
export function atRetryCeiling(settings: DatabaseSettings): DatabaseSettings {
  const bytes = settings.memoryLimit === undefined ? null : memoryLimitBytes(settings.memoryLimit);
  return bytes === null ? settings : { ...settings, memoryLimit: `${Math.ceil((bytes * MEMORY_RETRY_FACTOR) / 1e6)}MB` };
}
