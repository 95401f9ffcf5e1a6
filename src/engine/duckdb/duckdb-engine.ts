import {
  type DuckDBConnection,
  type DuckDBInstance,
  type DuckDBPreparedStatement,
  DuckDBTimestampValue,
  BIGINT,
  DOUBLE,
  TIMESTAMP,
  VARCHAR,
  type DuckDBType,
  type DuckDBValue,
} from '@duckdb/node-api';
import { EngineError, LogEndpointsError } from '../../errors';
import type {
  Engine,
  EngineParam,
  EngineRequest,
  EngineResult,
  EngineValue,
  SourceInspection,
  SourceName,
} from '../engine';
import { QueryGate } from '../../util/query-gate';
import { existsSync, statSync } from 'node:fs';
import type { SkipReason } from '../../files/file-checks';
import type { ListedFile } from '../../files/list-glob';
import { companionsOf, SourceReader, type ExtraInputs, type FileRange, type ReadSet } from '../../files/source-reader';
import { earliestDayOf } from './list-files';
import { parquetSchema } from '../../duckdb/parquet-schema';
import { RangeCopies } from '../../files/range-copies';
import { LongLineCopies } from '../../files/long-line-copies';
import type { MemoryTables } from '../../managed/memory-tables';
import { memoryLimitBytes, openDatabase, type DatabaseSettings, type MemoryRelief } from '../../duckdb/open-database';
import { ceilingFor, MemoryWatch } from './memory-watch';
import { emptyNdjsonFile } from '../../duckdb/empty-ndjson-file';
import { NOT_A_COMMIT_MARKER, sourceRelation, type SourceFiles } from '../../duckdb/source-relations';
import { sqlStringList } from '../../duckdb/sql-literal';
import { newestFirst } from './newest-first';
import { HeadTables } from './head-tables';
import { composeSandboxedSql, splitEndpointSql } from '../../sandbox/compose-sandboxed-sql';
import { validateCallerSql, type CallerDialect, type CheckedSql } from '../../sandbox/validate-caller-sql';
import { sourcesNamedBy, sourceTablesStatement } from '../../sandbox/source-tables';
import { checkBigQuery } from '../../bigquery/translate-bigquery';
import { bigQuerySchemaOf } from '../../bigquery/schema-of-sources';
import type { BigQuerySchema } from '../../bigquery/schema';
import { callerDialectRefused } from '../caller-dialect';
import { callerColumns, callerRows } from './caller-results';
import { callerSqlError, namesAFile } from './caller-errors';
import type { SourceDescriptor, SourceRollup } from '../../sources/source-descriptor';
import { relationsOf, type SourceSet } from '../../sources/source-set';
import { codeOnly } from '../../sql/sql-scan';
import { monotonicMs } from '../../time/clock';

/** One glob or a list of globs per source; relative globs resolve against the working directory. */
export type SourceGlobs = Partial<Record<SourceName, string | readonly string[]>>;

