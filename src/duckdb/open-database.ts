import { availableParallelism } from 'node:os';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { InvalidOptionError } from '../errors';
import { TIMESTAMP_MACROS } from './source-relations';
import type { RunDuckDBBytes } from './duckdb-bytes';

export interface DatabaseSettings {
  /**
   * DuckDB worker threads (default: the number of cores; with a `memoryLimit`, one per 128 MiB of
   * it, at least 1 and at most the cores; see `threadsWithin`).
   */
  threads?: number;
  /** DuckDB memory limit, e.g. '512MB' (default: DuckDB's, 80% of RAM). */
  memoryLimit?: string;
  /**
   * Where operators past the memory limit spill (DuckDB's `temp_directory`; default DuckDB's,
   * `.tmp` in the working directory). Managed storage puts it in its data dir.
   */
  tempDirectory?: string;
  /**
   * Resident bytes the process stays within (its memory budget; default from the memory limit,
   * `ceilingFor`). Past it, callers' queries are stopped (the engine's `MemoryWatch`) and a query's
   * end gives what DuckDB freed back to the system at once (`MemoryRelief`).
   */
  memoryCeilingBytes?: number;
  /** Where what the instance holds is shown while it is open (compaction's runs, on `/metrics`); close it with the `close` `openDatabase` returns. */
  held?: RunDuckDBBytes;
}

/** A memory size DuckDB accepts: a number and a unit (`256MB`, `1.5GB`, `512MiB`; MB = 10^6 bytes). */
export const MEMORY_LIMIT_PATTERN = /^\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i;

/** The smallest memory limit accepted: below it DuckDB cannot even set up a connection. */
export const MIN_MEMORY_LIMIT_BYTES = 1e6;

const UNIT_BYTES: Record<string, number> = { b: 1, kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12, kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30, tib: 2 ** 40 };

/** Bytes of a memory limit as DuckDB reads it (`256MB` = 256 × 10^6), or null when it is not a size. */
export function memoryLimitBytes(text: string): number | null {
  const m = MEMORY_LIMIT_PATTERN.exec(text.trim());
  return m
    ? Number(
        text
          .trim()
          .slice(0, text.trim().length - m[2]!.length)
          .trim(),
      ) * UNIT_BYTES[m[2]!.toLowerCase()]!
    : null;
}

/**
 * How DuckDB's allocator (jemalloc, bundled in its Linux build) gives memory back, set on every
 * instance: a thread whose task allocated more than 16 MB flushes its cache and purges its arena
 * when the task ends (DuckDB's default waits for 128 MB, more than a compaction run of a segment
 * takes), and jemalloc's background thread purges freed pages after their decay, without waiting
 * for the next allocation. Measured with `serve --supabase` at 1,000 events/s (three runs each,
 * docs/performance.md, "Footprint"): peak RSS 294 against 314 MiB (medians), the same CPU.
 */
export const ALLOCATOR_SETTINGS = { allocator_flush_threshold: '16MB', allocator_background_threads: 'true' } as const;

/** An open DuckDB: its instance, a connection on it, and what closes both. */
export interface OpenDatabase {
  instance: DuckDBInstance;
  connection: DuckDBConnection;
  relief: MemoryRelief | null;
  /** Stops showing what it holds (`held`), then closes the connection and the instance. */
  close(): Promise<void>;
}

/**
 * An in-memory DuckDB set up the one way every part of the library uses it: offline, UTC, and
 * with the macros the source relations need.
 */
