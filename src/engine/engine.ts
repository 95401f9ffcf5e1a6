import type { ColumnType } from '../sql/column-types';
import type { SqlDialect } from '../sql/sql-scan';
import type { SkippedFile } from '../files/file-checks';
import type { Micros } from '../time/iso';

import type { SourceDescriptor, SourceName } from '../sources/source-descriptor';
import type { SourceSet } from '../sources/source-set';
import type { DuckDBBytes } from '../duckdb/duckdb-bytes';

export type { SourceName };

/** The names of the three built-in endpoints. */
export type EndpointQueryName = 'functions.invocation-stats' | 'logs.all' | 'usage.api-counts';

/**
 * Queries behind `ep.catalog()`: which projects (gateway log) and which projects' functions
 * (edge-function log) the data holds since an instant, for pickers such as the dashboard's.
 */
export type CatalogQueryName = 'catalog.projects' | 'catalog.functions';

/** Names of statements: an endpoint's name, or one of the catalog's. */
export type QueryName = EndpointQueryName | CatalogQueryName | (string & {});

export type { SqlDialect };

/** How a statement's rows are newest first (`EngineStatement.newestFirst`). */
export interface NewestFirst {
  /** The bound value of its row limit. */
  readonly limit: string;
  /** The bound value of its inclusive upper bound on `timestamp` (NULL: none). */
  readonly until: string;
  /**
   * Its filter (or, for a caller's SQL, its source-table template's) reads the project and time
   * bounds only, `$<until>` the one upper bound, checked at start on DuckDB's parse tree
   * (newest-first-shape.ts): a compacted file's head (each project's newest rows of it) then holds
   * the rows of the file it can return. Absent or false: the files are read.
   */
  readonly heads?: boolean;
}

/**
 * A statement to run: its SQL per dialect (an engine runs its own) over the source relations it
 * names (`edge_logs`, `function_edge_logs`, ...), which the engine provides.
 */
export interface EngineStatement {
  /** The endpoint's name (or the catalog query's): for messages, never for choosing SQL. */
  name: QueryName;
  sql: Readonly<Partial<Record<SqlDialect, string>>>;
  /**
   * The rows are the `$<limit>` newest of one source (`ORDER BY timestamp DESC, id`), `$<until>` an
   * inclusive upper bound or NULL: an engine may read one day at a time, newest first.
   */
  newestFirst?: NewestFirst;
  /**
   * A variant's base statement (the endpoint's own SQL): what an engine runs instead when the
   * rollups the variant reads are not stored for the files of the call (docs/definitions.md, "Rollups").
   */
  fallback?: Readonly<Partial<Record<SqlDialect, string>>>;
  /** A variant's cost beside its base statement's: it runs only where it pays (see `VariantCost`). */
  cheaperWhen?: VariantCost;
  /**
   * A table per source for a caller's SQL, instead of the statement's CTEs: a template per dialect
   * over `source_rows` (docs/sandboxing.md, "Source tables").
   */
  sourceTables?: Readonly<Partial<Record<SqlDialect, string>>>;
  /** The parameter naming the project: bound NULL with `singleProject`, meaning every project. */
  projectParam?: string;
}

/**
 * When a variant pays beside its base statement, counted in the stored files of a call for its
 * project (docs/definitions.md, "Variants"): it runs where the project's events from the call's
 * first hour on outnumber `events` plus each named rollup's rows of the project from that hour on
 * times its `weight`; the base statement runs elsewhere. `time` is the rollup's hour column.
 */
export interface VariantCost {
  readonly events: number;
  readonly rollupRows: Readonly<Record<string, { readonly weight: number; readonly time: string }>>;
}

/** A value bound to a query parameter. Timestamps are tagged so no engine has to guess. */
export type EngineParam = string | number | null | { timestamp: Micros };

/**
 * A value in a result row. Engines return timestamps as bigint microseconds since the epoch
 * (UTC), integers as bigint or number, JSON as its text; the endpoint's column types say which.
 */
export type EngineValue = string | number | bigint | boolean | null;

/**
 * What one call of a definition (or a catalog query) asks for, before it is compiled for an
 * engine (`planQuery`): its statement in every dialect it has, and its bound values.
 */
export interface QueryPlan {
  statement: EngineStatement;
  /** Named parameters: at least those the statement's SQL uses (others are ignored). */
  params: Readonly<Record<string, EngineParam>>;
  /** Rows past this are not read. */
  maxRows: number;
  /**
   * Earliest instant any row of the answer can have (inclusive). Engines may use it to skip
   * whole files or partitions; it never changes the answer.
   */
  notBefore?: Micros;
}

