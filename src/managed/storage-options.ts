import type { ClickHouseServer } from './clickhouse-server';
import type { SourceName } from '../sources/source-descriptor';
import type { ShipTarget } from './clickhouse-shipper';

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
  /** More source names ingest accepts (in any letter case), besides the sources' own Logflare names. */
  sourceNames?: Readonly<Record<string, SourceName>>;
  /**
   * Ship the events to ClickHouse instead of compacting them into local Parquet: each closed WAL
   * segment is inserted into the source's table (exactly once, across crashes) and then deleted.
   * A `clickhouseLoader(...)` from `log-endpoints/clickhouse` (yours to close), or where the tables
   * are (the loader is then made and closed here). Needs `engine: clickhouseEngine(...)` over the
   * same tables: queries read ClickHouse, so an event is visible once its segment is shipped.
   */
  clickhouse?: ShipTarget | ClickHouseShipping;
  /** A WAL segment is closed (and handed to compaction) once it holds this many bytes (default 8 MiB). */
  maxSegmentBytes?: number;
  /** ... or once its oldest event is this old, in ms (default 60 000; 1 000 with `clickhouse`, so events show soon). */
  maxSegmentAgeMs?: number;
  /**
   * ... or once it holds 256 KiB and no event came into it for this long, in ms (default 5 000):
   * a sender that stops has its last events compacted, and out of memory, within seconds.
   */
  segmentQuietMs?: number;
  /** Past this many bytes accepted but not yet fsynced, ingest answers 503 overloaded (default 64 MiB). */
  maxPendingBytes?: number;
  /** Past this many bytes of WAL not yet compacted, ingest answers 503 overloaded (default 1 GiB). */
  maxUncompactedBytes?: number;
  /** Days kept: a day's events are deleted once the whole day is older than this (default 90, the longest tier window). Not with `clickhouse`: old partitions are dropped there. */
  retentionDays?: number;
  /** DuckDB settings of the background compaction (default `DEFAULT_COMPACTION_DUCKDB`: queries keep the rest). */
  compactionDuckdb?: { threads?: number; memoryLimit?: string };
  /**
   * Whether compaction writes each source's typed fields (its descriptor's `typedFields`) as
   * columns of their own beside `metadata` (default true): queries that read those fields then
   * skip parsing `metadata`. Off (`{ dataDir: './data', typedColumns: false }`), the files hold
   * `metadata` alone and the same queries compute the fields from it; answers are the same either
   * way (docs/durability.md, "Typed columns").
   */
  typedColumns?: boolean;
}

/**
 * Where managed storage ships to, as configuration: the tables (made by `log-endpoints clickhouse
 * init`), and how segments are read and sent.
 *
 * @example
 * const storage = { dataDir: './data', clickhouse: { url: 'http://ch-1:8123', database: 'logs', cluster: 'logs' } };
 */
export interface ClickHouseShipping extends ClickHouseServer {
  /** Rows per INSERT (default 100 000): a larger segment goes in several. */
  batchRows?: number;
  /** The in-process DuckDB that reads the segments (default: `compactionDuckdb`'s, else `DEFAULT_COMPACTION_DUCKDB`). */
  duckdb?: { threads?: number; memoryLimit?: string };
}
