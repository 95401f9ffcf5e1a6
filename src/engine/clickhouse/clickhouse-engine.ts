import { randomUUID } from 'node:crypto';
import { EngineError } from '../../errors';
import type { CompiledQuery, Engine, EngineResult, EngineTarget, SourceInspection } from '../engine';
import type { SourceSet } from '../../sources/source-set';
import { QueryGate } from '../../util/query-gate';
import { patternProblem, toEngineError } from './classify-error';
import { openClient, probeServer, type ServerFeatures } from './connection';
import { decodeRows } from './decode-rows';
import { requireDatabase, requireServer, sourcesOfTarget, tableOf, type ClickHouseTarget } from './options';
import { runCommand, runSql, type SqlRequest } from './run-sql';
import { sqlTableName } from './sql-text';
import { monotonicMs } from '../../time/clock';
import { InternalError } from '../../util/internal-error';

/** Options of `clickhouseEngine`: where the tables are, and the limits every query runs under. */
export interface ClickHouseEngineOptions extends ClickHouseTarget {
  /** Engine queries running at once (default 4). */
  maxConcurrentQueries?: number;
  /** Engine queries waiting for a slot before `overloaded` (default 64). */
  maxQueuedQueries?: number;
  /**
   * Per-query time limit in milliseconds (default 30000): the request is abandoned and the query
   * killed on the server, which also gets it as `max_execution_time`.
   */
  queryTimeoutMs?: number;
}

/**
 * The endpoints computed by ClickHouse, over the tables `log-endpoints clickhouse init` creates
 * (a `Distributed` table over every shard when `cluster` is given). Same answers, errors and
 * limits as the built-in DuckDB engine. Nothing is sent before the first call, which probes the
 * server once: ClickHouse 19 and later bind text values as query parameters, 18.x gets them as
 * external data.
 *
 * Its sources are the built-ins and `sourceDefinitions`: give it the same ones as `createEndpoints`
 * (which refuses an engine that lacks one of its sources).
 *
 * @example
 * import { clickhouseEngine } from 'log-endpoints/clickhouse';
 * const ep = await createEndpoints({
 *   sources: {},
 *   engine: clickhouseEngine({ url: 'http://127.0.0.1:8123', database: 'logs', cluster: 'logs' }),
 * });
 */
export function clickhouseEngine(options: ClickHouseEngineOptions): Engine {
  return new ClickHouseEngine(options);
}

class ClickHouseEngine implements Engine {
  private readonly gate: QueryGate;
  private readonly timeoutMs: number;
  /** Relation name -> the table's full name, for every source of the engine. */
  private readonly tables: Map<string, string>;
  private readonly sources: SourceSet;
  readonly target: EngineTarget;
  private client: ReturnType<typeof openClient> | null = null;
  private features: Promise<ServerFeatures> | null = null;
  private readonly inFlight = new Set<{ abort: AbortController; done: Promise<unknown> }>();
  private readonly patterns = new Map<string, string | null>();
  private closed = false;

  constructor(private readonly options: ClickHouseEngineOptions) {
    requireDatabase(options, 'clickhouseEngine');
    requireServer(options, 'clickhouseEngine');
    this.gate = new QueryGate({
      maxConcurrent: options.maxConcurrentQueries ?? 4,
      maxQueued: options.maxQueuedQueries ?? 64,
    });
    this.timeoutMs = options.queryTimeoutMs ?? 30_000;
    // Names are checked here, so a mistake shows at start-up rather than on the first query.
    this.sources = sourcesOfTarget(options);
    this.tables = new Map(this.sources.list.map((d) => [d.relation, sqlTableName(options.database, tableOf(options, d), `tables.${d.name}`)]));
    this.target = { dialect: 'clickhouse', sources: this.sources, tables: this.tables };
  }

  async run(query: CompiledQuery): Promise<EngineResult> {
    this.assertOpen();
    return this.gate.run(() =>
      this.limited(async (signal, queryId) => {
        const started = monotonicMs();
        // The statement as compiled for this engine's target: its tables named, a caller's SELECT in place.
        const result = await this.sql({ sql: query.statement.sql, params: query.params, signal, queryId });
        return { rows: decodeRows(result), engineMs: monotonicMs() - started };
      }),
    );
  }

