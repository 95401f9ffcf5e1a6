import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { VARCHAR } from '@duckdb/node-api';
import { EngineError } from '../../errors';
import type { CompiledQuery, CompiledStatement, Engine, EngineResult, EngineValue, SourceInspection, SourceName } from '../engine';
import { QueryGate } from '../../util/query-gate';
import { headOf, SourceReader, staleSnapshot, type ExtraInputs, type FileRange, type ReadSet } from '../../files/source-reader';
import type { ListedFile } from '../../files/list-glob';
import { partitionDay } from '../../files/file-kinds';
import { earliestDayOf } from './list-files';
import type { MemoryTables } from '../../managed/memory-tables';
import { ceilingFor, memoryLimitBytes, openDatabase, type DatabaseSettings, type MemoryRelief } from '../../duckdb/open-database';
import { MemoryWatch } from './memory-watch';
import type { SourceFiles } from '../../duckdb/source-relations';
import { headsServe, newestFirst, pageMemory } from './newest-first';
import { firstRowsByDay } from './first-rows';
import { HeadTables, type HeldHeads } from './head-tables';
import { HEAD_ROWS_PER_PROJECT } from '../../dataset/newest-heads';
import { anHourHasPassed, dayWithin, hoursCondition, servedHours } from './hour-counts';
import { executeCaller } from './caller-results';
import { blameCaller } from './caller-errors';
import type { SourceDescriptor } from '../../sources/source-descriptor';
import type { Micros } from '../../time/iso';
import type { SourceSet } from '../../sources/source-set';
import { monotonicMs } from '../../time/clock';
import { fullQuerySql, rollupsNamedBy, rollupsStored, rowsRead } from './statement-sql';
import { bindRequest, toEngineRow } from './bind-request';
import { PreparedStatements, STATEMENTS_PER_CONNECTION } from './prepared-statements';
import { SourceInputs, type ReadFiles } from './source-inputs';
import { keysIn, NarrowedRollups } from './narrowed-rollups';
import { hourRowsIn, VariantCosts } from './variant-costs';
import { MinuteCounts, minuteRowsIn } from './minute-counts';
import { keptChanging, MAX_ATTEMPTS, retryable } from './failed-reads';
import { inspectSource } from './inspect-source';
import { ConnectionPool, isOutOfMemory } from './connection-pool';
import { DuckDBBytesSampler, type DuckDBBytes } from '../../duckdb/duckdb-bytes';

// The engine's rooms: the SQL a statement runs as (statement-sql.ts), a read's files as SQL inputs
// (source-inputs.ts), values bound and read (bind-request.ts), kept prepared statements
// (prepared-statements.ts), connections under time and memory limits (connection-pool.ts), the
// judgement of a failed read (failed-reads.ts), callers' SQL (caller-results.ts, caller-errors.ts),
// counts (inspect-source.ts). This file holds the engine itself: a query's attempts over fresh reads.

/** One glob or a list of globs per source; relative globs resolve against the working directory. */
export type SourceGlobs = Partial<Record<SourceName, string | readonly string[]>>;

export interface DuckDBEngineOptions extends DatabaseSettings {
  /**
   * The instance's sources: what a statement may read (each source's relation and rollups). A
   * query's relations are built from the descriptors it was compiled with (`CompiledQuery.sources`).
   */
  sourceSet: SourceSet;
  /**
   * Told the typed fields each source's datasets hold (their logs' `typedPaths`): at start, and by
   * every read of a source (the instance widens its sources by them: src/sources/live-source-set.ts).
   */
  onTypedPaths?: (source: SourceName, paths: readonly string[]) => void;
  /** Globs per source (of `sourceSet`). */
  sources: SourceGlobs;
  /** Inputs besides the globs, per source (managed storage: its datasets and write-ahead log). */
  extraInputs?: Partial<Record<SourceName, ExtraInputs>>;
  /** Managed storage's in-memory tables: they live in this engine's DuckDB (see memory-tables.ts). */
  memory?: MemoryTables;
  /** Engine queries running at once (default 4). */
  maxConcurrentQueries?: number;
  /** Engine queries waiting for a slot before `overloaded` (default 64). */
  maxQueuedQueries?: number;
  /** Per-query time limit in milliseconds, enforced by interrupting DuckDB (default 30000). */
  queryTimeoutMs?: number;
}