export interface DuckDBEngineOptions extends DatabaseSettings {
  /** The instance's sources: what a statement may read (each source's relation and rollups). */
  sourceSet: SourceSet;
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

/** Prepared statements kept per connection (least recently used dropped first). */
const STATEMENTS_PER_CONNECTION = 16;

/**
 * Reads of one query: a file that vanishes or turns out damaged between the listing and the read
 * sends the query back to a fresh listing, at most this many times (docs/semantics.md, "Files").
 */
const MAX_ATTEMPTS = 8;

/**
 * The sources a statement reads: those whose relation it names (`FROM edge_logs`, a join, a CTE
 * over it), not counting a name it only defines as a CTE of its own (logs.all's empty
 * `function_edge_logs`). Reading a source costs a listing of its files; naming one it does not
 * have would fail the statement at start (definitions are prepared then).
 */
export function sourcesReadBy(sql: string, sources: SourceSet): SourceDescriptor[] {
  // A rollup (function_edge_logs_hourly) is read over its source's relation: naming it reads the source.
  return sources.list.filter((d) => relationsOf(d).some((relation) => namesRelation(sql, relation)));
}

/** Whether a statement reads a relation by name (not only defines a CTE of that name), kept per SQL text and name. */
const NAMED = new Map<string, boolean>();
function namesRelation(sql: string, relation: string): boolean {
  const key = `${relation}\n${sql}`;
  let known = NAMED.get(key);
  if (known === undefined) {
    if (NAMED.size >= 1024) NAMED.clear();
    NAMED.set(key, (known = scanNamesRelation(sql, relation)));
  }
  return known;
}

function scanNamesRelation(sql: string, relation: string): boolean {
  const uses = [...codeOnly(sql).matchAll(new RegExp(`(?<![\\w$.])${relation}(?![\\w(])(\\s+AS\\s*\\()?`, 'gi'))];
  return uses.some((m) => m[1] === undefined);
}

/**
 * The complete SQL DuckDB runs for a statement over the given files: each source relation it
 * reads as a CTE, then the statement itself. Parameters stay named placeholders. With `caller`,
 * the caller's SELECT replaces the statement's outer SELECT (docs/sandboxing.md).
 */
export function fullQuerySql(sql: string, files: ReadonlyMap<SourceDescriptor, SourceFiles>, caller?: { sql: string; maxRows: number }): string {
  const sources = [...files];
  // Each rollup the statement names follows its source's relation, as its SQL over that relation.
  const relations = sources.flatMap(([source, f]) => [
    `${source.relation} AS (\n${sourceRelation(source, f)}\n)`,
    ...Object.entries(source.rollups).filter(([name]) => namesRelation(sql, name)).map(([name, r]) => `${name} AS (\n${rollupRelation(source, f, name, r)}\n)`),
  ]);
  const own = /^((?:\s*--[^\n]*\n)*)\s*WITH\s/i.exec(sql);
  // A statement whose CTEs shadow a relation (logs.all's `edge_logs`, already limited to one
  // project) runs inside the relations, as does every caller's SELECT: the relations themselves
  // are then out of their reach.
  const shadows = own !== null && ownCtes(sql).some((t) => sources.some(([source]) => source.relation === t));
  if (caller || shadows) {
    const inner = caller ? composeSandboxedSql(sql, caller.sql, caller.maxRows) : sql;
    return relations.length ? `WITH ${relations.join(',\n')}\nSELECT * FROM (\n${inner}\n)` : inner;
  }
  if (!relations.length) return sql;
  // A statement with CTEs of its own (`WITH buckets AS ...`) gets the relations as its first CTEs.
  return own ? `${own[1]}WITH ${relations.join(',\n')},\n${sql.slice(own[0].length)}` : `WITH ${relations.join(',\n')}\n${sql}`;
}

/**
 * A rollup's relation (docs/definitions.md, "Rollups"): the stored rollups of the Parquet files
 * that have one, and the rollup's SQL over everything else the source reads (NDJSON, byte ranges,
 * memory, Parquet files without it), whose relation is built by `sourceRelation` as the source's
 * is. Rows of one bucket may come from several parts: the endpoints' SQL re-aggregates.
 */
function rollupRelation(source: SourceDescriptor, files: SourceFiles, name: string, rollup: SourceRollup): string {
  const stored = files.stored?.[name];
  if (!stored?.companions.length) return rollup.sql;
  // What is not stored is computed on every query: by the rollup's cheaper SQL when it has one.
  const sql = rollup.rest ?? rollup.sql;
  const read = `SELECT * FROM read_parquet(${sqlStringList(stored.companions)})`;
  const covered = new Set(stored.dataFiles);
  const rest: SourceFiles = { ...files, parquet: files.parquet.filter((p) => !covered.has(p)) };
  if (!rest.ndjson.length && !rest.parquet.length && !rest.memory && !rest.held?.length) return read;
  return `${read}\nUNION ALL BY NAME\nSELECT * FROM (\nWITH ${source.relation} AS (\n${sourceRelation(source, rest)}\n)\n${sql}\n)`;
}

/**
 * Whether a rollup variant may run over these reads: every Parquet file of the window has the stored
 * rollups the statement names, and there is at least one (docs/definitions.md, "Rollups"). Otherwise
 * the rollup would be computed mostly from raw rows, slower than the endpoint's base statement.
 */
export function rollupsStored(sql: string, reads: ReadonlyMap<SourceDescriptor, ReadSet>): boolean {
  for (const [source, read] of reads) {
    for (const name of Object.keys(source.rollups).filter((n) => namesRelation(sql, n))) {
      if (read.parquet.length === 0 || read.parquet.some((f) => !f.rollups?.[name])) return false;
    }
  }
  return true;
}

/** The CTE names a statement defines, kept per SQL text (every query builds its SQL again). */
const CTES = new Map<string, readonly string[]>();
function ownCtes(sql: string): readonly string[] {
  let known = CTES.get(sql);
  if (!known) {
    if (CTES.size >= 256) CTES.clear();
    CTES.set(sql, (known = splitEndpointSql(sql).tables));
  }
  return known;
}

/**
 * Creates the in-process DuckDB engine over the configured log files.
 *
 * @example
 * const engine = await createDuckDBEngine({ sourceSet: BUILT_IN_SOURCE_SET, sources: { edgeLogs: 'logs/edge/*.ndjson' } });
 */
export async function createDuckDBEngine(options: DuckDBEngineOptions): Promise<Engine> {
  const { instance, connection, relief } = await openDatabase(options);
  options.memory?.attach(instance);
  // The limit in force (DuckDB's default when none is set: 80% of RAM) sets the callers' ceiling.
  const limit = memoryLimitBytes(String((await connection.runAndReadAll("SELECT current_setting('memory_limit')")).getRows()[0]?.[0]));
  return new DuckDBEngine(instance, connection, options, relief, limit === null ? null : new MemoryWatch(ceilingFor(limit)));
}

class DuckDBEngine implements Engine {
  private readonly readers = new Map<SourceDescriptor, SourceReader>();
  private readonly sourceSet: SourceSet;
  /** The tables a BigQuery SELECT may read (one per source), built on first use. */
  private bigQuerySchema: BigQuerySchema | undefined;
  private readonly memory: MemoryTables | undefined;
  /** Days' heads held as tables in memory (logs.all's pages read one per day). */
  private readonly headTables = new HeadTables((sql) => this.onControl(() => this.control.run(sql)));
  private readonly ranges = new RangeCopies();
  /** NDJSON file versions holding a line too long for DuckDB: read from a copy without such lines. */
  private readonly longLined = new Set<string>();
  private readonly longLines = new LongLineCopies();
  private readonly gate: QueryGate;
  private readonly timeoutMs: number;
  private readonly idle: DuckDBConnection[] = [];
  private readonly busy = new Set<DuckDBConnection>();
  private readonly parquetTypes = new Map<string, ReadonlyMap<string, string>>();
  private readonly patterns = new Map<string, string | null>();
  private readonly statementSources = new Map<string, SourceDescriptor[]>();
  private readonly statements = new Map<DuckDBConnection, Map<string, DuckDBPreparedStatement>>();
  private controlQueue: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly instance: DuckDBInstance,
    private readonly control: DuckDBConnection,
    options: DuckDBEngineOptions,
    private readonly relief: MemoryRelief | null = null,
    /** Stops callers' queries past the process's ceiling (docs/sandboxing.md, "Limits"). */
    private readonly watch: MemoryWatch | null = null,
  ) {
    const list = (g: string | readonly string[] | undefined) => (g === undefined ? [] : typeof g === 'string' ? [g] : [...g]);
    this.memory = options.memory;
    // Every source of the instance (the built-ins and the user's): a statement may read any of them.
    this.sourceSet = options.sourceSet;
    for (const d of this.sourceSet.list) this.readers.set(d, new SourceReader(list(options.sources[d.name]), options.extraInputs?.[d.name], d));
    this.gate = new QueryGate({
      maxConcurrent: options.maxConcurrentQueries ?? 4,
      maxQueued: options.maxQueuedQueries ?? 64,
      // Out of the memory limit beside other queries: it may fit alone, so it runs again alone.
      retryAloneWhen: isOutOfMemory,
    });
    this.timeoutMs = options.queryTimeoutMs ?? 30_000;
  }

