import { availableParallelism } from 'node:os';
import { cgroupMemoryMax } from '../util/cgroup-memory';
import { memoryLimitBytes, threadsWithin } from './open-database';

const MIB = 2 ** 20;

/**
 * The budget when none is given: small enough for a 2 GB host that also runs the rest of
 * self-hosted Supabase (Logflare's analytics container takes ~1.8 GB and is OOM-killed there).
 */
export const DEFAULT_BUDGET_BYTES = 512 * MIB;

/** The smallest budget accepted: the process alone (Node, the library, idle DuckDB) takes about 120 MiB. */
export const MIN_BUDGET_BYTES = 128e6;

/** The share of a container's memory limit the default budget takes when that limit is the smaller. */
export const CGROUP_SHARE = 0.75;

/**
 * How a budget is split. DuckDB's `memory_limit` bounds its buffer pool and operators' state, not
 * every allocation (decompressed pages, strings of expressions, the allocator's caches run 25-50 %
 * above it), and the process around DuckDB (Node, V8's heap, ingest's buffers, the HTTP bodies)
 * is 110-130 MiB idle. So queries get 40 % of the budget, one compaction at a time 15 %, and the
 * rest is the process's own and DuckDB's overshoot.
 */
export const QUERY_SHARE = 0.4;
export const COMPACTION_SHARE = 0.15;
/**
 * NDJSON bytes managed storage mirrors in the memory tables (inside the queries' DuckDB), as a
 * share of the budget: 41 MiB of a 512 MiB budget is 45 s of 1,000 events/s. Past it segments are
 * read from their files until compaction catches up (answers are the same, only slower).
 */
export const MEMORY_TABLES_SHARE = 0.08;

/** The least DuckDB is given, whatever the budget: below it a connection cannot even be set up. */
const FLOOR_BYTES = 16 * MIB;

/** What one DuckDB instance gets of the budget. */
export interface DuckDBShare {
  memoryLimit: string;
  threads: number;
}

/** One budget for the whole process, and what each DuckDB gets of it. */
export interface MemoryBudget {
  /** Bytes the process stays within (resident memory). */
  bytes: number;
  /** Where it came from: the option, the default, or the container's limit. */
  origin: 'option' | 'default' | 'container';
  /** The engine's DuckDB: callers' and endpoints' queries, and managed storage's memory tables. */
  queries: DuckDBShare;
  /** Background compaction's DuckDB (one run at a time in the process). */
  compaction: DuckDBShare;
  /** NDJSON bytes the memory tables hold at most. */
  memoryTablesBytes: number;
}

/**
 * The process's memory budget: the `memoryLimit` given (a size such as `'512MB'`), else 512 MiB, or
 * 75 % of the container's limit when that is smaller; and the DuckDB settings that fit in it.
 *
 * @example
 * memoryBudget('1GB').queries; // { memoryLimit: '400MB', threads: 2 }
 */
export function memoryBudget(memoryLimit?: string, containerBytes: number | null = cgroupMemoryMax(), cores = availableParallelism()): MemoryBudget {
  const given = memoryLimit === undefined ? null : memoryLimitBytes(memoryLimit);
  const fromContainer = containerBytes === null ? null : Math.floor(containerBytes * CGROUP_SHARE);
  const bytes = given ?? Math.min(DEFAULT_BUDGET_BYTES, fromContainer ?? Infinity);
  const origin = given !== null ? 'option' : fromContainer !== null && fromContainer < DEFAULT_BUDGET_BYTES ? 'container' : 'default';
  const share = (fraction: number, maxThreads: number): DuckDBShare => {
    const limit = Math.max(FLOOR_BYTES, Math.floor(bytes * fraction));
    return { memoryLimit: `${Math.floor(limit / 1e6)}MB`, threads: Math.min(maxThreads, threadsWithin(limit, cores)) };
  };
  return { bytes, origin, queries: share(QUERY_SHARE, cores), compaction: share(COMPACTION_SHARE, 1), memoryTablesBytes: Math.floor(bytes * MEMORY_TABLES_SHARE) };
}

/** The budget in words, as `serve` prints it: `512 MiB (default; DuckDB: queries 214MB, compaction 80MB)`. */
export function describeBudget(budget: MemoryBudget): string {
  const why = { option: '--memory-limit', default: 'default', container: `${CGROUP_SHARE * 100} % of the container's limit` }[budget.origin];
  return `${Math.round(budget.bytes / MIB)} MiB (${why}; DuckDB: queries ${budget.queries.memoryLimit} on ${budget.queries.threads} thread${budget.queries.threads > 1 ? 's' : ''}, compaction ${budget.compaction.memoryLimit})`;
}
