import type { SourceName } from '../sources/source-descriptor';
import { dateToMicros, formatIsoMicros } from '../time/iso';
import type { WalSet } from '../managed/wal/wal-set';
import { bodyLines, type BodyLines } from './body-lines';
import { bodyLinesOffThread, OFF_THREAD_BYTES } from './parse-worker';
import { BATCH_LIMITS, serializeEvents, type BatchLimits } from './serialize-events';
import type { SourceNames } from './source-names';

/**
 * The method by which an instance of `createEndpoints` takes an HTTP ingest body as it came
 * (`Ingestor.ingestBody`), so the HTTP adapter need not parse it on the main thread. Not public:
 * an `Endpoints` without it gets the body's events through `ingest`.
 */
export const INGEST_BODY = Symbol('log-endpoints.ingestBody');

/** An `Endpoints` that takes bodies as they came. */
export interface BodyIngest {
  [INGEST_BODY](source: string, body: Uint8Array, contentType: string | null): Promise<IngestResult>;
}

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
    return this.store(source, { lines: serializeEvents(events, this.arrival(), this.limits), events: events.length });
  }

  /**
   * An ingest body as it came (HTTP): parsed and checked like `ingest`'s events, on a thread of
   * its own when it is large, so no request waits for another's parse.
   */
  async ingestBody(ref: string, body: Uint8Array, contentType: string | null): Promise<IngestResult> {
    const source = this.resolveSource(ref);
    const arrival = this.arrival();
    const prepared = body.length >= OFF_THREAD_BYTES ? await bodyLinesOffThread(body, contentType, arrival, this.limits) : bodyLines(body, contentType, arrival, this.limits);
    return this.store(source, prepared);
  }

  private async store(source: SourceName, { lines, events }: BodyLines): Promise<IngestResult> {
    const { seq } = await this.walSet.wals[source]!.append(lines);
    await this.onDurable?.(source, seq, lines);
    return { ingested: events };
  }

  private arrival(): string {
    return formatIsoMicros(dateToMicros(this.now()));
  }
}