  readonly dialect = 'duckdb' as const;

  async run(request: EngineRequest): Promise<EngineResult> {
    this.assertOpen();
    // A caller's SQL over source tables reads the tables of the sources it names, no others.
    const tables = request.sql !== undefined ? request.statement.sourceTables?.duckdb : undefined;
    const variantSql = tables === undefined ? statementSql(request) : sourceTablesStatement(tables, sourcesNamedBy(request.sql!, this.sourceSet.list));
    return this.gate.run(() => this.withConnection(async (connection) => {
      const started = monotonicMs();
      const sources = this.sourcesOf(variantSql);
      // In-memory events a compaction covers stay until this query is done with its snapshot.
      const leave = this.memory?.enter();
      try {
      for (let attempt = 1; ; attempt++) {
        const reads = new Map<SourceDescriptor, ReadSet>();
        for (const source of sources) reads.set(source, await this.reader(source).snapshot(earliestDayOf(request.notBefore)));
        const files = new Map<SourceDescriptor, SourceFiles & { copies: Map<string, FileRange> }>();
        // The stored rollups the variant reads hold the bytes their commits recorded (a damaged one
        // is dropped: its file's rows stand in), checked before the variant is chosen.
        for (const [source, read] of reads) await this.reader(source).verifyCompanions(read, { rollups: rollupsNamedBy(variantSql, source) });
        // A rollup variant whose rollups are not stored for this read runs as the base statement.
        const sql = request.statement.fallback && !rollupsStored(variantSql, reads) ? statementSql({ ...request, statement: { ...request.statement, sql: request.statement.fallback } }) : variantSql;
        const walksNewestFirst = request.statement.newestFirst && sources.length === 1 && request.sql === undefined;
        // So do the data files whose rows the statement reads (a newest-first walk checks each
        // day's as it reaches it); those that do not are left out, named.
        if (!walksNewestFirst) for (const [source, read] of reads) await this.reader(source).verifyRows(read, rowsRead(sql, source, read));
        // Taken once the statement ran: a newest-first walk names what it leaves out as it goes.
        const skippedFiles = () => [...reads.values()].flatMap((r) => r.skipped);
        try {
          for (const [source, read] of reads) files.set(source, await this.sourceFiles(connection, read));
          if (request.sql !== undefined) {
            return { ...(await this.executeCaller(connection, sql, request, files)), engineMs: monotonicMs() - started, skippedFiles: skippedFiles() };
          }
          const [only] = sources;
          const rows = walksNewestFirst
            ? await newestFirst({
              connection, sql, request, source: only!, read: reads.get(only!)!, files: files.get(only!)!, heads: this.headTables,
              execute: (set) => this.execute(connection, sql, request, new Map([[only!, set]])),
              executePrepared: (text, r) => this.executePrepared(connection, text, r),
              fullSql: (text, set) => fullQuerySql(text, new Map([[only!, set]])),
              reader: this.reader(only!),
              relisted: () => this.sourceFiles(connection, reads.get(only!)!),
            })
            : await this.execute(connection, sql, request, files);
          return { rows, engineMs: monotonicMs() - started, skippedFiles: skippedFiles() };
        } catch (error) {
          if (request.sql !== undefined) await this.blameCaller(error, connection, sql, request, reads, files);
          let retry = false;
          for (const [source, read] of reads) if (await this.retryable(connection, error, source, read, files.get(source)?.copies)) retry = true;
          if (!retry) throw error;
          if (attempt >= MAX_ATTEMPTS) {
            throw new EngineError('overloaded', 'The log files kept changing while they were read; retry shortly.', { cause: error, retryAfterSeconds: 1 });
          }
        }
      }
      } finally {
        leave?.();
      }
    }, request.sql !== undefined));
  }

