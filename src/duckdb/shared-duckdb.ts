import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { memoryLimitBytes, type ConnectionLender, type DatabaseSettings, type OpenDatabase } from './open-database';

/**
 * A DuckDB instance that lends connections to background work (managed storage's compaction, on
 * the queries' instance) instead of that work opening an instance of its own. Why: each instance
 * costs 18-19 MiB to open (its catalog, time zones) and its own allocator caches, on top of the
 * run; measured, a compaction run's own instance was a good part of the spikes that set the
 * process's peak (docs/performance.md, "Footprint").
 *
 * DuckDB's memory limit is the instance's, not a connection's, so a loan's `memoryLimit` is added
 * to the instance's own limit while the loan is open and taken off when it closes: the queries
 * keep what they had between runs, and during a run the two share what the two instances had
 * (a retry's doubled limit likewise). Threads are the instance's: a loan's `threads` is not
 * applied (each statement still runs on its own calling thread beside the queries'). Nor is
 * `tempDirectory`: the instance spills where it was opened to spill. Lowering the limit when a
 * loan closes fails while the instance holds more than the lower limit and cannot evict it (a
 * query at its peak); the limit then stays up until the next loan opens or closes, which sets it
 * again.
 *
 * @example
 * const shared = new SharedDuckDB(instance, '214MB');
 * const { connection, close } = await openDatabase({ memoryLimit: '80MB', shared }); // the limit is 294MB until close
 */
export class SharedDuckDB implements ConnectionLender {
  readonly #base: number | null;
  /** Bytes of memory limit the open loans added. */
  #lent = 0;
  /** Limit changes, one at a time, each setting what is due when it runs. */
  #setting: Promise<void> = Promise.resolve();

  constructor(
    readonly instance: DuckDBInstance,
    /** The instance's own memory limit as it was opened (undefined: DuckDB's default, which no loan raises). */
    memoryLimit?: string,
  ) {
    this.#base = memoryLimit === undefined ? null : memoryLimitBytes(memoryLimit);
  }

  /** The instance's memory limit now, in bytes (its own plus the open loans'); null with DuckDB's default. */
  get limitBytes(): number | null {
    return this.#base === null ? null : this.#base + this.#lent;
  }

  /**
   * A connection set up as `openDatabase` sets one up (UTC; the macros are the instance's), with
   * the instance's limit raised by `settings.memoryLimit` until the returned `close`.
   */
  async lend(settings: DatabaseSettings): Promise<OpenDatabase> {
    const extra = this.#base === null || settings.memoryLimit === undefined ? 0 : (memoryLimitBytes(settings.memoryLimit) ?? 0);
    const connection = await this.instance.connect();
    try {
      // A session setting: the queries' connections keep theirs.
      await connection.run("SET TimeZone = 'UTC'");
      this.#lent += extra;
      await this.#setLimit(connection);
    } catch (error) {
      this.#lent -= extra;
      connection.closeSync();
      throw error;
    }
    let closed = false;
    const close = async () => {
      if (closed) return;
      closed = true;
      this.#lent -= extra;
      // Still above the lower limit (a query at its peak): set again by the next loan's open or close.
      await this.#setLimit(connection).catch(() => undefined);
      connection.closeSync();
    };
    return { instance: this.instance, connection, relief: null, close };
  }

  #setLimit(connection: DuckDBConnection): Promise<void> {
    if (this.#base === null) return Promise.resolve();
    const next = this.#setting.then(() => connection.run(`SET memory_limit = '${this.limitBytes}B'`)).then(() => undefined);
    this.#setting = next.catch(() => undefined);
    return next;
  }
}
