import type { DuckDBConnection } from '@duckdb/node-api';

/** How often the process's resident memory is read while a caller's query runs (reading it costs microseconds). */
export const WATCH_EVERY_MS = 10;

/**
 * Stops callers' queries (docs/sandboxing.md, "Limits") when the process grows past its ceiling.
 * DuckDB's memory limit covers its operators' state, not the values its expressions compute, so
 * a caller's SQL within the sandbox's size check can still grow the process between the checks
 * DuckDB makes for an interrupt (once per chunk of rows). While a caller's query runs, a timer
 * reads the process's resident memory; past the ceiling, every caller's query running is
 * interrupted, again at each tick until it ends, and answers `overloaded`. The endpoints' own
 * queries are never stopped by it: their SQL is the application's.
 */
export class MemoryWatch {
  /** Queries stopped (for tests and the record). */
  stopped = 0;
  private readonly watched = new Map<DuckDBConnection, { over: boolean }>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    readonly ceilingBytes: number,
    private readonly residentBytes: () => number = () => process.memoryUsage.rss(),
  ) {}

  /** Watches a caller's query on `connection` until the returned function is called; it tells whether the query was stopped. */
  watch(connection: DuckDBConnection): () => boolean {
    const state = { over: false };
    this.watched.set(connection, state);
    this.timer ??= setInterval(() => this.tick(), WATCH_EVERY_MS).unref();
    return () => {
      this.watched.delete(connection);
      if (this.watched.size === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = null;
      }
      return state.over;
    };
  }

  private tick(): void {
    const over = this.residentBytes() > this.ceilingBytes;
    for (const [connection, state] of this.watched) {
      if (over && !state.over) {
        state.over = true;
        this.stopped++;
      }
      // An interrupt that lands between two statements of a query is lost: repeated until it ends.
      if (state.over) connection.interrupt();
    }
  }
}