export async function openDatabase(settings: DatabaseSettings = {}): Promise<OpenDatabase> {
  const config: Record<string, string> = {
    // Offline by design: json and parquet are built in, nothing is ever downloaded.
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    ...ALLOCATOR_SETTINGS,
  };
  const limit = settings.memoryLimit === undefined ? null : memoryLimitBytes(settings.memoryLimit);
  if (settings.threads !== undefined) config.threads = String(settings.threads);
  else if (limit !== null) config.threads = String(threadsWithin(limit));
  if (settings.memoryLimit !== undefined) config.memory_limit = settings.memoryLimit;
  if (settings.tempDirectory !== undefined) config.temp_directory = settings.tempDirectory;
  let instance: DuckDBInstance | undefined;
  try {
    instance = await DuckDBInstance.create(':memory:', config);
    const connection = await instance.connect();
    // Offsets in timestamps are applied, and TIMESTAMPTZ becomes UTC wall time, whatever the host
    // says: for every connection of the instance (a plain SET is this connection's alone, and the
    // engine's pool and the memory tables' inserts connect on their own).
    await connection.run("SET GLOBAL TimeZone = 'UTC'");
    for (const macro of TIMESTAMP_MACROS) await connection.run(macro);
    // Parquet footers are read once per file version, not once per statement: for every
    // connection (the engine's pool connects on its own; a plain SET was this connection's alone,
    // and each statement of the others parsed its files' footers again).
    await connection.run('SET GLOBAL parquet_metadata_cache = true');
    // DuckDB's own copy of the file bytes it read is off: the files are local, the kernel's page
    // cache holds them already, and DuckDB's copy grew with every new file a long-running server
    // reads (each compaction writes some) until its memory limit evicted it. Measured: the same CPU
    // per call without it (docs/performance.md, "The footprint over longer runs").
    await connection.run('SET GLOBAL enable_external_file_cache = false');
    let relief: MemoryRelief | null = null;
    if (limit !== null) relief = new MemoryRelief(instance, await threadsOf(connection), settings.memoryCeilingBytes ?? ceilingFor(limit));
    const opened = instance;
    const unwatch = settings.held ? await settings.held.watch(opened) : null;
    const close = async () => {
      await unwatch?.();
      connection.closeSync();
      opened.closeSync();
    };
    return { instance, connection, relief, close };
  } catch (error) {
    // Nothing but the settings varies here: a failure means DuckDB cannot run with them (a memory
    // limit too small to set up a connection, threads it refuses).
    instance?.closeSync();
    const first = String((error as Error)?.message ?? error).split('\n')[0];
    throw new InvalidOptionError('duckdb', `DuckDB refused its settings (threads ${settings.threads ?? 'default'}, memoryLimit ${settings.memoryLimit ?? 'default'}): ${first}`, { cause: error });
  }
}

/**
 * The resident memory past which callers' queries are stopped, for a DuckDB memory limit: the
 * limit (what DuckDB's operators may hold) and half as much again for what it does not count
 * (the values expressions compute, the allocator's slack), plus the process around it.
 *
 * @example
 * ceilingFor(1e9); // 1.5 GB + 256 MiB
 */
export function ceilingFor(memoryLimitBytes: number): number {
  return Math.round(memoryLimitBytes * 1.5) + 256 * 2 ** 20;
}

/** DuckDB memory one thread scanning wide Parquet columns needs (logs.all's `metadata`: 100–130 MiB measured). */
export const MEMORY_PER_THREAD_BYTES = 128 * 2 ** 20;

/**
 * Threads for a memory limit when none are configured: one per 128 MiB of the limit, at least
 * one, at most one per core. Each thread scanning a row group holds its decompressed column
 * chunks in DuckDB memory (about 36 MB of `metadata` text per 100 000 rows, plus the scan's
 * buffers): with 2 threads under a 256MB limit, concurrent logs.all queries failed out of memory
 * (54 of 68 in a burst of 200 on the benchmark's dataset), with 1 none did.
 */
export function threadsWithin(limitBytes: number, cores = availableParallelism()): number {
  return Math.max(1, Math.min(cores, Math.floor(limitBytes / MEMORY_PER_THREAD_BYTES)));
}

/**
 * The worker threads of a connection's DuckDB.
 *
 * @example
 * await threadsOf(connection); // 1
 */
export async function threadsOf(connection: DuckDBConnection): Promise<number> {
  return Number((await connection.runAndReadAll("SELECT current_setting('threads')")).getRows()[0]?.[0]);
}

/**
 * Gives what DuckDB's allocator holds freed back to the operating system (`malloc_trim` on glibc,
 * a purge with jemalloc): DuckDB does it whenever its thread pool is resized and offers no
 * statement for it alone, so the pool is set one thread up and back to `threads`.
 *
 * @example
 * await trimAllocator(connection, await threadsOf(connection));
 */
export async function trimAllocator(connection: DuckDBConnection, threads: number): Promise<void> {
  await connection.run(`SET threads = ${threads + 1}`);
  await connection.run(`SET threads = ${threads}`);
}

/** How much a process that stayed past its ceiling after a trim must grow before the next trim. */
export const TRIM_SLACK_BYTES = 16 * 2 ** 20;