/**
 * Creates the in-process DuckDB engine over the configured log files.
 *
 * @example
 * const engine = await createDuckDBEngine({ sourceSet: BUILT_IN_SOURCE_SET, sources: { edgeLogs: 'logs/edge/*.ndjson' } });
 */
export async function createDuckDBEngine(options: DuckDBEngineOptions): Promise<Engine> {
  const { instance, connection, relief, close } = await openDatabase(options);
  try {
    // The limit in force (DuckDB's default when none is set: 80% of RAM) sets the callers' ceiling.
    const limit = memoryLimitBytes(String((await connection.runAndReadAll("SELECT current_setting('memory_limit')")).getRows()[0]?.[0]));
    const ceiling = options.memoryCeilingBytes ?? (limit === null ? null : ceilingFor(limit));
    const held = await DuckDBBytesSampler.open(instance);
    options.memory?.attach(instance);
    relief?.startIdleTrims();
    const engine = new DuckDBEngine(instance, connection, options, held, relief, ceiling === null ? null : new MemoryWatch(ceiling));
    // What the datasets hold already (a `compact` output a glob reaches, managed storage's): read from the first query on.
    engine.tellTypedPaths();
    return engine;
  } catch (error) {
    // Nothing opened here outlives a failed start: the caller has no engine to close.
    await relief?.close();
    await close();
    throw error;
  }
}