/** What a statement reads of one source by name: its relation (`edge_logs`), its rollups (`function_edge_logs_hourly`). */
export interface SourceRead {
  readonly source: SourceName;
  /** Whether it names the source's relation (not only a CTE of its own of that name). */
  readonly relation: boolean;
  readonly rollups: readonly string[];
}

/** A statement's text in an engine's dialect, with what it reads, found once when it is compiled. */
export interface CompiledStatement {
  readonly sql: string;
  /** The sources it reads, each with the relation and rollups it names: an engine reads these, no others. */
  readonly reads: readonly SourceRead[];
  /**
   * Its CTEs shadow a source's relation (logs.all's `edge_logs`, limited to one project): DuckDB
   * runs it inside the relations, out of their reach.
   */
  readonly shadows: boolean;
}

/**
 * One request compiled for an engine's target (`compileQuery` in `src/query`): the statement's
 * text in the engine's dialect, what it reads, every bound value, and a caller's checked SELECT.
 * An engine runs it as it is and works none of it out again (docs/architecture.md).
 */
export interface CompiledQuery {
  /** The endpoint's name (or the catalog query's): for messages, never for choosing SQL. */
  readonly name: QueryName;
  /**
   * The statement: a variant's when one applies; on ClickHouse with its tables named, the project's
   * tests gone for every project, and a caller's SELECT, under the wrapper capping its rows, in place.
   */
  readonly statement: CompiledStatement;
  /**
   * The descriptors of the sources `statement.reads` names, in its order, as the query was
   * compiled: with the typed fields its text reads (they grow while an instance runs:
   * docs/durability.md, "Discovered fields"), so the relations an engine builds from them give
   * every column the text reads, whatever was discovered since.
   */
  readonly sources: readonly SourceDescriptor[];
  /**
   * A variant's base statement (the endpoint's own SQL), compiled the same way: what an engine runs
   * instead when the rollups the variant reads are not stored for the files of the call
   * (docs/definitions.md, "Rollups").
   */
  readonly fallback?: CompiledStatement;
  /**
   * Where the variant pays beside `fallback` (see `VariantCost`), counted for the project bound to
   * `projectParam`; absent: it runs wherever its rollups are stored.
   */
  readonly cheaperWhen?: { readonly cost: VariantCost; readonly projectParam: string };
  /** The parameter naming the project (the definition's `projectParam`), where it has one. */
  readonly projectParam?: string;
  /**
   * The rows are the `$<limit>` newest of one source (`ORDER BY timestamp DESC, id`), `$<until>` an
   * inclusive upper bound or NULL: an engine may read one day at a time, newest first.
   */
  readonly newestFirst?: NewestFirst;
  /** Named parameters, `max_rows` included: at least those the statement uses (others are ignored). */
  readonly params: Readonly<Record<string, EngineParam>>;
  /** Rows past this are not read. */
  readonly maxRows: number;
  /** Earliest instant any row of the answer can have (inclusive): files or partitions before it may be skipped. */
  readonly notBefore?: Micros;
  /**
   * A caller's checked SELECT (docs/sandboxing.md), composed for the engine's dialect: on DuckDB the
   * statement's CTEs (and parameters), then the caller's SELECT under the wrapper capping its rows at
   * `maxRows`, which runs instead of the statement, inside the relations (the statement itself
   * stays for the reads, and to tell a file's fault from the caller's); ClickHouse's statement holds
   * it already.
   */
  readonly caller?: string;
  /**
   * `caller` without the unnested half of its ranges split by the arrays flag, composed the same
   * way (checked as it was): the same answer where every input the query reads holds no `[`. An
   * engine that knows its inputs so (DuckDB: every Parquet file's footer says so, no NDJSON, no
   * memory rows) runs it instead of `caller` (docs/definitions.md, "Typed fields").
   */
  readonly callerArraysFree?: string;
  /**
   * Per source name, the columns of its relation that `caller` and `callerArraysFree` read, where
   * their source tables name every column they read (src/sandbox/source-tables.ts,
   * `callerColumnsRead`): an engine gives those texts the relation with these columns alone. A
   * source not here gets every column; so does any other text (the hour counts' `caller`).
   */
  readonly callerColumns?: ReadonlyMap<string, ReadonlySet<string>>;
  /**
   * The caller's SELECT asks for this many rows and any rows that pass its filter are its answer
   * (`SELECT <columns> FROM <table> WHERE ... LIMIT n`, found when it was checked): an engine may
   * read the newest days first and stop once it has them.
   */
  readonly firstRows?: number;
  /**
   * The caller's SELECT reads only each table's `n` newest rows (`... ORDER BY timestamp DESC NULLS
   * LAST LIMIT n` over each, found when it was checked): an engine may read a compacted file's
   * head (each project's newest rows of it) instead of the file where the head holds them.
   */
  readonly newestRows?: number;
  /**
   * The caller's chart may count its first step from the source's hour counts for the window's
   * whole hours (src/bigquery/hour-counts.ts): its SELECT reading them too, composed over the
   * statement's CTEs with the hour counts' table (`caller`, and without the arrays half
   * `callerArraysFree`), the relation an engine gives those counts as (`hourly`: the stored rollup
   * of that name, its rows of the whole hours inside the window), the field they are read for, and
   * the first and last instants the caller's own WHERE keeps. The template's other bounds are the
   * statement's `notBefore` and `newestFirst.until`.
   */
  readonly hourCounts?: {
    readonly caller: string;
    readonly callerArraysFree: string;
    readonly hourly: string;
    readonly field: string;
    readonly from: bigint | null;
    readonly until: bigint | null;
  };
}

