import type { SourceName } from '../sources/source-descriptor';
import { dateToMicros, formatIsoMicros } from '../time/iso';
import type { WalSet } from './wal/wal-set';
import { failpoint, holdpoint } from '../util/failpoint';
import { bodyKey, derivedId, MAX_POSITION, retryable } from '../ingest/body-digest';
import { bodyLines, type BodyLines, type GroupKnown } from '../ingest/body-lines';
import { bodyLinesOffThread, OFF_THREAD_BYTES } from '../ingest/parse-worker';
import { RecentBodies, rememberLeftSegments } from './recent-bodies';
import { BATCH_LIMITS, serializeBatch, type BatchLimits } from '../ingest/serialize-events';
import type { SourceNames } from '../ingest/source-names';

/**
 * The method by which an instance of `createEndpoints` takes an HTTP ingest body as it came
 * (`Ingestor.ingestBody`), so the HTTP adapter need not parse it on the main thread. Not public:
 * an `Endpoints` without it gets the body's events through `ingest`. The body comes read by
 * `withIngestBody`, its nesting bounded by `MAX_NESTING` as it arrived: its events' lines are
 * not scanned for nesting again.
 */
export const INGEST_BODY = Symbol('log-endpoints.ingestBody');

/**
 * The method by which an instance takes the events a route read out of a body of its own kind
 * (OTLP), with the body's digest and each event's position in it (`Ingestor.ingestFromBody`).
 * Not public, as `INGEST_BODY`.
 */
export const INGEST_FROM_BODY = Symbol('log-endpoints.ingestFromBody');

/** Where a route's events came from: the body's digest (`bodyDigest`) and each event's position in it. */
export interface BodyOrigin {
  digest: Uint8Array;
  positions: readonly number[];
}

/** An `Endpoints` that takes bodies as they came. */
export interface BodyIngest {
  [INGEST_BODY](source: string, body: Uint8Array, contentType: string | null): Promise<IngestResult>;
  [INGEST_FROM_BODY](source: string, events: readonly object[], origin: BodyOrigin): Promise<IngestResult>;
}

/** The answer of an ingest: how many events are now durable. */
export interface IngestResult {
  /** Events acknowledged. */
  ingested: number;
  /** True when the body was one acknowledged lately: answered again, nothing stored. */
  repeated?: true;
}

/**
 * The one path events take into managed storage, for HTTP, the library and the CLI alike:
 * source resolved, every event checked and normalised (all or nothing), then appended to the
 * source's WAL as one group member; resolves once the events are fsynced. A body acknowledged
 * within the window of recent bodies is acknowledged again and not stored (docs/ingest.md,
 * "Retries and ids").
 */
export class Ingestor {
  /** The bodies acknowledged lately (on the `now` clock), rebuilt from the WAL at a start (`recall`). */
  readonly recent: RecentBodies;

  constructor(
    private readonly walSet: WalSet,
    readonly sourceNames: SourceNames,
    private readonly now: () => Date,
    private readonly limits: BatchLimits = BATCH_LIMITS,
    /** Called once a batch is durable, before it is acknowledged (managed storage mirrors it in memory), with what the parse knew of its events. */
    private readonly onDurable?: (source: SourceName, segment: number, lines: Uint8Array, known: GroupKnown) => Promise<void>,
  ) {
    this.recent = new RecentBodies(() => this.now().getTime());
  }

  /**
   * Rebuilds the window of recent bodies from the segments the previous process left (before
   * compaction takes them): each derived id names its body's key, written in the same group as
   * the events, so whatever was fsynced (answered or not when the process died) is recognised.
   */
  async recall(): Promise<void> {
    await Promise.all(Object.values(this.walSet.wals).map((wal) => rememberLeftSegments(wal, this.recent)));
  }

  /** The source a name, UUID or internal name means (`NotFoundError` listing the known ones otherwise). */
  resolveSource(ref: string): SourceName {
    return this.sourceNames.resolve(ref);
  }

  async ingest(ref: string, events: readonly unknown[]): Promise<IngestResult> {
    const source = this.resolveSource(ref);
    return this.store(source, { ...serializeBatch(events, this.arrival(), this.limits), events: events.length });
  }

  /**
   * An ingest body as it came (HTTP): parsed and checked like `ingest`'s events, on a thread of
   * its own when it is large, so no request waits for another's parse.
   */
  async ingestBody(ref: string, body: Uint8Array, contentType: string | null): Promise<IngestResult> {
    const source = this.resolveSource(ref);
    const arrival = this.arrival();
    // Read by withIngestBody: its nesting is bounded already (INGEST_BODY).
    const prepared =
      body.length >= OFF_THREAD_BYTES ? await bodyLinesOffThread(body, contentType, arrival, this.limits, source, true) : bodyLines(body, contentType, arrival, this.limits, source, true);
    return this.storeOnce(source, prepared);
  }

  /**
   * Events a route read out of a body of its own (OTLP), with the body's digest and their
   * positions in it: ids derived and the window applied as for `ingestBody`.
   */
  async ingestFromBody(ref: string, events: readonly unknown[], origin: BodyOrigin): Promise<IngestResult> {
    const source = this.resolveSource(ref);
    const key = retryable(events) && (origin.positions.at(-1) ?? 0) <= MAX_POSITION ? bodyKey(source, origin.digest) : null;
    const newId = key === null ? undefined : (i: number) => derivedId(key, origin.positions[i] ?? i);
    return this.storeOnce(source, { ...serializeBatch(events, this.arrival(), this.limits, newId), events: events.length, key });
  }

  /** Stores a body's lines, or acknowledges them again when the body is a recent one. */
  private async storeOnce(source: SourceName, prepared: BodyLines): Promise<IngestResult> {
    const key = prepared.key ?? null;
    return (await this.recent.once(key, () => this.store(source, prepared, key))) ?? { ingested: prepared.events, repeated: true };
  }

  private async store(source: SourceName, { lines, events, span, arraysFree }: BodyLines, key: string | null = null): Promise<IngestResult> {
    const { seq } = await this.walSet.wals[source]!.append(lines);
    // Durable: a retry of this body is acknowledged again from now on, whatever happens next.
    if (key !== null) this.recent.remember(key);
    await this.onDurable?.(source, seq, lines, { ...(span ? { span } : {}), ...(arraysFree ? { arraysFree } : {}) });
    // The crash suite's lost answer: killed (or held) once durable, before the answer goes out.
    failpoint('ingest:durable', source);
    await holdpoint('ingest:durable');
    return { ingested: events };
  }

  private arrival(): string {
    return formatIsoMicros(dateToMicros(this.now()));
  }
}
