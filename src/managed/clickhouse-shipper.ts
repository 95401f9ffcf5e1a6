import { access, mkdir, open, readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { timerScheduler, type CacheScheduler } from '../util/scheduler';
import type { SourceName } from '../sources/source-descriptor';
import { unlinkIfPresent } from '../util/durable-fs';
import { failpoint } from '../util/failpoint';
import { fsyncDir, isCode } from '../util/durable-fs';
import { assignOffsets, segmentEventLines } from './segment-lines';
import { SerialRuns } from '../util/serial-runs';
import { EngineError } from '../errors';

/** ClickHouse's answer to a query whose id a running query has. */

/**
 * A write-ahead segment of managed storage read as the table's rows, in the order of its lines
 * (commit markers and lines that are not JSON left out): what the shipper sends.
 */
export interface SegmentRows {
  /** Each row's `id`: the shipper matches rows to the segment's lines by it. */
  ids: Array<string | null>;
  /** Each row's `timestamp` in microseconds; null when unreadable (such a row is never inserted). */
  timestamps: Array<bigint | null>;
  /** The values of the table's columns (TABLE_COLUMNS), one array per row. */
  rows: unknown[][];
}

/** Where the shipper sends segments: what `clickhouseLoader` does (log-endpoints/clickhouse). */
export interface ShipTarget {
  /** Rows per INSERT. */
  readonly batchRows?: number;
  /** The sources it can ship, when it knows them: managed storage refuses a target that lacks one of the instance's. */
  readonly sourceNames?: readonly SourceName[];
  /** The segment's events as the table's rows, in line order. */
  readSegment(source: SourceName, file: string): Promise<SegmentRows>;
  /** Offsets of the segment's lines the table holds already (only the days `first`..`last`). */
  shippedOffsets(source: SourceName, segment: string, range: { first: bigint; last: bigint }, queryId: string): Promise<Set<number>>;
  /**
   * Whether an error of `shippedOffsets` says an insert sent earlier with the same query id still
   * runs on the server (its sender was killed): the shipper asks again later instead of failing.
   */
  isStillRunning?(error: unknown): boolean;
  /** Inserts rows with their positions, in one INSERT. */
  insertAt(source: SourceName, segment: string, rows: readonly unknown[][], offsets: readonly number[], options: { queryId: string; midway?: () => void }): Promise<void>;
}

/** The part of the write-ahead log the shipper needs. */
export interface ShippableLog {
  /** Segments that take no more appends, oldest first. */
  closedSegments(): ReadonlyArray<{ path: string; seq: number; committedBytes: number }>;
  /** Deletes segments whose events are in ClickHouse. */
  release(paths: readonly string[]): Promise<void>;
  /** Called when a segment closes; returns an unsubscribe function. */
  onSegmentClosed(listener: () => void): () => void;
  /** Checks a closed segment against its checksums (damaged bytes set aside) before it is shipped. */
  verify?(path: string): Promise<unknown>;
}

export interface ClickHouseShipperOptions {
  source: SourceName;
  wal: ShippableLog;
  /** Where attempts are recorded (`<dataDir>/<source>/shipping`). */
  stateDir: string;
  /** The data dir's id (`dataDirInstanceId`): segment ids are `<instance>/<source>/<seq>`. */
  instanceId: string;
  target: ShipTarget;
  /** Rows per INSERT (default: the target's `batchRows`, else 100 000): a larger segment goes in several. */
  batchRows?: number;
  /** A failed attempt; the segment is tried again after a pause that doubles, up to `retryMaxMs`. */
  onError: (error: unknown) => void;
  /** Keeps the lines of a segment that are no events (at these offsets) elsewhere, before it is released. */
  setAside?: (path: string, offsets: number[]) => Promise<void>;
  /** First pause after a failure (default 1 s). */
  retryFirstMs?: number;
  /** Longest pause between attempts (default 60 s). */
  retryMaxMs?: number;
  /** Runs retries later (default `setTimeout`, unref'ed); tests pass their own. */
  scheduler?: CacheScheduler;
}

/**
 * Managed storage's ClickHouse shipper, one per source: each closed write-ahead segment is
 * inserted into the source's table and then released (deleted), exactly once across crashes.
 * Every row carries its position (`_wal_segment`, `_wal_offset`: the segment's id and the byte
 * offset of its line). Before the first INSERT of a segment, an attempt file
 * (`<stateDir>/<seq>.shipping`) is made durable; a segment that has one may be in ClickHouse in
 * part, so it is sent again only after asking ClickHouse which of its positions are there, and
 * only the missing lines go. That query carries the same query id as the segment's inserts, so
 * while an insert of a killed process still runs on the server, ClickHouse refuses it (the segment
 * is retried later) rather than answer before that insert ends. Segments go one at a time, oldest
 * first; a failure is retried with a pause that doubles, and until the segment is shipped it counts
 * against the WAL's bound (ingest answers 503 past it).
 */
export class ClickHouseShipper {
  private readonly runs = new SerialRuns(
    () => this.runGuarded(),
    () => this.cancelRetry !== null,
  );
  private failuresInARow = 0;
  private cancelRetry: (() => void) | null = null;
  private cleaned = false;
  private readonly unsubscribe: () => void;
  private readonly scheduler: CacheScheduler;
  /** Segments shipped and events inserted, failed attempts, and lines left out (unreadable JSON or timestamp). */
  readonly counters = { shippedSegments: 0, shippedEvents: 0, failures: 0, skippedLines: 0 };

  constructor(private readonly options: ClickHouseShipperOptions) {
    this.scheduler = options.scheduler ?? timerScheduler;
    this.unsubscribe = options.wal.onSegmentClosed(() => this.trigger());
  }

  /** Ships what is closed now (segments left closed by a previous process too). */
  trigger(): void {
    // After a failure, the pause runs out first (segments closing meanwhile wait for it).
    this.runs.trigger();
  }

  /** Resolves when no attempt is going on (tests, shutdown). */
  async settled(): Promise<void> {
    await this.runs.settled();
  }

  /** Stops shipping and waits for the segment in progress (what is left ships at the next start). */
  async stop(): Promise<void> {
    this.unsubscribe();
    this.cancelRetry?.();
    this.cancelRetry = null;
    await this.runs.stop();
  }

  /** Whether the last attempt failed (ClickHouse away): segments wait in the WAL until one succeeds. */
  get failing(): boolean {
    return this.failuresInARow > 0;
  }

  /** The id of a segment in ClickHouse's `_wal_segment`. */
  segmentId(seq: number): string {
    return `${this.options.instanceId}/${this.options.source}/${seq}`;
  }

  /** One attempt at everything closed; after a failure, nothing more until the pause ends. */
  private async runGuarded(): Promise<boolean> {
    try {
      await this.shipClosed();
      this.failuresInARow = 0;
      return true;
    } catch (error) {
      this.counters.failures++;
      this.failuresInARow++;
      this.options.onError(error);
      this.retryLater();
      return false;
    }
  }

  private retryLater(): void {
    if (this.runs.stopped) return;
    const first = this.options.retryFirstMs ?? 1000;
    const delay = Math.min(this.options.retryMaxMs ?? 60_000, first * 2 ** Math.min(this.failuresInARow - 1, 30));
    this.cancelRetry = this.scheduler.schedule(delay, async () => {
      this.cancelRetry = null;
      this.trigger();
      await this.settled();
    });
  }

  private async shipClosed(): Promise<void> {
    const segments = this.options.wal.closedSegments();
    if (!this.cleaned) {
      await this.forgetFinishedAttempts(new Set(segments.map((s) => s.seq)));
      this.cleaned = true;
    }
    for (const segment of segments) {
      if (this.runs.stopped) return;
      await this.ship(segment);
    }
  }

  private async ship(segment: { path: string; seq: number; committedBytes: number }): Promise<void> {
    const { source, target, wal } = this.options;
    const id = this.segmentId(segment.seq);
    // One query id for every statement about this segment: see the class comment.
    const queryId = `log-endpoints-ship-${this.options.instanceId}-${source}-${segment.seq}`;
    const attemptFile = join(this.options.stateDir, `${segment.seq}.shipping`);
    const attempted = await exists(attemptFile);
    await wal.verify?.(segment.path);
    const lines = await segmentEventLines(segment.path, segment.committedBytes);
    const read = await target.readSegment(source, segment.path);
    const { offsets } = assignOffsets(lines, read.ids);
    const sendable: number[] = [];
    for (let i = 0; i < read.rows.length; i++) if (read.timestamps[i] !== null) sendable.push(i);
    let present = new Set<number>();
    if (sendable.length && attempted) {
      let first = read.timestamps[sendable[0]!]!;
      let last = first;
      for (const i of sendable) {
        const t = read.timestamps[i]!;
        if (t < first) first = t;
        if (t > last) last = t;
      }
      try {
        present = await target.shippedOffsets(source, id, { first, last }, queryId);
      } catch (error) {
        if (!target.isStillRunning?.(error)) throw error;
        throw new EngineError('overloaded', `segment ${segment.seq}: an insert of it sent before (by a process that stopped) still runs on the server; asking again later`, { cause: error });
      }
    } else if (sendable.length) {
      await this.recordAttempt(attemptFile);
      failpoint('ship:attempt-recorded');
    }
    const missing = sendable.filter((i) => !present.has(offsets[i]!));
    const batchRows = this.options.batchRows ?? target.batchRows ?? 100_000;
    for (let from = 0; from < missing.length; from += batchRows) {
      const batch = missing.slice(from, from + batchRows);
      await target.insertAt(
        source,
        id,
        batch.map((i) => read.rows[i]!),
        batch.map((i) => offsets[i]!),
        {
          queryId,
          midway: () => failpoint('ship:mid-insert'),
        },
      );
      if (from + batchRows < missing.length) failpoint('ship:batch-inserted');
    }
    failpoint('ship:inserted');
    // The lines no query reads never pin the segment, and are never dropped unseen.
    const sent = new Set(sendable.map((i) => offsets[i]!));
    const unsent = lines.filter((l) => !sent.has(l.offset)).map((l) => l.offset);
    if (unsent.length) await this.options.setAside?.(segment.path, unsent);
    await wal.release([segment.path]);
    failpoint('ship:released');
    // A leftover attempt file is harmless (its segment is gone; it is removed at the next start).
    await unlinkIfPresent(attemptFile);
    this.counters.shippedSegments++;
    this.counters.shippedEvents += missing.length;
    this.counters.skippedLines += lines.length - sendable.length;
  }

  /** Makes the attempt durable before any row of the segment is sent. */
  private async recordAttempt(path: string): Promise<void> {
    const dir = this.options.stateDir;
    if (!(await exists(dir))) {
      await mkdir(dir, { recursive: true });
      await fsyncDir(dirname(dir));
    }
    const handle = await open(path, 'a');
    await handle.close();
    await fsyncDir(dir);
  }

  /** Attempt files of segments released already (a crash after the release): nothing to do for them. */
  private async forgetFinishedAttempts(closed: ReadonlySet<number>): Promise<void> {
    let names: string[];
    try {
      names = await readdir(this.options.stateDir);
    } catch (error) {
      if (isCode(error, 'ENOENT')) return;
      throw error;
    }
    for (const name of names) {
      const m = /^(\d+)\.shipping$/.exec(name);
      if (m && !closed.has(Number(m[1]))) await unlinkIfPresent(join(this.options.stateDir, name));
    }
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch (error) {
    if (isCode(error, 'ENOENT')) return false;
    throw error;
  }
}