/** How often the idle trim looks at the process's resident memory. */
export const IDLE_TRIM_MS = 10_000;

/**
 * Gives the memory DuckDB has freed back to the operating system. Why: DuckDB's limit governs its
 * buffer pool, not the working memory of scans (decompressed Parquet pages, strings) nor what the
 * C allocator keeps after a query frees it. Measured on a burst of 200 logs.all queries with a
 * 256MB limit, that kept memory was 80–120 MB of the peak and stayed after the burst. How: DuckDB
 * trims its allocator (`malloc_trim` on glibc, a purge with jemalloc) whenever its thread pool is
 * resized (`trimAllocator`), on a connection of its own, one trim at a time, off the queries' path.
 *
 * When: on a timer while the process has grown (`startIdleTrims`), and after a query only when
 * it ends with the process past its ceiling (`budgetBytes`, the process's memory budget), where
 * memory must come back at once. Not after every query above DuckDB's own limit, as before: each
 * trim gives back pages the next query faults in again. Measured with `serve --supabase` at
 * 1,000 events/s (docs/performance.md, "Trims after queries past the budget only"): 377 - 439
 * against 498 - 499 µs of CPU an event, half the page faults, the same peak and the same memory
 * 60 s after; and an application whose own memory sat above DuckDB's limit paid a trim (about
 * 100 ms of CPU) after nearly every query. Once a trim left the process above its ceiling anyway
 * (memory of the application around it), the next one waits until the process has grown by
 * `TRIM_SLACK_BYTES` more.
 */
export class MemoryRelief {
  /** Trims done (for tests and benchmarks). */
  trims = 0;
  private running: Promise<void> | null = null;
  private connection: DuckDBConnection | null = null;
  private closed = false;
  /** Resident bytes right after the last trim: what trimming could not give back. */
  private floor = 0;

  constructor(
    private readonly instance: DuckDBInstance,
    private readonly threads: number,
    /** Resident bytes past which a query's end returns freed memory at once (the process's ceiling). */
    readonly budgetBytes: number,
    private readonly residentBytes: () => number = () => process.memoryUsage.rss(),
  ) {}

  /**
   * Also trims on a timer, every `everyMs`, when the process grew by `TRIM_SLACK_BYTES` since the
   * last trim: memory freed without a query (the memory tables' rows going once compacted, ingest's
   * buffers) then goes back too. Measured: after a minute of 1,000 events/s the process kept
   * 95 MiB above its idle figure with the heap and memory tables back to idle, until a trim.
   */
  startIdleTrims(everyMs = IDLE_TRIM_MS): void {
    // What the process holds with nothing to give back: its size when the trims start.
    const idle = this.residentBytes();
    this.floor = Math.max(this.floor, idle);
    let ticks = 0;
    const timer = setInterval(() => {
      if (this.closed) return clearInterval(timer);
      const resident = this.residentBytes();
      const third = ++ticks % 3 === 0;
      // Grown since the last trim; or, every third tick, still above idle (memory freed since,
      // e.g. compacted rows leaving the memory tables, shows only once trimmed).
      const due = resident > this.floor + TRIM_SLACK_BYTES || (third && resident > idle + TRIM_SLACK_BYTES);
      if (this.running !== null || !due) return;
      this.running = this.trim()
        .catch(() => undefined)
        .finally(() => (this.running = null));
    }, everyMs);
    timer.unref();
  }

  /** Called when a query ends: trims in the background when the process is past its ceiling. */
  afterQuery(): void {
    const threshold = Math.max(this.budgetBytes, this.floor + TRIM_SLACK_BYTES);
    if (this.closed || this.running !== null || this.residentBytes() <= threshold) return;
    this.running = this.trim()
      .catch(() => undefined)
      .finally(() => (this.running = null));
  }

  /** Resolves when no trim is under way. */
  async settled(): Promise<void> {
    await this.running;
  }

  /** Waits for a trim under way; no trim starts after. */
  async close(): Promise<void> {
    this.closed = true;
    await this.running;
    this.connection?.closeSync();
    this.connection = null;
  }

  private async trim(): Promise<void> {
    this.connection ??= await this.instance.connect();
    await trimAllocator(this.connection, this.threads);
    this.trims++;
    this.floor = this.residentBytes();
  }
}