export type { ColumnType };

export interface EngineResult {
  rows: Record<string, EngineValue>[];
  /** Time spent in the engine, queueing excluded. */
  engineMs: number;
  /** Files left out of this answer because they could not be read (damaged, unreadable). */
  skippedFiles?: SkippedFile[];
  /** With `sql`: the names and types of the columns the caller's SELECT returns, in order. */
  columns?: Array<{ name: string; type: ColumnType }>;
}

/** What an engine can tell about the raw sources; see `Endpoints.inspectSources`. */
export interface SourceInspection {
  source: SourceName;
  /** Files a query reads now (NDJSON, parts of NDJSON files, Parquet). */
  files: number;
  /** Non-blank lines of the newline-delimited JSON files (managed storage: with those held in memory). */
  lines: number;
  /** Lines skipped because they are not a JSON object (broken or truncated lines). */
  skippedLines: number;
  /** Parquet rows. */
  parquetRows: number;
  /** Each configured glob and how many log files it matches now. */
  globs: Array<{ glob: string; files: number }>;
  /** The globs that match no file: most likely a typo (or logs not written yet). */
  emptyGlobs: string[];
  /** Files left out of answers, and why (damaged, unreadable, not a regular file). */
  skippedFiles: SkippedFile[];
  /** NDJSON files not read because a compacted dataset the source reads already holds them whole. */
  coveredFiles: number;
  /**
   * Managed storage: what the source set aside in its quarantine folder (damaged write-ahead
   * bytes, lines no query can read), never served. See docs/durability.md.
   */
  quarantine?: { dir: string; files: number; bytes: number; lines: number };
}

/**
 * What the compiler of queries (`src/query`) needs to know of an engine: the SQL it runs, and where
 * a ClickHouse engine keeps its sources (their tables, which its statements and a caller's
 * translated SELECT name). Facts, not callbacks: nothing is asked of the engine to compile.
 */
export type EngineTarget =
  | { readonly dialect: 'duckdb' }
  | {
      readonly dialect: 'clickhouse';
      /** The sources it keeps: `createEndpoints` refuses an engine that lacks one of the instance's. */
      readonly sources: SourceSet;
      /** Each source's relation (`edge_logs`) -> its table's full name (`logs.edge_logs`). */
      readonly tables: ReadonlyMap<string, string>;
    };

/**
 * The boundary between the endpoints and whatever computes them. Everything above it is
 * engine-neutral; the DuckDB engine is one implementation, a distributed one can be another
 * with its own SQL. An engine runs what `src/query` compiled for its target; it checks nothing
 * of a statement or a caller's SQL (docs/architecture.md).
 *
 * @example
 * const engine: Engine = {
 *   target: { dialect: 'duckdb' },
 *   run: async () => ({ rows: [], engineMs: 0 }),
 *   checkPattern: async () => null,
 *   ping: async () => undefined,
 *   inspectSources: async () => [],
 *   close: async () => undefined,
 * };
 */
export interface Engine {
  /** The SQL this engine runs and where its sources are: what queries are compiled for. */
  readonly target: EngineTarget;
  /** Runs one saved query. Rejects with `EngineError` (query_failed, overloaded, timeout, closed). */
  run(query: CompiledQuery): Promise<EngineResult>;
  /** Null when the engine accepts `pattern` as a regular expression, otherwise why not. */
  checkPattern(pattern: string): Promise<string | null>;
  /** Resolves when the engine answers a trivial query. */
  ping(): Promise<void>;
  inspectSources(): Promise<SourceInspection[]>;
  /**
   * What the engine's own DuckDB holds, its last reading (taken off the caller's path, never
   * waiting for a query); absent for an engine without one in this process.
   */
  heldBytes?(): DuckDBBytes;
  close(): Promise<void>;
}
