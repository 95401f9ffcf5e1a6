import type { SourceName } from '../engine/engine';

/**
 * Managed storage (`createEndpoints({ storage: { dataDir } })`): the library keeps the events it
 * is sent (`ep.ingest`, the HTTP ingest routes) in `dataDir`, one folder per source.
 *
 * @example
 * const ep = await createEndpoints({ storage: { dataDir: './data', sourceNames: { 'my-gateway': 'edgeLogs' } } });
 * await ep.ingest('cloudflare.logs.prod', [{ message: 'GET /rest/v1/todos', project: 'abc' }]);
 */
export interface StorageOptions {
  /** The folder managed storage owns (created when missing; one process at a time, enforced by a lock file). */
  dataDir: string;
  /** More source names ingest accepts, besides `cloudflare.logs.prod` and `deno-relay-logs`. */
  sourceNames?: Readonly<Record<string, SourceName>>;
  /** A WAL segment is closed (and handed to compaction) once it holds this many bytes (default 8 MiB). */
  maxSegmentBytes?: number;
  /** ... or once its oldest event is this old, in ms (default 60 000). */
  maxSegmentAgeMs?: number;
  /** Past this many bytes accepted but not yet fsynced, ingest answers 503 overloaded (default 64 MiB). */
  maxPendingBytes?: number;
  /** Past this many bytes of WAL not yet compacted, ingest answers 503 overloaded (default 1 GiB). */
  maxUncompactedBytes?: number;
  /** Days kept: a day's events are deleted once the whole day is older than this (default 90, the longest tier window). */
  retentionDays?: number;
  /** DuckDB settings of the background compaction (default one thread and 512MB: queries keep the rest). */
  compactionDuckdb?: { threads?: number; memoryLimit?: string };
}
