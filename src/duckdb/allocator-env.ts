/**
 * How DuckDB's allocator (jemalloc, bundled in its Linux build, which reads its options from this
 * variable when the library loads) gives freed pages back: after 100 ms (`dirty_decay_ms:100`),
 * instead of after DuckDB's default second, and without keeping them first as "muzzy" pages,
 * which Linux still counts as resident (`muzzy_decay_ms:0`). Why: a compaction run, a Studio
 * query and the memory tables' inserts each free tens of MiB within a second of the next one
 * allocating as much, on another thread and so from another of jemalloc's arenas; held for the
 * decay they add up to the process's peak. Given back at once instead (`dirty_decay_ms:0`, the
 * setting before), every page DuckDB allocates again is faulted in again: on a machine whose page
 * faults are dear, that took 30 - 45 % of the server's CPU at 5,000 events/s, for a peak within
 * 10 MiB of the 100 ms one (docs/performance.md, "DuckDB's freed pages kept 100 ms"). It is read
 * only when DuckDB's library loads, so a program sets it before loading it: the `log-endpoints`
 * command does, first thing (src/cli.ts); a program embedding the library sets it in its
 * environment.
 *
 * @example
 * DUCKDB_ALLOCATOR_CONF; // 'dirty_decay_ms:100,muzzy_decay_ms:0'
 */
export const DUCKDB_ALLOCATOR_CONF = 'dirty_decay_ms:100,muzzy_decay_ms:0';

/** The variable DuckDB's jemalloc reads its options from. */
export const DUCKDB_ALLOCATOR_ENV = 'DUCKDB_JE_MALLOC_CONF';

/**
 * The allocator options a process should start DuckDB with: `DUCKDB_ALLOCATOR_CONF`, then what the
 * environment already gives (jemalloc reads them in order, so an operator's option wins over ours).
 *
 * @example
 * duckdbAllocatorConf({}); // 'dirty_decay_ms:100,muzzy_decay_ms:0'
 * duckdbAllocatorConf({ DUCKDB_JE_MALLOC_CONF: 'dirty_decay_ms:500' }); // 'dirty_decay_ms:100,muzzy_decay_ms:0,dirty_decay_ms:500'
 */
export function duckdbAllocatorConf(env: Readonly<Record<string, string | undefined>>): string {
  const given = env[DUCKDB_ALLOCATOR_ENV]?.trim();
  return given ? `${DUCKDB_ALLOCATOR_CONF},${given}` : DUCKDB_ALLOCATOR_CONF;
}
