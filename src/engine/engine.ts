import type { SkippedFile } from '../storage/file-checks';
import type { Micros } from '../time/iso';

/** The two log sources of contract §1. */
export type SourceName = 'edgeLogs' | 'functionEdgeLogs';

/** The saved queries of the three endpoints. */
export type EndpointQueryName = 'functions.invocation-stats' | 'logs.all' | 'usage.api-counts';

/**
 * Queries behind `ep.catalog()`: which projects (gateway log) and which projects' functions
 * (edge-function log) the data holds since an instant, for pickers such as the dashboard's.
 */
export type CatalogQueryName = 'catalog.projects' | 'catalog.functions';

/** The saved queries an engine knows how to run: one per endpoint, plus the catalog's. */
export type QueryName = EndpointQueryName | CatalogQueryName;

/** A value bound to a query parameter. Timestamps are tagged so no engine has to guess. */
export type EngineParam = string | number | null | { timestamp: Micros };

/**
 * A value in a result row. Engines return timestamps as bigint microseconds since the epoch
 * (UTC), integers as bigint or number, JSON as its text; the endpoint's column types say which.
 */
export type EngineValue = string | number | bigint | boolean | null;

export interface EngineRequest {
  query: QueryName;
  /** Named parameters, exactly those the query's SQL declares. */
  params: Readonly<Record<string, EngineParam>>;
  /** Rows past this are not read. */
  maxRows: number;
  /**
   * Earliest instant any row of the answer can have (inclusive). Engines may use it to skip
   * whole files or partitions; it never changes the answer.
   */
  notBefore?: Micros;
}

export interface EngineResult {
  rows: Record<string, EngineValue>[];
  /** Time spent in the engine, queueing excluded. */
  engineMs: number;
  /** Files left out of this answer because they could not be read (damaged, unreadable). */
  skippedFiles?: SkippedFile[];
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
 * The boundary between the endpoints and whatever computes them. Everything above it is
 * engine-neutral; the DuckDB engine is one implementation, a distributed one can be another
 * with its own SQL.
 */
export interface Engine {
  /** Runs one saved query. Rejects with `EngineError` (query_failed, overloaded, timeout, closed). */
  run(request: EngineRequest): Promise<EngineResult>;
  /** Null when the engine accepts `pattern` as a regular expression, otherwise why not. */
  checkPattern(pattern: string): Promise<string | null>;
  /** Resolves when the engine answers a trivial query. */
  ping(): Promise<void>;
  inspectSources(): Promise<SourceInspection[]>;
  close(): Promise<void>;
}
