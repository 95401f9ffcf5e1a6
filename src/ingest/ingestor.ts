import type { SourceName } from '../engine/engine';
import { dateToMicros, formatIsoMicros } from '../time/iso';
import type { WalSet } from '../storage/wal/wal-set';
import { BATCH_LIMITS, serializeEvents, type BatchLimits } from './serialize-events';
import type { SourceNames } from './source-names';

/** The answer of an ingest: how many events are now durable. */
export interface IngestResult {
  ingested: number;
}

/**
 * The one path events take into managed storage, for HTTP, the library and the CLI alike:
 * source resolved, every event checked and normalised (all or nothing), then appended to the
 * source's WAL as one group member; resolves once the events are fsynced.
 */
export class Ingestor {
  constructor(
    private readonly walSet: WalSet,
    readonly sourceNames: SourceNames,
    private readonly now: () => Date,
    private readonly limits: BatchLimits = BATCH_LIMITS,
    /** Called once a batch is durable, before it is acknowledged (managed storage mirrors it in memory). */
    private readonly onDurable?: (source: SourceName, segment: number, lines: Uint8Array) => Promise<void>,
  ) {}

  /** The source a name, UUID or internal name means (`NotFoundError` listing the known ones otherwise). */
  resolveSource(ref: string): SourceName {
    return this.sourceNames.resolve(ref);
  }

  async ingest(ref: string, events: readonly unknown[]): Promise<IngestResult> {
    const source = this.resolveSource(ref);
    const lines = serializeEvents(events, formatIsoMicros(dateToMicros(this.now())), this.limits);
    const { seq } = await this.walSet.wals[source]!.append(lines);
    await this.onDurable?.(source, seq, lines);
    return { ingested: events.length };
  }
}
