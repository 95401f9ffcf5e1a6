import { link, mkdir, open, readdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { SourceName } from '../sources/source-descriptor';
import type { KeptLog, SegmentKeeper } from '../managed/segment-keeper';
import type { WalSegment } from '../managed/wal/recover-at-open';
import { segmentSeqOf } from '../managed/wal/segment-name';
import { mayBeMarker, parseMarkerLine } from '../wal-format/commit-marker';
import { fsyncDir, isCode, unlinkIfPresent } from '../util/durable-fs';
import { oneAtATime } from '../util/one-at-a-time';
import { checkPositiveNumber } from '../util/option-checks';
import { readCursors, removeCursor, writeCursor, type LogPosition, type UnreportedDrop } from './drain-cursors';
import { compileRules, matchingEvents, type SourceRules } from './drain-rules';

/**
 * Bytes of segments kept for drains per source, at most, by default: past it the oldest is deleted
 * and its undelivered events counted as dropped.
 *
 * @example
 * new DrainLog({ maxBacklogBytes: DEFAULT_DRAIN_BACKLOG_BYTES / 4 }); // 64 MiB per source
 */
export const DEFAULT_DRAIN_BACKLOG_BYTES = 256 * 1024 * 1024;

/** The folder of a source that keeps, for the drains, segments compaction is done with: `<dataDir>/<source>/drain-kept`. */
export const KEPT_DIR = 'drain-kept';

/** Bytes read from a segment at a time for one batch (more for a longer line). */
const CHUNK = 256 * 1024;

/** Lines counted at a time in a segment dropped with no forwarder to count it. */
const CHUNK_EVENTS = 1000;

/** A segment kept for the drains after compaction released it. */
export interface KeptSegment {
  seq: number;
  path: string;
  bytes: number;
}

/** Event lines of one source read from a position, and where the next read starts. */
export interface LogBatch {
  lines: string[];
  next: LogPosition;
}

/** Told before a segment a drain wants is deleted anyway (past the bound, or it could not be kept): the drains still before its end count what they lose, and why. */
export type DropHandler = (source: SourceName, segment: KeptSegment, why: string) => Promise<void>;

/**
 * The write-ahead logs as log drains read them, and the segments kept for them
 * (docs/supabase.md, "Log Drains"): each drain's position per source (its durable cursor), the
 * batches read from those positions, and, as managed storage's `SegmentKeeper`, a closed segment
 * that a drain has not passed kept (a hard link in `<source>/drain-kept/`) when compaction
 * deletes it from the log, until every drain passed it or the source's kept bytes pass
 * `maxBacklogBytes` (then the oldest goes, its undelivered events counted as dropped).
 *
 * @example
 * const log = new DrainLog();
 * const ep = await createEndpoints({ ...supabasePreset, storage: { dataDir }, segmentKeeper: log });
 * const drains = await openDrains({ dataDir, sources: ep.sources, log });
 */
export class DrainLog implements SegmentKeeper {
  readonly maxBacklogBytes: number;
  private dataDir: string | null = null;
  private logs: Readonly<Partial<Record<SourceName, KeptLog>>> = {};
  private readonly kept = new Map<SourceName, KeptSegment[]>();
  /** Each drain's position per source: what it has passed. Read from the cursors at attach, kept by the forwarder after. */
  private readonly positions = new Map<number, Map<SourceName, LogPosition>>();
  /** Events dropped while no drop handler was there to count them, per drain: written with its cursor until taken. */
  private readonly unreported = new Map<number, UnreportedDrop>();
  /** Each drain's rules per source they name, as its cursor holds them (none there: every source). */
  private readonly rules = new Map<number, Map<SourceName, SourceRules | null>>();
  private readonly lane = oneAtATime();
  private readonly listeners = new Set<(source: SourceName) => void>();
  private dropHandler: DropHandler | null = null;

  constructor(options: { maxBacklogBytes?: number } = {}) {
    checkPositiveNumber('maxBacklogBytes', options.maxBacklogBytes, 'bytes');
    this.maxBacklogBytes = options.maxBacklogBytes ?? DEFAULT_DRAIN_BACKLOG_BYTES;
  }

  /** Managed storage's logs, open: the kept segments and the cursors are read before compaction starts. */
  async attach(dataDir: string, logs: Readonly<Partial<Record<SourceName, KeptLog>>>): Promise<void> {
    this.dataDir = dataDir;
    this.logs = logs;
    for (const [id, cursor] of await readCursors(dataDir)) {
      this.positions.set(id, cursor.positions);
      if (cursor.dropped) this.unreported.set(id, cursor.dropped);
      if (cursor.rules) this.rules.set(id, cursor.rules);
    }
    for (const source of Object.keys(logs) as SourceName[]) {
      // Segments recovered in the background become readable then: the drains waiting on them are woken.
      void logs[source]!.recovery.then(() => this.appended(source)).catch(() => undefined);
      const dir = this.keptDir(source);
      let names: string[] = [];
      try {
        names = await readdir(dir);
      } catch (error) {
        if (!isCode(error, 'ENOENT')) throw error;
      }
      const list: KeptSegment[] = [];
      for (const name of names) {
        const seq = segmentSeqOf(name);
        if (seq === null) continue;
        const path = join(dir, name);
        list.push({ seq, path, bytes: (await stat(path)).size });
      }
      this.kept.set(
        source,
        list.sort((a, b) => a.seq - b.seq),
      );
    }
  }

  /** Whether managed storage's logs are attached (a data dir with ingest). */
  get attached(): boolean {
    return this.dataDir !== null;
  }

  /** The sources of the logs. */
  get sources(): SourceName[] {
    return Object.keys(this.logs) as SourceName[];
  }

  appended(source: SourceName): void {
    for (const listener of this.listeners) listener(source);
  }

  /** Calls `listener` after each durable group (the source's name); returns the unsubscribe. */
  onAppended(listener: (source: SourceName) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Who is told before a kept segment is deleted past the bound; without one (no forwarder runs), the drops are written in the drains' cursors. */
  onDrop(handler: DropHandler): void {
    this.dropHandler = handler;
  }

  async releasing(source: SourceName, segments: readonly WalSegment[]): Promise<void> {
    await this.lane(async () => {
      const list = this.kept.get(source) ?? [];
      let linked = false;
      for (const segment of segments) {
        if (!this.wanted(source, segment.seq, segment.committedBytes)) continue;
        const dir = this.keptDir(source);
        const path = join(dir, basename(segment.path));
        const failure = await hardLink(segment.path, dir, path);
        if (failure !== null) {
          // Never kept (a full disk, a folder that cannot be made): the log lets it go all the same, so
          // compaction, and ingest behind it, never wait on a drain; what the drains lose is counted.
          await this.drop(source, { seq: segment.seq, path: segment.path, bytes: segment.committedBytes }, `it could not be kept: ${failure}`);
          continue;
        }
        linked = true;
        if (!list.some((k) => k.seq === segment.seq)) list.push({ seq: segment.seq, path, bytes: segment.committedBytes });
      }
      list.sort((a, b) => a.seq - b.seq);
      this.kept.set(source, list);
      // Durable before the log's own file goes.
      if (linked) await fsyncDir(this.keptDir(source));
      await this.bound(source);
    });
  }

  /** A drain's position in each source. */
  positionsOf(drain: number): ReadonlyMap<SourceName, LogPosition> | undefined {
    return this.positions.get(drain);
  }

  /** The drains with a cursor. */
  drains(): number[] {
    return [...this.positions.keys()];
  }

  /** A new drain's cursor: the end of every source's log now (nothing from before is forwarded), written before the drain is. */
  async createCursor(drain: number): Promise<void> {
    const positions = new Map<SourceName, LogPosition>();
    for (const source of this.sources) positions.set(source, this.end(source));
    if (this.dataDir !== null) await writeCursor(this.dataDir, drain, positions);
    this.positions.set(drain, positions);
  }

  /** A drain passed `at` in `source` (a batch its receiver took, or events none of its rules wants). */
  advance(drain: number, source: SourceName, at: LogPosition): void {
    this.positions.get(drain)?.set(source, at);
  }

  /**
   * The sources a drain's rules name: a source new since its cursor was written starts at the
   * log's end, one it has no rule for is passed over, and none of its segments is kept for the
   * drain, after a restart too (the cursor is written when they change, and the kept segments
   * no drain reads any more go).
   */
  async follow(drain: number, rules: ReadonlyMap<SourceName, SourceRules>): Promise<void> {
    const positions = this.positions.get(drain);
    if (positions === undefined) return;
    for (const source of this.sources) if (!positions.has(source) || !rules.has(source)) positions.set(source, this.end(source));
    const before = this.rules.get(drain);
    const same = (a: SourceRules | null | undefined, b: SourceRules) => a != null && a.length === b.length && a.every((lql, i) => lql === b[i]);
    if (before && before.size === rules.size && [...rules].every(([source, lql]) => same(before.get(source), lql))) return;
    this.rules.set(drain, new Map(rules));
    await this.saveCursor(drain);
  }

  /** Takes the events dropped for each drain while no drop handler counted them (in order after any release under way), and writes the cursors without them. */
  async takeUnreported(): Promise<Map<number, UnreportedDrop>> {
    return await this.lane(async () => {
      const taken = new Map(this.unreported);
      this.unreported.clear();
      for (const drain of taken.keys()) await this.persist(drain);
      return taken;
    });
  }

  /** Writes a drain's positions (its cursor), then deletes the kept segments every drain has passed. */
  async saveCursor(drain: number): Promise<void> {
    await this.persist(drain);
    await this.trim();
  }

  /** Writes a drain's positions (its cursor) only: what a drop handler may call (it runs while kept segments change). */
  async persist(drain: number): Promise<void> {
    const positions = this.positions.get(drain);
    if (!positions || this.dataDir === null) return;
    await writeCursor(this.dataDir, drain, positions, this.rules.get(drain) ?? null, this.unreported.get(drain) ?? null);
  }

  /** A deleted drain's cursor gone, and its hold on the kept segments with it. */
  async removeCursor(drain: number): Promise<void> {
    this.positions.delete(drain);
    this.unreported.delete(drain);
    this.rules.delete(drain);
    if (this.dataDir !== null) await removeCursor(this.dataDir, drain);
    await this.trim();
  }

  /** Where the log of `source` ends now: the committed end of its active segment. */
  end(source: SourceName): LogPosition {
    const last = this.logs[source]?.snapshot().at(-1);
    return last ? { seq: last.seq, offset: last.committedBytes } : { seq: 1, offset: 0 };
  }

  /**
   * Up to `max` event lines of `source` from `at` (commit markers and blank lines are no events),
   * within one segment. A segment gone (never kept, or dropped past the bound) is skipped to the
   * next one there is; `next` equal to `at` means nothing more is there now.
   */
  async read(source: SourceName, at: LogPosition, max: number): Promise<LogBatch> {
    for (let from = at; ; ) {
      const segment = this.locate(source, from);
      if (segment === null) return { lines: [], next: from };
      if ('moveTo' in segment) {
        from = segment.moveTo;
        continue;
      }
      const read = await readLines(segment.path, from.offset, segment.end, max);
      if (read === null) continue; // deleted meantime: located again
      return { lines: read.lines, next: { seq: segment.seq, offset: read.next } };
    }
  }

  /** Bytes of `source` after `at`, in the log and kept. */
  behind(source: SourceName, at: LogPosition): number {
    let bytes = 0;
    for (const s of this.segments(source)) {
      if (s.seq > at.seq) bytes += s.end;
      else if (s.seq === at.seq) bytes += Math.max(0, s.end - at.offset);
    }
    return bytes;
  }

  /** Bytes kept for the drains, per source. */
  keptBytes(source: SourceName): number {
    return (this.kept.get(source) ?? []).reduce((n, k) => n + k.bytes, 0);
  }

  private keptDir(source: SourceName): string {
    return join(this.dataDir!, source, KEPT_DIR);
  }

  /** Whether a drain has not passed the end of segment `seq` (`end` bytes) of `source`. */
  private wanted(source: SourceName, seq: number, end: number): boolean {
    for (const [drain, positions] of this.positions) {
      if (this.rules.get(drain)?.has(source) === false) continue;
      const at = positions.get(source);
      if (at !== undefined && (at.seq < seq || (at.seq === seq && at.offset < end))) return true;
    }
    return false;
  }

  /** The segments of a source there are, oldest first: the log's, and the kept ones it no longer has. */
  private segments(source: SourceName): Array<{ seq: number; path: string; end: number; closed: boolean }> {
    const inLog = this.logs[source]?.snapshot() ?? [];
    const seen = new Set(inLog.map((s) => s.seq));
    const kept = (this.kept.get(source) ?? []).filter((k) => !seen.has(k.seq)).map((k) => ({ seq: k.seq, path: k.path, end: k.bytes, closed: true }));
    return [...kept, ...inLog.map((s) => ({ seq: s.seq, path: s.path, end: s.committedBytes, closed: s.closed }))].sort((a, b) => a.seq - b.seq);
  }

  private locate(source: SourceName, at: LogPosition): { seq: number; path: string; end: number } | { moveTo: LogPosition } | null {
    const segments = this.segments(source);
    const here = segments.find((s) => s.seq === at.seq);
    if (here && at.offset < here.end) return here;
    // At the end of the active segment: nothing more now.
    if (here && !here.closed) return null;
    // A segment after this one is still being recovered (a backlog left by a crash): wait for it, never skip it.
    if ((this.logs[source]?.deferred() ?? []).some((d) => d.seq >= at.seq && !segments.some((s) => s.seq === d.seq))) return null;
    const next = segments.find((s) => s.seq > at.seq);
    return next ? { moveTo: { seq: next.seq, offset: 0 } } : null;
  }

  /** Past the bound, the oldest kept segments go; the drains still before their end are told first. */
  private async bound(source: SourceName): Promise<void> {
    const list = this.kept.get(source) ?? [];
    while (list.length > 0 && this.keptBytes(source) > this.maxBacklogBytes) {
      const oldest = list[0]!;
      await this.drop(source, oldest, `its backlog in ${source} passed ${this.maxBacklogBytes} bytes`);
      await unlinkIfPresent(oldest.path);
      list.shift();
      await fsyncDir(this.keptDir(source));
    }
  }

  /** The drains are told of a segment they lose; their failing (a cursor not written) never stops the release. */
  private async drop(source: SourceName, segment: KeptSegment, why: string): Promise<void> {
    try {
      if (this.dropHandler) await this.dropHandler(source, segment, why);
      else await this.record(source, segment, why);
    } catch {
      // Counted in memory already; the cursor is written with the drain's next batch.
    }
  }

  /**
   * No forwarder to count a drop (the offline ingest, or a server before its drains open): each
   * drain still before the segment's end has the events of it after its position that its rules
   * match (its cursor keeps them; every event when it names the source only) added to its
   * cursor's unreported drops, and its position moved past it, in one write; the next forwarder
   * counts them.
   */
  private async record(source: SourceName, segment: KeptSegment, why: string): Promise<void> {
    for (const [drain, positions] of this.positions) {
      const at = positions.get(source);
      if (at === undefined || this.rules.get(drain)?.has(source) === false || at.seq > segment.seq || (at.seq === segment.seq && at.offset >= segment.bytes)) continue;
      const lql = this.rules.get(drain)?.get(source);
      const matchers = lql ? compileRules(lql) : null;
      let events = 0;
      for (let offset = at.seq < segment.seq ? 0 : at.offset; offset < segment.bytes; ) {
        const read = await readLines(segment.path, offset, segment.bytes, CHUNK_EVENTS);
        if (read === null || read.next === offset) break;
        events += matchers ? matchingEvents(read.lines, matchers).length : read.lines.length;
        offset = read.next;
      }
      positions.set(source, { seq: segment.seq + 1, offset: 0 });
      const before = this.unreported.get(drain)?.events ?? 0;
      if (before + events > 0) this.unreported.set(drain, { events: before + events, why: `${why}, while no drain forwarded` });
      try {
        await this.persist(drain);
      } catch {
        // Counted in memory: written with the next cursor write, or lost with this process (the drop goes on).
      }
    }
  }

  /** Deletes the kept segments every drain has passed. */
  async trim(): Promise<void> {
    await this.lane(async () => {
      for (const [source, list] of this.kept) {
        const passed = list.filter((k) => !this.wanted(source, k.seq, k.bytes));
        if (passed.length === 0) continue;
        for (const k of passed) await unlinkIfPresent(k.path);
        await fsyncDir(this.keptDir(source));
        this.kept.set(
          source,
          list.filter((k) => !passed.includes(k)),
        );
      }
    });
  }
}

/** Links `from` as `to` in `dir` (made when missing); null once done, else why not. A link there already is one kept before a crash: done. */
async function hardLink(from: string, dir: string, to: string): Promise<string | null> {
  try {
    await mkdir(dir, { recursive: true });
  } catch (error) {
    return (error as Error).message;
  }
  try {
    await link(from, to);
  } catch (error) {
    // Kept already: a crash came between keeping it and its deletion from the log, which compaction did again.
    if (!isCode(error, 'EEXIST')) return (error as Error).message;
  }
  return null;
}

/** Up to `max` event lines of a segment from `offset` (a line start) to `end`; null when the file is gone. */
async function readLines(path: string, offset: number, end: number, max: number): Promise<{ lines: string[]; next: number } | null> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if (isCode(error, 'ENOENT')) return null;
    throw error;
  }
  try {
    const lines: string[] = [];
    let at = offset;
    let size = CHUNK;
    while (at < end && lines.length < max) {
      const length = Math.min(size, end - at);
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await handle.read(buffer, 0, length, at);
      const data = buffer.subarray(0, bytesRead);
      const whole = data.lastIndexOf(0x0a) + 1;
      if (whole === 0) {
        // A line longer than the chunk: read again with room for it (a committed segment ends with a newline).
        if (length === end - at) break;
        size *= 2;
        continue;
      }
      let start = 0;
      while (start < whole && lines.length < max) {
        const nl = data.indexOf(0x0a, start);
        const line = data.subarray(start, nl);
        start = nl + 1;
        if (isBlank(line) || (mayBeMarker(line) && parseMarkerLine(line.toString('latin1')) !== null)) continue;
        lines.push(line.toString('utf8'));
      }
      at += start;
    }
    return { lines, next: at };
  } finally {
    await handle.close();
  }
}

function isBlank(line: Uint8Array): boolean {
  for (const b of line) if (b !== 0x20 && b !== 0x09 && b !== 0x0d) return false;
  return true;
}
