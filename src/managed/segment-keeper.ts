import type { SourceName } from '../sources/source-descriptor';
import type { WalSegment } from './wal/recover-at-open';

/**
 * What managed storage shows a segment keeper of one source's write-ahead log.
 *
 * @example
 * const end = log.snapshot().at(-1); // the active segment: { seq, committedBytes, ... }
 */
export interface KeptLog {
  /** The log's folder (`<dataDir>/<source>/wal`). */
  readonly dir: string;
  /** Every segment on disk, oldest first, with its committed bytes; the active one last. */
  snapshot(): WalSegment[];
  /** Segments left by the previous process that the background recovers, until compaction releases them (in `snapshot` once recovered). */
  deferred(): ReadonlyArray<{ seq: number }>;
  /** Settles once they are all recovered. */
  readonly recovery: Promise<void>;
}

/**
 * Something that reads the write-ahead log after ingest made it durable (log drains), and so may
 * need a segment after compaction or shipping is done with it. Managed storage never deletes a
 * closed segment without telling it first; what it keeps (a hard link elsewhere) is its own, and
 * neither compaction nor recovery at open ever sees it again (docs/durability.md, "Segments
 * kept for log drains"). Given to `createEndpoints` as `segmentKeeper`.
 *
 * @example
 * const keeper: SegmentKeeper = {
 *   attach: async () => {},
 *   appended: () => {},
 *   releasing: async () => {},
 * };
 * const ep = await createEndpoints({ storage: { dataDir: './data' }, segmentKeeper: keeper });
 */
export interface SegmentKeeper {
  /** Told once the logs are open and recovered, before compaction or shipping starts. */
  attach(dataDir: string, logs: Readonly<Partial<Record<SourceName, KeptLog>>>): Promise<void>;
  /** Told after each durable group, before its ingest is answered: must return at once and never throw. */
  appended(source: SourceName): void;
  /**
   * Told before closed segments are deleted (their events committed to the dataset or shipped);
   * resolves once it has kept those it still needs. A rejection leaves them in the log, released
   * later: a keeper that cannot keep one should let it go (and count it) rather than reject.
   */
  releasing(source: SourceName, segments: readonly WalSegment[]): Promise<void>;
}