  /**
   * Runs a caller's SELECT over the statement's CTEs (docs/sandboxing.md). Prepared for this call
   * only: callers' texts are many, and must not push the dashboard's statements out.
   */
  private async executeCaller(connection: DuckDBConnection, sql: string, request: EngineRequest, files: ReadonlyMap<SourceDescriptor, SourceFiles>): Promise<Pick<EngineResult, 'rows' | 'columns'>> {
    const prepared = await connection.prepare(fullQuerySql(sql, files, { sql: request.sql!, maxRows: request.maxRows }));
    try {
      bindRequest(prepared, request);
      const reader = await prepared.runAndReadAll();
      const columns = callerColumns(reader);
      return { rows: callerRows(reader, columns), columns };
    } finally {
      prepared.destroySync();
    }
  }

  /**
   * Throws the caller's `400 invalid_sql` when a failed caller's SELECT is the caller's fault: an
   * error of the kinds SQL causes (a missing column, a failed cast). One that names a log file may
   * be the file's: it is the caller's only if the statement's own query reads the same files fine.
   * Otherwise returns, and the error takes the engine's usual way (a damaged file left out, ...).
   */
  private async blameCaller(
    error: unknown,
    connection: DuckDBConnection,
    sql: string,
    request: EngineRequest,
    reads: ReadonlyMap<SourceDescriptor, ReadSet>,
    files: ReadonlyMap<SourceDescriptor, SourceFiles & { copies: Map<string, FileRange> }>,
  ): Promise<void> {
    const paths = [...reads].flatMap(([source, read]) => [
      ...read.ndjson.map((f) => f.path), ...read.ranges.map((r) => r.file.path), ...read.parquet.map((f) => f.path), ...(files.get(source)?.copies.keys() ?? []),
    ]);
    const refusal = callerSqlError(error, paths);
    if (refusal === null) return;
    if (namesAFile(error, paths)) {
      try {
        await this.execute(connection, sql, { ...request, sql: undefined }, files);
      } catch {
        return;
      }
    }
    throw refusal;
  }

  /**
   * Checks a caller's SELECT against the sandbox's rules: over the statement's CTEs, or over a
   * table per source of this engine when the statement has source tables. A BigQuery SELECT is
   * translated first, and its DuckDB text is what the rules check and what runs.
   */
  async checkSql(statement: EngineRequest['statement'], sql: string, maxRows: number, dialect: CallerDialect = 'duckdb'): Promise<CheckedSql> {
    this.assertOpen();
    const serialize = (text: string) =>
      this.onControl(async () => String((await this.control.runAndReadAll('SELECT json_serialize_sql($sql::VARCHAR)', { sql: text }, { sql: VARCHAR })).getRows()[0]![0]));
    const sources = statement.sourceTables ? this.sourceSet.list : null;
    const tables = sources ? sources.map((s) => s.relation) : splitEndpointSql(statementSql({ statement, params: {}, maxRows })).tables;
    if (dialect === 'duckdb') return validateCallerSql(sql, { tables, maxRows }, serialize);
    if (!sources) throw callerDialectRefused(statement.name);
    const checked = await checkBigQuery(sql, this.bigQuerySchema ??= bigQuerySchemaOf(sources), 'duckdb', { tables, maxRows }, serialize);
    return { sql: checked.sql, key: checked.key, columns: checked.columns };
  }