  async checkPattern(pattern: string): Promise<string | null> {
    this.assertOpen();
    const known = this.patterns.get(pattern);
    if (known !== undefined) return known;
    // The pattern on its own first (so `a)|(b` is refused, though it compiles inside the query's
    // `(?:...)`), then the very expression usage.api-counts runs: the verdict is ClickHouse's own.
    const verdict = await this.limited(async (signal, queryId) => {
      try {
        const sql = "SELECT match('', concat('(?-s)', {pattern:String})) AS alone, match('', concat('(?-s)(?:', {pattern:String}, ')')) AS grouped";
        await this.sql({ sql, params: { pattern }, signal, queryId });
        return null;
      } catch (error) {
        if (/cannot compile re2|OptimizedRegularExpression/i.test(String((error as Error)?.message))) return patternProblem(error);
        throw error;
      }
    });
    if (this.patterns.size >= 1024) this.patterns.clear();
    this.patterns.set(pattern, verdict);
    return verdict;
  }

  async ping(): Promise<void> {
    this.assertOpen();
    await this.limited((signal, queryId) => this.sql({ sql: 'SELECT 1 AS one', params: {}, signal, queryId }));
  }

  /**
   * The engine reads tables, not files: every count is 0. `log-endpoints clickhouse load` reports
   * the lines it skipped when it copied the files in.
   */
  async inspectSources(): Promise<SourceInspection[]> {
    this.assertOpen();
    return this.sources.names.map((source) => ({
      source,
      files: 0,
      lines: 0,
      skippedLines: 0,
      parquetRows: 0,
      globs: [],
      emptyGlobs: [],
      skippedFiles: [],
      coveredFiles: 0,
    }));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const query of this.inFlight) query.abort.abort();
    await Promise.allSettled([...this.inFlight].map((q) => q.done));
    // Closing the client also ends a probe still waiting for its server.
    const opened = await this.client?.catch(() => null);
    await opened?.close();
  }

  /** The client, created on first use (no request yet). */
  private openClient() {
    this.client ??= openClient(this.options);
    return this.client;
  }

  /** What the server can do, probed once; a failed probe is tried again next time. */
  private probe(): Promise<ServerFeatures> {
    if (!this.features) {
      this.features = this.openClient().then(({ client }) => probeServer(client));
      this.features.catch(() => (this.features = null));
    }
    return this.features;
  }

  private async sql(request: SqlRequest) {
    const [{ client }, features] = await Promise.all([this.openClient(), this.probe()]);
    const settings = { ...this.options.settings, max_execution_time: Math.ceil(this.timeoutMs / 1000) };
    return runSql(client, features, { ...request, settings });
  }

  /**
   * Runs work under the time limit: past it, the request is aborted, the query killed on the
   * server (best effort), and the caller gets `timeout`. Errors become `EngineError`s.
   */
  private async limited<T>(work: (signal: AbortSignal, queryId: string) => Promise<T>): Promise<T> {
    this.assertOpen();
    const abort = new AbortController();
    const queryId = `log-endpoints-${randomUUID()}`;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      abort.abort();
    }, this.timeoutMs);
    timer.unref();
    // The caller gets its answer when the time is up, whatever the request (or a probe it waits
    // for) is doing then.
    const aborted = new Promise<never>((_, reject) => abort.signal.addEventListener('abort', () => reject(new InternalError('aborted', 'aborted')), { once: true }));
    const done = Promise.race([work(abort.signal, queryId), aborted]);
    const entry = { abort, done };
    this.inFlight.add(entry);
    try {
      const result = await done;
      if (timedOut) throw new InternalError('past_limit', 'finished after its time limit');
      return result;
    } catch (error) {
      if (timedOut && !this.closed) void this.kill(queryId);
      throw toEngineError(error, { timedOut, closed: this.closed, timeoutMs: this.timeoutMs });
    } finally {
      clearTimeout(timer);
      this.inFlight.delete(entry);
    }
  }

  /** Stops an abandoned query on the server, so it does not go on using the cluster. */
  private async kill(queryId: string): Promise<void> {
    try {
      const { client } = await this.openClient();
      await runCommand(client, `KILL QUERY WHERE query_id = '${queryId.replace(/[^A-Za-z0-9-]/g, '')}' ASYNC`);
    } catch {
      // Best effort: the server's own max_execution_time ends it anyway.
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new EngineError('closed', 'The endpoints were closed.');
  }
}
