import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { EngineError, LogEndpointsError } from '../../errors';
import type { MemoryRelief } from '../../duckdb/open-database';
import { isDuckDBOutOfMemory } from '../../duckdb/memory-retry';
import type { MemoryWatch } from './memory-watch';
import { InternalError } from '../../util/internal-error';

/**
 * The engine's query connections: one per query at a time, each query under its time limit (and,
 * for a caller's SQL, the process's memory ceiling), its failure mapped to an `EngineError`.
 *
 * @example
 * const rows = await pool.withConnection((connection) => connection.runAndReadAll('SELECT 1'));
 */
export class ConnectionPool {
  private readonly idle: DuckDBConnection[] = [];
  private readonly busy = new Set<DuckDBConnection>();

  constructor(
    private readonly instance: DuckDBInstance,
    private readonly timeoutMs: number,
    /** Whether the engine is closed: no new work, and connections close as they come back. */
    private readonly closed: () => boolean,
    private readonly relief: MemoryRelief | null,
    /** Stops callers' queries past the process's ceiling (docs/sandboxing.md, "Limits"). */
    private readonly watch: MemoryWatch | null,
  ) {}

  async withConnection<T>(work: (connection: DuckDBConnection) => Promise<T>, caller = false): Promise<T> {
    if (this.closed()) throw new EngineError('closed', 'The endpoints were closed.');
    const connection = this.idle.pop() ?? (await this.instance.connect());
    this.busy.add(connection);
    const unwatch = caller ? this.watch?.watch(connection) : undefined;
    let stopped = false;
    let timedOut = false;
    let repeat: NodeJS.Timeout | undefined;
    // An interrupt only stops the statement running at that moment; one that lands between two
    // statements of a query (glob, describe, prepare, run) is lost. So once the time is up, keep
    // interrupting until the work settles.
    const timer = setTimeout(() => {
      timedOut = true;
      connection.interrupt();
      repeat = setInterval(() => connection.interrupt(), 2);
      repeat.unref();
    }, this.timeoutMs);
    timer.unref();
    try {
      const result = await work(connection);
      stopped = unwatch?.() ?? false;
      if (timedOut || stopped) throw new InternalError('past_limit', 'finished after its time limit or memory ceiling');
      return result;
    } catch (error) {
      stopped ||= unwatch?.() ?? false;
      if (stopped) {
        // Answered once the memory it freed has gone back: answered at once, the next caller's
        // query could start with the process still past its ceiling and be stopped at its first
        // look, the trim this query started still running (seen once in a CI run under load).
        await this.returned();
        throw new EngineError(
          'memory_limit',
          `The query was stopped: it grew the process past its memory budget (${Math.round(this.watch!.ceilingBytes / 2 ** 20)} MiB). Narrow the time range, read fewer columns, or aggregate before joining.`,
          { cause: error, retryAfterSeconds: 1 },
        );
      }
      // Ours already (an engine error, a caller's SQL refused): as it is.
      if (error instanceof LogEndpointsError) throw error;
      if (timedOut) throw new EngineError('timeout', `The query ran past its time limit of ${this.timeoutMs} ms.`, { cause: error });
      if (this.closed()) throw new EngineError('closed', 'The endpoints were closed.', { cause: error });
      // Past DuckDB's share of the budget (after spilling what it can): the gate runs it again
      // alone (isOutOfMemory), and one that does not fit alone is refused with the same code.
      if (isDuckDBOutOfMemory(error)) {
        await this.returned();
        throw new EngineError(
          'memory_limit',
          'The query needs more memory than its share of the memory budget, even after spilling to disk. Narrow the time range, read fewer columns, or aggregate before joining.',
          {
            cause: error,
            retryAfterSeconds: 1,
          },
        );
      }
      throw new EngineError('query_failed', 'The query failed in the engine.', { cause: error });
    } finally {
      clearTimeout(timer);
      clearInterval(repeat);
      this.busy.delete(connection);
      if (this.closed()) connection.closeSync();
      else this.idle.push(connection);
      // Past the memory limit, freed memory goes back to the system (see MemoryRelief).
      this.relief?.afterQuery();
    }
  }

  /** Resolves once freed memory went back, when the process is past its ceiling (a trim started and done; see MemoryRelief). */
  private async returned(): Promise<void> {
    this.relief?.afterQuery();
    await this.relief?.settled();
  }

  /** Stops the queries running now (on close). */
  interruptAll(): void {
    for (const connection of this.busy) connection.interrupt();
  }

  /** Resolves once every connection in use has come back (interrupted queries hand theirs back). */
  async drained(): Promise<void> {
    while (this.busy.size) await new Promise((resolve) => setTimeout(resolve, 5));
  }

  /** Closes the connections not in use. */
  closeIdle(): void {
    for (const connection of this.idle) connection.closeSync();
  }
}

/**
 * DuckDB ran out of its memory limit (mapped to `memory_limit` by `withConnection`).
 *
 * @example
 * new QueryGate({ maxConcurrent: 4, maxQueued: 64, retryAloneWhen: isOutOfMemory });
 */
export function isOutOfMemory(error: unknown): boolean {
  return error instanceof EngineError && error.code === 'memory_limit' && isDuckDBOutOfMemory(error.cause);
}