  /** Prepares a statement over empty sources: null when it would run, else DuckDB's reason. */
  async checkStatement(statement: EngineRequest['statement']): Promise<string | null> {
    this.assertOpen();
    let sql: string;
    try {
      sql = statementSql({ statement, params: {}, maxRows: 1 });
    } catch (error) {
      return (error as Error).message;
    }
    const empty = new Map<SourceDescriptor, SourceFiles>();
    for (const source of this.sourcesOf(sql)) empty.set(source, { ndjson: [], parquet: [], parquetTypes: new Map() });
    return this.onControl(async () => {
      try {
        const prepared = await this.control.prepare(fullQuerySql(sql, empty));
        prepared.destroySync();
        return null;
      } catch (error) {
        return String((error as Error).message).split('\n')[0]!.replace(/^[A-Za-z ]*Error: /, '');
      }
    });
  }

  private reader(source: SourceDescriptor): SourceReader {
    const reader = this.readers.get(source);
    if (!reader) throw new EngineError('query_failed', `No source is named ${source.name}.`);
    return reader;
  }

  /** The sources a statement reads (kept per SQL text). */
  private sourcesOf(sql: string): SourceDescriptor[] {
    let known = this.statementSources.get(sql);
    if (!known) {
      if (this.statementSources.size >= 256) this.statementSources.clear();
      this.statementSources.set(sql, (known = sourcesReadBy(sql, this.sourceSet)));
    }
    return known;
  }

  /** Runs a statement over these files (a prepared statement kept per SQL text). */
  private async execute(connection: DuckDBConnection, sql: string, request: EngineRequest, files: ReadonlyMap<SourceDescriptor, SourceFiles>): Promise<Record<string, EngineValue>[]> {
    return this.executePrepared(connection, fullQuerySql(sql, files), request);
  }

  /** Runs a full SQL text (a prepared statement kept per text). */
  private async executePrepared(connection: DuckDBConnection, text: string, request: EngineRequest): Promise<Record<string, EngineValue>[]> {
    const prepared = await this.statement(connection, text);
    bindRequest(prepared, request);
    return (await prepared.runAndReadAll()).getRowObjects().map(toEngineRow);
  }

  /**
   * Whether a failed read deserves a fresh listing: a file vanished or changed since it was listed
   * (rotation, a compaction moving it), or the engine named a file it cannot read, which is then
   * kept out of answers (and told) until it changes.
   */
  private async retryable(connection: DuckDBConnection, error: unknown, source: SourceDescriptor, read: ReadSet, copies: Map<string, FileRange> | undefined): Promise<boolean> {
    if (error instanceof EngineError || this.closed) return false;
    const message = String((error as Error)?.message ?? error);
    if (/interrupt|out of memory/i.test(message)) return false;
    // A shortage of the process, not a fault of the file: never a reason to leave a file out.
    if (/too many open files|resource temporarily unavailable|cannot allocate memory/i.test(message)) return false;
    const listed: ListedFile[] = [...read.ndjson, ...read.ranges.map((r) => r.file), ...read.parquet];
    if (listed.some(changedSinceListed)) return true;
    if ((error as NodeJS.ErrnoException)?.code === 'ENOENT') return true;
    let marked = false;
    for (const [copy, range] of copies ?? []) {
      if (message.includes(copy)) listed.push(range.file);
    }
    // A line too long for the reader costs that line only: the file is read again without it.
    if (/"maximum_object_size" of \d+ bytes exceeded/.test(message)) {
      const named = listed.filter((f) => f.kind === 'ndjson' && !this.longLined.has(versionKey(f)) && (message.includes(f.path) || [...(copies ?? [])].some(([copy, r]) => r.file === f && message.includes(copy))));
      for (const file of named) this.longLined.add(versionKey(file));
      if (named.length) return true;
    }
    for (const file of listed) {
      // A head or stored rollup the engine cannot read is left aside: its data file is read instead (not a skip).
      const companion = companionsOf(file).find((c) => message.includes(c.path));
      if (companion) {
        this.reader(source).markDamaged(companion, 'unreadable_by_engine', engineDetail(message, companion.path));
        marked = true;
        continue;
      }
      if (!message.includes(file.path) && ![...(copies ?? [])].some(([copy, r]) => r.file === file && message.includes(copy))) continue;
      this.reader(source).markDamaged(file, damageReason(file, message), engineDetail(message, file.path));
      marked = true;
    }
    if (!marked && UNNAMED_DAMAGE.test(message)) marked = await this.findDamaged(connection, source, read.parquet, message);
    return marked;
  }