class DuckDBEngine implements Engine {
  /** By source name: a query's descriptors of a source may have more typed fields than another's, its files are the same. */
  private readonly readers = new Map<SourceName, SourceReader>();
  private readonly onTypedPaths: DuckDBEngineOptions['onTypedPaths'];
  private readonly sourceSet: SourceSet;
  private readonly memory: MemoryTables | undefined;
  /** Days' heads held as tables in memory (logs.all's pages read one per day). */
  private readonly headTables = new HeadTables((sql) => this.onControl(() => this.control.run(sql)));
  private readonly inputs = new SourceInputs();
  /** Stored rollups narrowed to a text's rows, per file version (the trigram maps' candidate origins). */
  private readonly narrowed = new NarrowedRollups();
  /** Projects' rows per hour in stored files, per file version: where a variant pays (variant-costs.ts). */
  private readonly costs = new VariantCosts();
  /** Projects' rows per minute in stored files, per file version: a page's cut (minute-counts.ts). */
  private readonly minutes = new MinuteCounts();
  private readonly gate: QueryGate;
  private readonly pool: ConnectionPool;
  private readonly patterns = new Map<string, string | null>();
  /** The endpoints' statements and callers' SELECTs, kept apart (prepared-statements.ts). */
  private readonly statements = new PreparedStatements(STATEMENTS_PER_CONNECTION);
  private readonly callerStatements = new PreparedStatements(STATEMENTS_PER_CONNECTION);
  private controlQueue: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly instance: DuckDBInstance,
    private readonly control: DuckDBConnection,
    options: DuckDBEngineOptions,
    /** What the instance holds, read on a timer (docs/operations.md, "Metrics"). */
    private readonly held: DuckDBBytesSampler,
    private readonly relief: MemoryRelief | null = null,
    /** Stops callers' queries past the process's ceiling (docs/sandboxing.md, "Limits"). */
    watch: MemoryWatch | null = null,
  ) {
    const list = (g: string | readonly string[] | undefined) => (g === undefined ? [] : typeof g === 'string' ? [g] : [...g]);
    this.memory = options.memory;
    // Every source of the instance (the built-ins and the user's): a statement may read any of them.
    this.sourceSet = options.sourceSet;
    for (const d of this.sourceSet.list) this.readers.set(d.name, new SourceReader(list(options.sources[d.name]), options.extraInputs?.[d.name], d));
    this.onTypedPaths = options.onTypedPaths;
    this.gate = new QueryGate({
      maxConcurrent: options.maxConcurrentQueries ?? 4,
      maxQueued: options.maxQueuedQueries ?? 64,
      // Out of the memory limit beside other queries: it may fit alone, so it runs again alone.
      retryAloneWhen: isOutOfMemory,
    });
    this.pool = new ConnectionPool(instance, options.queryTimeoutMs ?? 30_000, () => this.closed, relief, watch);
  }

  readonly target = { dialect: 'duckdb' } as const;

  async run(query: CompiledQuery): Promise<EngineResult> {
    this.assertOpen();
    return this.gate.run(() =>
      this.pool.withConnection(async (connection) => {
        const started = monotonicMs();
        // The sources the statement reads, as compiled (a caller's over source tables: those it
        // names), with the typed fields it was compiled with: its relations give what its text reads.
        const sources = query.sources;
        // In-memory events a compaction covers stay until this query is done with its snapshot.
        const leave = this.memory?.enter();
        try {
          for (let attempt = 1; ; attempt++) {
            let snapshot: Awaited<ReturnType<DuckDBEngine['snapshot']>>;
            try {
              snapshot = await this.snapshot(connection, query, sources);
            } catch (error) {
              // A file the snapshot named was removed by a newer commit before it was checked: take another.
              if (!staleSnapshot(error)) throw error;
              if (attempt >= MAX_ATTEMPTS) throw keptChanging(error);
              continue;
            }
            const { reads, statement, walksNewestFirst } = snapshot;
            const files = new Map<SourceDescriptor, ReadFiles>();
            try {
              for (const [source, read] of reads) files.set(source, await this.inputs.sourceFiles(connection, read));
              const answer = await this.answer(connection, statement, query, sources, reads, files, walksNewestFirst);
              // Taken once the statement ran: a newest-first walk names what it leaves out as it goes.
              return { ...answer, engineMs: monotonicMs() - started, skippedFiles: [...reads.values()].flatMap((r) => r.skipped) };
            } catch (error) {
              if (query.caller !== undefined) await blameCaller(error, reads, files, () => this.execute(connection, statement, query, files));
              let retry = false;
              for (const [source, read] of reads) if (await this.retryable(connection, error, source, read, files.get(source)?.copies)) retry = true;
              if (!retry) throw error;
              if (attempt >= MAX_ATTEMPTS) throw keptChanging(error);
            }
          }
        } finally {
          leave?.();
        }
      }, query.caller !== undefined),
    );
  }

  /**
   * A fresh read of the sources a query reads, the statement that runs over it (a rollup variant
   * whose rollups are not stored for this read runs as the base statement), and whether it walks
   * newest first.
   */
  private async snapshot(
    connection: DuckDBConnection,
    query: CompiledQuery,
    sources: readonly SourceDescriptor[],
  ): Promise<{ reads: Map<SourceDescriptor, ReadSet>; statement: CompiledStatement; walksNewestFirst: boolean }> {
    const reads = new Map<SourceDescriptor, ReadSet>();
    for (const source of sources) {
      const read = await this.reader(source).snapshot(earliestDayOf(query.notBefore));
      reads.set(source, read);
      this.onTypedPaths?.(source.name, read.typedPaths);
    }
    // The stored rollups the variant reads hold the bytes their commits recorded (a damaged one
    // is dropped: its file's rows stand in), checked before the variant is chosen.
    for (const [source, read] of reads) await this.reader(source).verifyCompanions(read, { rollups: [...rollupsNamedBy(query.statement, source)] });
    // A rollup variant whose rollups are not stored for this read runs as the base statement.
    // One whose cost is declared runs only where it pays for this read (variant-costs.ts).
    const statement = query.fallback && !(rollupsStored(query.statement, reads) && (await this.variantPays(connection, query, reads))) ? query.fallback : query.statement;
    const walksNewestFirst = Boolean(query.newestFirst) && sources.length === 1 && query.caller === undefined;
    // So do the data files whose rows the statement reads (a newest-first walk checks each
    // day's as it reaches it); those that do not are left out, named.
    if (!walksNewestFirst) for (const [source, read] of reads) await this.reader(source).verifyRows(read, rowsRead(statement, source, read));
    return { reads, statement, walksNewestFirst };
  }

  /**
   * Whether a variant with a declared cost pays for these reads: on every source it reads, the
   * project's events outnumber what it reads by its margin (counted once per file version).
   */
  private async variantPays(connection: DuckDBConnection, query: CompiledQuery, reads: ReadonlyMap<SourceDescriptor, ReadSet>): Promise<boolean> {
    if (query.cheaperWhen === undefined) return true;
    const { cost, projectParam } = query.cheaperWhen;
    const project = query.params[projectParam];
    const count = (path: string, column: string, time: string, p: string) => hourRowsIn(connection, path, column, time, p);
    try {
      for (const [source, read] of reads) if (!(await this.costs.pays(cost, source, read, project, query.notBefore, count))) return false;
    } catch {
      // A file that cannot be counted (damaged, gone): the base statement, whose read leaves out
      // or retries such a file as every statement's does (verifyRows below).
      return false;
    }
    return true;
  }

  /**
   * A cut before a page's rows in stored files, from their rows of the query's project per minute
   * (minute-counts.ts, kept per file version), or null: no project bound, or a file not counted.
   */
  private async minuteCut(connection: DuckDBConnection, query: CompiledQuery, source: SourceDescriptor, files: readonly ListedFile[], limit: number, until: Micros | null): Promise<bigint | null> {
    const project = query.projectParam === undefined ? null : query.params[query.projectParam];
    if (typeof project !== 'string') return null;
    try {
      return await this.minutes.cut(files, source.projectColumn, project, limit, until, query.notBefore ?? null, (path, column, p) => minuteRowsIn(connection, path, column, p));
    } catch {
      // A file that cannot be counted (damaged, gone): the two phases, whose read leaves out or
      // retries such a file as every statement's does.
      return null;
    }
  }

  /** Runs a query's statement (or the caller's SELECT) over one read's files. */
  private async answer(
    connection: DuckDBConnection,
    statement: CompiledStatement,
    query: CompiledQuery,
    sources: readonly SourceDescriptor[],
    reads: ReadonlyMap<SourceDescriptor, ReadSet>,
    files: ReadonlyMap<SourceDescriptor, ReadFiles>,
    walksNewestFirst: boolean,
  ): Promise<Pick<EngineResult, 'rows' | 'columns'>> {
    if (query.caller !== undefined) {
      const run = (set: ReadonlyMap<SourceDescriptor, SourceFiles>) => executeCaller((sql) => this.callerStatements.statement(connection, sql), statement, query, set);
      const [only] = sources;
      // Each file's newest rows are all it reads: the heads that hold them instead of their files.
      if (query.newestRows !== undefined && sources.length === 1) {
        const newest = await this.newestRowsFiles(connection, query, only!, reads.get(only!)!, files.get(only!)!);
        try {
          return await run(new Map([[only!, newest.files]]));
        } finally {
          newest.release();
        }
      }
      // A chart's first step: the hour counts for the window's whole hours, the rows for the rest.
      const hourly = query.hourCounts !== undefined && sources.length === 1 ? await this.hourCountsFiles(connection, query, only!, reads.get(only!)!) : null;
      if (hourly !== null) {
        // Its texts read the source's tables with every column (`callerColumns` is the caller's own).
        const { callerColumns: _own, ...rest } = query;
        const text = { ...rest, caller: query.hourCounts!.caller, callerArraysFree: query.hourCounts!.callerArraysFree };
        return executeCaller((sql) => this.callerStatements.statement(connection, sql), statement, text, new Map([[only!, hourly]]));
      }
      if (query.firstRows === undefined || sources.length !== 1) return run(files);
      // Any rows that pass its filter are its answer: the newest days first (first-rows.ts).
      const whole = reads.get(only!)!;
      return firstRowsByDay(whole, query.firstRows, query.maxRows, async (part) => run(new Map([[only!, part === whole ? files.get(only!)! : await this.inputs.sourceFiles(connection, part)]])));
    }
    if (!walksNewestFirst) {
      // A stored rollup's rows this call's text keeps, kept per file version (narrowed-rollups.ts).
      const narrowed = new Map<SourceDescriptor, SourceFiles>();
      let lists: Record<string, readonly string[]> = {};
      for (const [source, f] of files) {
        const n = await this.narrowed.apply(source, rollupsNamedBy(statement, source), reads.get(source)!, f, query.params, (sql, rollup, path, text) => keysIn(connection, sql, rollup, path, text));
        narrowed.set(source, n.files);
        lists = { ...lists, ...n.lists };
      }
      return { rows: await this.executePrepared(connection, fullQuerySql(statement, narrowed), query, lists) };
    }
    const [only] = sources;
    const rows = await newestFirst({
      connection,
      sql: statement.sql,
      query,
      source: only!,
      read: reads.get(only!)!,
      files: files.get(only!)!,
      heads: this.headTables,
      execute: (set) => this.execute(connection, statement, query, new Map([[only!, set]])),
      executePrepared: (text, q) => this.executePrepared(connection, text, q),
      // The walk's texts are the statement's with a bound added: they read what it reads.
      fullSql: (text, set) => fullQuerySql({ ...statement, sql: text }, new Map([[only!, set]])),
      reader: this.reader(only!),
      relisted: () => this.inputs.sourceFiles(connection, reads.get(only!)!),
      cut: (list, limit, until) => this.minuteCut(connection, query, only!, list, limit, until),
    });
    return { rows };
  }

  /**
   * The files of a caller's SELECT that reads only each table's `newestRows` newest rows
   * (compile-query.ts): a compacted file's head (each project's newest rows of the file,
   * newest-heads.ts) instead of the file, where the head holds them (`headsServe`: no upper bound
   * inside its day), checked against its commit first (a damaged one is dropped and its file read).
   * The table's newest rows of a project are each file's newest of it, so they are among the heads;
   * the template's other bounds and its project filter keep them so. Without the statement's upper
   * bound known (no `newestFirst`), the files as they are. Studio's list of the gateway's last hour:
   * 4.4 - 4.8 against 9.3 - 9.8 ms bare (docs/performance.md, "The lists read from the heads").
   * Each day's heads come from one table in memory where they fit (head-tables.ts, as logs.all's
   * pages read them), and without an upper bound the events in memory from the memory's newest
   * table: no Parquet file opened and bound per call, nor every uncompacted event read
   * (docs/performance.md, "The lists from the head tables"). `release` once the statement ran.
   */
  private async newestRowsFiles(connection: DuckDBConnection, query: CompiledQuery, source: SourceDescriptor, read: ReadSet, files: ReadFiles): Promise<{ files: SourceFiles; release: () => void }> {
    const none = () => undefined;
    if (query.newestFirst === undefined) return { files, release: none };
    const until = query.params[query.newestFirst.until];
    const untilMicros = until && typeof until === 'object' ? until.timestamp : null;
    const limit = query.newestRows!;
    // The events in memory: none before the oldest of them, each project's newest of them without
    // an upper bound, as a file's head is for its file (logs.all's page reads them so: newest-first.ts).
    const memory = pageMemory(read.memory, read.memoryNewest, limit <= HEAD_ROWS_PER_PROJECT, untilMicros);
    const served = (f: ListedFile) => {
      const day = f.dataset ? partitionDay(f.path) : null;
      return f.head !== undefined && day !== null && headsServe(day, limit, untilMicros);
    };
    const candidates = read.parquet.filter(served);
    if (!candidates.length) {
      if (memory === read.memory) return { files, release: none };
      const { memory: _all, ...rest } = files;
      return { files: { ...rest, ...(memory ? { memory } : {}) }, release: none };
    }
    await this.reader(source).verifyCompanions(read, { heads: true, files: candidates });
    // A head whose check failed was dropped: its file is read.
    const heads = read.parquet.filter(served);
    // Each day's heads from one table in memory where they fit (head-tables.ts), else from their files.
    const held: HeldHeads[] = [];
    const release = () => {
      for (const h of held.splice(0)) h.release();
    };
    try {
      const byDay = new Map<string, ListedFile[]>();
      for (const f of heads) byDay.set(partitionDay(f.path)!, [...(byDay.get(partitionDay(f.path)!) ?? []), headOf(f)!]);
      const inTables = new Set<ListedFile>();
      const parquetTypes = (await this.inputs.sourceFiles(connection, { ...read, ndjson: [], ranges: [], parquet: [...byDay.values()].flat(), memory: undefined })).parquetTypes;
      for (const [day, dayHeads] of byDay) {
        const table = await this.headTables.hold(connection, source, day, dayHeads, parquetTypes);
        if (table === null) continue;
        held.push(table);
        for (const f of heads) if (partitionDay(f.path) === day) inTables.add(f);
      }
      const rest = await this.inputs.sourceFiles(connection, {
        ...read,
        parquet: read.parquet.filter((f) => !inTables.has(f)).map((f) => (served(f) ? headOf(f)! : f)),
        memory,
      });
      return { files: { ...rest, ...(held.length ? { held: held.map((h) => h.select) } : {}) }, release };
    } catch (error) {
      release();
      throw error;
    }
  }

  /**
   * The files of a caller's chart whose first step the hour counts may give (compile-query.ts,
   * `hourCounts`), or null to read the rows as they are: the compacted files with the stored
   * rollup of its definition holding rows and counting the query's field (checked against its commit first: a damaged one is
   * dropped and its file read), no row of them with its arrays flag true, whose day overlaps the window's whole
   * hours (`servedHours`), of which one has ended by the request's clock (`anHourHasPassed`). Their counts of those hours come from the rollup; their rows outside
   * them (a day only partly inside) from the file, and a day wholly inside is not read; every other
   * input (files without it, the write-ahead log, the memory tables) is read as rows. Studio's 7-day
   * gateway chart (docs/performance.md, "Studio's chart from the hour counts").
   */
  private async hourCountsFiles(connection: DuckDBConnection, query: CompiledQuery, source: SourceDescriptor, read: ReadSet): Promise<SourceFiles | null> {
    const hours = servedHours(query);
    const name = query.hourCounts!.hourly;
    const now = query.params.now;
    if (hours === null || !anHourHasPassed(hours, now && typeof now === 'object' ? now.timestamp : null)) return null;
    const arraysFree = (f: ListedFile) => f.arraysFree === true;
    // A rollup of no rows gives nothing; one that leaves the field out (its values vary too much
    // in that file: typed-hourly.ts) does not count it.
    const counts = (f: ListedFile) => {
      const rollup = f.rollups?.[name];
      return rollup !== undefined && (rollup.rows ?? 0) > 0 && !rollup.leftOut?.includes(query.hourCounts!.field);
    };
    const candidates = read.parquet.filter((f) => counts(f) && arraysFree(f) && dayWithin(f, hours) !== 'outside');
    if (!candidates.length) return null;
    await this.reader(source).verifyCompanions(read, { rollups: [name], files: candidates });
    const served = new Set(candidates.filter((f) => f.rollups?.[name] !== undefined));
    if (!served.size) return null;
    const inside = new Set([...served].filter((f) => dayWithin(f, hours) === 'inside'));
    const files = await this.inputs.sourceFiles(connection, { ...read, parquet: read.parquet.filter((f) => !inside.has(f)) });
    const partly = new Set([...served].filter((f) => !inside.has(f)).map((f) => f.path));
    const condition = hoursCondition(hours);
    return {
      ...files,
      parquet: files.parquet.filter((p) => !partly.has(p)),
      outside: { parquet: [...partly], where: condition.without },
      hourly: { name, companions: [...served].map((f) => f.rollups![name]!.path), where: condition.within },
    };
  }

  /** Tells `onTypedPaths` what each source's datasets hold now. */
  tellTypedPaths(): void {
    if (this.onTypedPaths) for (const [name, reader] of this.readers) this.onTypedPaths(name, reader.typedPaths());
  }

  private reader(source: SourceDescriptor): SourceReader {
    const reader = this.readers.get(source.name);
    if (!reader) throw new EngineError('query_failed', `No source is named ${source.name}.`);
    return reader;
  }

  /** Runs a statement over these files (a prepared statement kept per SQL text). */
  private async execute(connection: DuckDBConnection, statement: CompiledStatement, query: CompiledQuery, files: ReadonlyMap<SourceDescriptor, SourceFiles>): Promise<Record<string, EngineValue>[]> {
    return this.executePrepared(connection, fullQuerySql(statement, files), query);
  }

  /** Runs a full SQL text (a prepared statement kept per text). */
  private async executePrepared(
    connection: DuckDBConnection,
    text: string,
    query: Pick<CompiledQuery, 'params'>,
    lists: Readonly<Record<string, readonly string[]>> = {},
  ): Promise<Record<string, EngineValue>[]> {
    const prepared = await this.statements.statement(connection, text);
    bindRequest(prepared, query, lists);
    return (await prepared.runAndReadAll()).getRowObjects().map(toEngineRow);
  }

  /** Whether a failed read of one source deserves a fresh listing (see failed-reads.ts). */
  private retryable(connection: DuckDBConnection, error: unknown, source: SourceDescriptor, read: ReadSet, copies: Map<string, FileRange> | undefined): Promise<boolean> {
    return retryable(error, { connection, reader: this.reader(source), read, copies, inputs: this.inputs, closed: this.closed });
  }

  async checkPattern(pattern: string): Promise<string | null> {
    this.assertOpen();
    const known = this.patterns.get(pattern);
    if (known !== undefined) return known;
    const verdict = await this.onControl(async () => {
      try {
        await this.control.run("SELECT regexp_matches('', $pattern)", { pattern }, { pattern: VARCHAR });
        return null;
      } catch (error) {
        return String((error as Error).message).replace(/^[A-Za-z ]*Error: /, '');
      }
    });
    if (this.patterns.size >= 1024) this.patterns.clear();
    this.patterns.set(pattern, verdict);
    return verdict;
  }

  async ping(): Promise<void> {
    this.assertOpen();
    await this.onControl(() => this.control.run('SELECT 1'));
  }

  async inspectSources(): Promise<SourceInspection[]> {
    this.assertOpen();
    return this.gate.run(() =>
      this.pool.withConnection(async (connection) => {
        const out: SourceInspection[] = [];
        for (const source of this.sourceSet.list) {
          // The same snapshot a query takes, memory included (its rows stay until we are done).
          const leave = this.memory?.enter();
          try {
            // As a query does: a file found damaged (or with a line too long) is listed, not thrown.
            for (let attempt = 1; ; attempt++) {
              const read = await this.reader(source).snapshot();
              let files: ReadFiles | undefined;
              try {
                // Every data file's rows are counted: each is checked against its commit first.
                await this.reader(source).verifyRows(read);
                files = await this.inputs.sourceFiles(connection, read);
                out.push(await inspectSource(connection, source, read, files));
                break;
              } catch (error) {
                if (!(await this.retryable(connection, error, source, read, files?.copies))) throw error;
                if (attempt >= MAX_ATTEMPTS) throw keptChanging(error);
              }
            }
          } finally {
            leave?.();
          }
        }
        return out;
      }),
    );
  }

  heldBytes(): DuckDBBytes {
    return this.held.latest;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.pool.interruptAll();
    await this.controlQueue.catch(() => undefined);
    // Wait for interrupted queries to hand their connections back before closing DuckDB.
    await this.pool.drained();
    await this.relief?.close();
    await this.held.close();
    this.statements.destroyAll();
    this.callerStatements.destroyAll();
    this.pool.closeIdle();
    await this.memory?.settled();
    await this.memory?.close();
    this.control.closeSync();
    this.instance.closeSync();
    this.inputs.close();
  }

  /** The control connection answers one small query at a time, outside the query gate. */
  private onControl<T>(work: () => Promise<T>): Promise<T> {
    const next = this.controlQueue.then(work, work);
    this.controlQueue = next.catch(() => undefined);
    return next;
  }

  private assertOpen(): void {
    if (this.closed) throw new EngineError('closed', 'The endpoints were closed.');
  }
}
