import type { SourceName } from '../sources/source-descriptor';
import type { IngestSourceName } from '../ingest/source-names';
import type { StorageOptions } from './storage-options';
import type { QuarantineReason } from './wal/quarantine';
import type { WalRecovery } from './wal/wal';
import type { SegmentKeeper } from './segment-keeper';

/**
 * What managed storage tells the application that did not fail a call (part of `onWarning`'s).
 *
 * @example
 * createEndpoints({ storage: { dataDir: './data' }, onWarning: (w) => w.code === 'quarantined' && console.warn(w.file) });
 */
export type ManagedStorageWarning =
  /** Managed storage's background compaction failed; it is tried again, and ingest is refused (503) only past its bounds. */
  | { code: 'compaction_failed'; message: string; source: SourceName; cause: unknown }
  /** Shipping a segment to ClickHouse (`storage.clickhouse`) failed; it is tried again with growing pauses, and ingest is refused (503) only past `maxUncompactedBytes`. */
  | { code: 'shipping_failed'; message: string; source: SourceName; cause: unknown }
  /**
   * Managed storage set bytes aside in `<dataDir>/<source>/quarantine/` (`file`): a stretch of a
   * write-ahead segment that fails its checksum (`damaged`), or lines no query can read
   * (`unreadable`). They are never served; everything around them is. See docs/durability.md.
   */
  | { code: 'quarantined'; message: string; source: SourceName; reason: QuarantineReason; file: string; bytes: number; lines: number };

/** What managed storage is opened with: the instance's options it reads (`createEndpoints` passes its own). */
export interface ManagedStorageOptions {
  storage: StorageOptions;
  /** With an engine of the application's (ClickHouse), no memory tables are kept. */
  engine?: unknown;
  now?: () => Date;
  onWarning?(warning: ManagedStorageWarning): void;
  onIngested?(source: SourceName, lines: Uint8Array): void;
  /** Told before closed segments are deleted, so log drains keep what they have yet to forward. */
  segmentKeeper?: SegmentKeeper;
  /**
   * Told the typed fields a source's dataset holds (its log's `typedPaths`) once each compaction
   * run commits, before its segments are released: what the instance's queries read as columns
   * from the next request on.
   */
  onTypedPaths?(source: SourceName, paths: readonly string[]): void;
}

/** What `ep.storage` tells about managed storage. */
export interface ManagedStorageInfo {
  /** The data dir, absolute. */
  readonly dataDir: string;
  /** Names (and fixed UUIDs) ingest accepts, and the source each one feeds. */
  readonly sources: readonly IngestSourceName[];
  /** The source a name or UUID means; `NotFoundError` listing the known names otherwise. */
  resolveSource(nameOrId: string): SourceName;
  /**
   * What recovery cut (unfinished writes at the end of WAL segments, at open) or set aside
   * (damaged bytes, also found by the background recovery of a large backlog): empty after a clean stop.
   */
  readonly recovered: readonly WalRecovery[];
}

/**
 * Managed storage in `stats()`: bytes in the write-ahead log (on disk, accepted but not yet
 * fsynced), and what background compaction did (segments compacted, failed runs, small files
 * merged, files dropped by retention).
 */
export interface ManagedStorageStats {
  walBytes: number;
  pendingBytes: number;
  compactedSegments: number;
  compactionFailures: number;
  /** Events compaction's runs wrote into the dataset (each event once). */
  compactedEvents: number;
  mergedFiles: number;
  /**
   * Events merges of a day's files wrote again (once per merge an event went through):
   * `mergedEvents / compactedEvents` is how many times an event is rewritten after its run.
   */
  mergedEvents: number;
  droppedFiles: number;
  /**
   * What is set aside in the quarantine folders (`<dataDir>/<source>/quarantine/`): files, bytes
   * and lines of damaged write-ahead bytes and of lines no query can read. Never served; see
   * docs/durability.md.
   */
  quarantinedFiles: number;
  quarantinedBytes: number;
  quarantinedLines: number;
  /**
   * Write-ahead segments left by the previous process that are still being recovered (checked,
   * then compacted) in the background, and their bytes: queries leave them out and name them
   * (`skippedFiles`, reason `recovering`) until then; 0 once every acknowledged event is read.
   */
  recoveringSegments: number;
  recoveringBytes: number;
  /** NDJSON bytes of the newest events held in the memory tables. */
  memoryTablesBytes: number;
  /**
   * Per source: bytes in its write-ahead log, and its compaction lag (closed segments not yet
   * compacted, and segments still recovering).
   */
  sources: Record<string, { walBytes: number; lagBytes: number }>;
  /** Every acknowledged event is in the dataset (or shipped): no write-ahead bytes, nothing recovering. */
  settled: boolean;
  /** With `storage.clickhouse`: segments shipped (then deleted), events inserted, failed attempts. */
  shippedSegments?: number;
  shippedEvents?: number;
  shippingFailures?: number;
}