  /**
   * The engine failed on damaged Parquet without naming the file (a garbled page header): each
   * Parquet file of the read (and head) is decoded whole, alone, and those that fail are kept out
   * like a named one. Only after such a failure, and once per file version (the marks stay).
   */
  private async findDamaged(connection: DuckDBConnection, source: SourceDescriptor, parquet: readonly ListedFile[], message: string): Promise<boolean> {
    let found = false;
    for (const file of parquet) {
      const companions = companionsOf(file);
      for (const candidate of [file, ...companions]) {
        try {
          await connection.run(`SELECT min(hash(COLUMNS(*))) FROM read_parquet(${sqlStringList([candidate.path])})`);
        } catch (error) {
          const detail = String((error as Error)?.message ?? error);
          if (/interrupt/i.test(detail)) throw error;
          this.reader(source).markDamaged(candidate, candidate !== file ? 'unreadable_by_engine' : damageReason(candidate, detail), engineDetail(detail || message, candidate.path));
          found = true;
        }
      }
    }
    return found;
  }

  /**
   * A prepared statement of this SQL on this connection, kept while the file list (and so the
   * SQL) stays the same: a dashboard asks the same few questions over and over.
   */
  private async statement(connection: DuckDBConnection, sql: string): Promise<DuckDBPreparedStatement> {
    let statements = this.statements.get(connection);
    if (!statements) this.statements.set(connection, (statements = new Map()));
    const known = statements.get(sql);
    if (known) {
      statements.delete(sql);
      statements.set(sql, known);
      return known;
    }
    const prepared = await connection.prepare(sql);
    statements.set(sql, prepared);
    if (statements.size > STATEMENTS_PER_CONNECTION) {
      const [oldestSql, oldest] = statements.entries().next().value!;
      statements.delete(oldestSql);
      oldest.destroySync();
    }
    return prepared;
  }

  async checkPattern(pattern: string): Promise<string | null> {
    this.assertOpen();
    const known = this.patterns.get(pattern);
    if (known !== undefined) return known;
    const verdict = await this.onControl(async () => {
      try {
        await this.control.run('SELECT regexp_matches(\'\', $pattern)', { pattern }, { pattern: VARCHAR });
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
    return this.gate.run(() => this.withConnection(async (connection) => {
      const out: SourceInspection[] = [];
      for (const source of this.readers.keys()) {
        // The same snapshot a query takes, memory included (its rows stay until we are done).
        const leave = this.memory?.enter();
        try {
          // As a query does: a file found damaged (or with a line too long) is listed, not thrown.
          for (let attempt = 1; ; attempt++) {
            const read = await this.reader(source).snapshot();
            let files: SourceFiles & { copies: Map<string, FileRange> } | undefined;
            // Every data file's rows are counted: each is checked against its commit first.
            await this.reader(source).verifyRows(read);
            try {
              files = await this.sourceFiles(connection, read);
              out.push(await this.inspect(connection, source, read, files));
              break;
            } catch (error) {
              if (!(await this.retryable(connection, error, source, read, files?.copies))) throw error;
              if (attempt >= MAX_ATTEMPTS) {
                throw new EngineError('overloaded', 'The log files kept changing while they were read; retry shortly.', { cause: error, retryAfterSeconds: 1 });
              }
            }
          }
        } finally {
          leave?.();
        }
      }
      return out;
    }));
  }

  /** Counts of one source over one snapshot (see `inspectSources`). */
  private async inspect(connection: DuckDBConnection, source: SourceDescriptor, read: ReadSet, files: SourceFiles): Promise<SourceInspection> {
    let lines = 0, skippedLines = 0, parquetRows = 0;
    if (files.ndjson.length) {
      const r = await connection.runAndReadAll(`
        SELECT count(*) FILTER (WHERE ${NOT_A_COMMIT_MARKER}) AS lines,
               count(*) FILTER (WHERE json IS NULL OR json_type(json) <> 'OBJECT') AS skipped
        FROM read_json_objects(${sqlStringList([...files.ndjson, emptyNdjsonFile()])}, format = 'newline_delimited',
                               compression = 'auto_detect', ignore_errors = true)`);
      const [row] = r.getRowObjects();
      lines = Number(row?.lines ?? 0);
      skippedLines = Number(row?.skipped ?? 0);
    }
    if (files.memory) {
      // Managed storage's acknowledged lines not compacted yet, held in memory instead of read
      // from their segments: lines all the same, each one event (ingest checked them).
      const r = await connection.runAndReadAll(`SELECT count(*) AS n FROM (${files.memory})`);
      lines += Number(r.getRowObjects()[0]?.n ?? 0);
    }
    if (files.parquet.length) {
      const r = await connection.runAndReadAll(`SELECT count(*) AS n FROM read_parquet(${sqlStringList(files.parquet)}, union_by_name = true)`);
      parquetRows = Number(r.getRowObjects()[0]?.n ?? 0);
    }
    return {
      source: source.name,
      files: read.ndjson.length + read.ranges.length + read.parquet.length,
      lines,
      skippedLines,
      parquetRows,
      globs: read.globs,
      emptyGlobs: read.globs.filter((g) => g.files === 0).map((g) => g.glob),
      skippedFiles: read.skipped,
      coveredFiles: read.covered.length,
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const connection of this.busy) connection.interrupt();
    await this.controlQueue.catch(() => undefined);
    // Wait for interrupted queries to hand their connections back before closing DuckDB.
    while (this.busy.size) await new Promise((resolve) => setTimeout(resolve, 5));
    await this.relief?.close();
    for (const statements of this.statements.values()) for (const prepared of statements.values()) prepared.destroySync();
    this.statements.clear();
    for (const connection of this.idle) connection.closeSync();
    await this.memory?.settled();
    this.memory?.close();
    this.control.closeSync();
    this.instance.closeSync();
    this.ranges.close();
    this.longLines.close();
  }

  /** The SQL inputs of a read: whole files, range copies, and the Parquet schema (kept per file set). */
  private async sourceFiles(connection: DuckDBConnection, read: ReadSet): Promise<SourceFiles & { copies: Map<string, FileRange> }> {
    const copies = new Map<string, FileRange>();
    for (const range of read.ranges) {
      const copy = await this.ranges.copy(range);
      const key = versionKey(range.file);
      copies.set(this.longLined.has(key) ? await this.longLines.copy(copy, `${key}\0${copy}\0${range.start}\0${range.end}`) : copy, range);
    }
    const whole: string[] = [];
    for (const file of read.ndjson) {
      const key = versionKey(file);
      if (!this.longLined.has(key)) whole.push(file.path);
      else copies.set(await this.longLines.copy(file.path, key), { file, start: 0, end: file.size });
    }
    const ndjson = [...whole, ...copies.keys()];
    const parquet = read.parquet.map((f) => f.path);
    const parquetTypes = parquet.length ? await this.describeParquet(connection, read.parquet) : new Map<string, string>();
    const stored: Record<string, { companions: string[]; dataFiles: string[] }> = {};
    for (const file of read.parquet) {
      for (const [name, rollup] of Object.entries(file.rollups ?? {})) {
        const entry = (stored[name] ??= { companions: [], dataFiles: [] });
        entry.companions.push(rollup.path);
        entry.dataFiles.push(file.path);
      }
    }
    return { ndjson, parquet, parquetTypes, copies, stored, ...(read.memory ? { memory: read.memory } : {}) };
  }

  private async describeParquet(connection: DuckDBConnection, files: readonly ListedFile[]): Promise<ReadonlyMap<string, string>> {
    // Keyed by each file's version too: a file rewritten under the same name is described again.
    const key = files.map((f) => `${f.path}\0${f.size}\0${f.mtimeMs}`).join('\n');
    const known = this.parquetTypes.get(key);
    if (known) return known;
    const types = await parquetSchema(connection, files.map((f) => f.path));
    if (this.parquetTypes.size >= 16) this.parquetTypes.clear();
    this.parquetTypes.set(key, types);
    return types;
  }

  private async withConnection<T>(work: (connection: DuckDBConnection) => Promise<T>, caller = false): Promise<T> {
    this.assertOpen();
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
      if (timedOut || stopped) throw new Error('finished after its time limit or memory ceiling');
      return result;
    } catch (error) {
      stopped ||= unwatch?.() ?? false;
      if (stopped) {
        throw new EngineError('overloaded', `The query was stopped: the process grew past its memory ceiling (${Math.round(this.watch!.ceilingBytes / 2 ** 20)} MiB) while it ran.`, { cause: error, retryAfterSeconds: 1 });
      }
      // Ours already (an engine error, a caller's SQL refused): as it is.
      if (error instanceof LogEndpointsError) throw error;
      if (timedOut) throw new EngineError('timeout', `The query ran past its time limit of ${this.timeoutMs} ms.`, { cause: error });
      if (this.closed) throw new EngineError('closed', 'The endpoints were closed.', { cause: error });
      // Past the memory limit under concurrent queries: a retry later can succeed, so 503.
      if (/Out of Memory Error/i.test(String((error as Error)?.message))) {
        throw new EngineError('overloaded', 'The engine is out of memory for now; retry shortly.', { cause: error, retryAfterSeconds: 1 });
      }
      throw new EngineError('query_failed', 'The query failed in the engine.', { cause: error });
    } finally {
      clearTimeout(timer);
      clearInterval(repeat);
      this.busy.delete(connection);
      if (this.closed) connection.closeSync();
      else this.idle.push(connection);
      // Past the memory limit, freed memory goes back to the system (see MemoryRelief).
      this.relief?.afterQuery();
    }
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

/** One version of a file: a file rewritten or grown is another. */
function versionKey(file: ListedFile): string {
  return `${file.path}\0${file.size}\0${file.mtimeMs}\0${file.ino}`;
}

/** DuckDB ran out of its memory limit (mapped to `overloaded` by `withConnection`). */
function isOutOfMemory(error: unknown): boolean {
  return error instanceof EngineError && error.code === 'overloaded' && /Out of Memory/i.test(String((error.cause as Error | undefined)?.message));
}

/** Binds a request's parameters (and `$max_rows`) to a prepared statement of its query. */
export function bindRequest(prepared: DuckDBPreparedStatement, request: EngineRequest): void {
  const { values, types } = bindings({ ...request.params, max_rows: request.maxRows }, prepared.parameterCount, (i) => prepared.parameterName(i));
  prepared.bind(values, types);
}

/** Turns named engine parameters into DuckDB values and types, in the statement's own order. */
function bindings(
  params: Readonly<Record<string, EngineParam>>,
  count: number,
  nameOf: (index: number) => string,
): { values: Record<string, DuckDBValue>; types: Record<string, DuckDBType> } {
  const values: Record<string, DuckDBValue> = {};
  const types: Record<string, DuckDBType> = {};
  for (let i = 1; i <= count; i++) {
    const name = nameOf(i);
    if (!(name in params)) throw new Error(`No value for query parameter $${name}`);
    const value = params[name];
    if (value === null || value === undefined) {
      values[name] = null;
    } else if (typeof value === 'string') {
      values[name] = value;
      types[name] = VARCHAR;
    } else if (typeof value === 'number') {
      // Whole numbers as BIGINT (declared integer parameters go to 15 digits), others as DOUBLE.
      values[name] = Number.isInteger(value) ? BigInt(value) : value;
      types[name] = Number.isInteger(value) ? BIGINT : DOUBLE;
    } else {
      values[name] = new DuckDBTimestampValue(value.timestamp);
      types[name] = TIMESTAMP;
    }
  }
  return { values, types };
}

function toEngineRow(row: Record<string, DuckDBValue>): Record<string, EngineValue> {
  const out: Record<string, EngineValue> = {};
  // for-in, not Object.entries: no pair array per column and row (every query's rows pass here).
  for (const key in row) {
    const value = row[key]!;
    if (value instanceof DuckDBTimestampValue) out[key] = value.micros;
    else if (value === null || typeof value !== 'object') out[key] = value as EngineValue;
    else out[key] = String(value);
  }
  return out;
}

/** The DuckDB SQL of a request, or an engine error saying the statement has none. */
function statementSql(request: EngineRequest): string {
  const sql = request.statement.sql.duckdb;
  if (sql === undefined) throw new EngineError('query_failed', `${request.statement.name} has no DuckDB SQL.`);
  return sql;
}

export { newestFirstMerge } from './newest-first';

/** Whether a listed file is gone or is not the version that was listed any more. */
function changedSinceListed(file: ListedFile): boolean {
  if (file.dataset) return !existsSync(file.path);
  const now = statSync(file.path, { throwIfNoEntry: false });
  return !now || now.ino !== file.ino || now.size !== file.size || now.mtimeMs !== file.mtimeMs;
}

/**
 * The Parquet files whose rows a statement reads: all of them when it names the source's relation,
 * else (it reads rollups only) those lacking a stored rollup it names, computed from their rows.
 */
function rowsRead(sql: string, source: SourceDescriptor, read: ReadSet): ListedFile[] {
  if (namesRelation(sql, source.relation)) return read.parquet;
  const rollups = rollupsNamedBy(sql, source);
  return read.parquet.filter((f) => rollups.some((name) => !f.rollups?.[name]));
}

/** The rollups of a source a statement reads by name. */
function rollupsNamedBy(sql: string, source: SourceDescriptor): string[] {
  return Object.keys(source.rollups).filter((name) => namesRelation(sql, name));
}

/** Engine messages of damaged Parquet that name no file: the files are then tried one by one. */
const UNNAMED_DAMAGE = /TProtocolException|Invalid Error|corrupt|decompress|thrift|snappy|zstd|magic bytes/i;

/** The stable reason code of a file the engine could not read, from its message. */
function damageReason(file: ListedFile, message: string): SkipReason {
  if (file.kind === 'parquet') return /magic|too small|not a parquet|footer|thrift|parquet/i.test(message) ? 'not_parquet' : 'unreadable_by_engine';
  return /gzip|zstd|frame|compress/i.test(message) ? 'broken_compression' : 'unreadable_by_engine';
}

/** The engine's one-line message about a file, without the path (answers never hold paths). */
function engineDetail(message: string, path: string): string {
  return message.split('\n')[0]!.replaceAll(path, 'the file').replace(/^[A-Za-z ]*Error: /, '').trim();
}
