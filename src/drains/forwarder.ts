import type { SourceName } from '../sources/source-descriptor';
import type { DrainStore, StoredDrain } from './drain-store';
import type { LogPosition } from './drain-cursors';
import type { DrainLog, KeptSegment } from './drain-log';
import { compileRules, drainRules, matchingEvents, type Matchers, type SourceRules } from './drain-rules';
import { Http2Sender } from './http2-sender';
import { drainRequest, type DrainRequest, type OutgoingEvent } from './wire-formats';

/** Events in one request to a receiver, at most (Logflare's adaptors send 250). */
export const DRAIN_BATCH_EVENTS = 250;

/** The pause before attempt `n + 1` of a batch: 1 s, 2 s, 4 s, ... up to a minute. */
export function defaultDrainBackoffMs(attempt: number): number {
  return Math.min(60_000, 1000 * 2 ** (attempt - 1));
}

/** Sends one request; resolves with the HTTP status (a network failure rejects). */
export type DrainSender = (request: DrainRequest) => Promise<number>;

/** What a drain did since the process started (`GET /metrics`, `/health`, the log). */
export interface DrainStats {
  id: number;
  token: string;
  name: string;
  type: string;
  /** Bytes of the write-ahead log (kept segments included) after the drain's cursor in the sources its rules name: what waits for it. */
  backlogBytes: number;
  /** Events the receiver answered 2xx for. */
  sent: number;
  /** Events given up: in a kept segment deleted past the backlog bound, or in a batch the receiver refused (4xx). */
  dropped: number;
  /** Failed attempts (network errors, 5xx, 408, 429). */
  failures: number;
  /** The last failure, null once a batch went through. */
  lastError: string | null;
}

/** Options of a `Forwarder`. */
export interface ForwarderOptions {
  store: DrainStore;
  log: DrainLog;
  /** Default: POST, 30 s per request: `fetch` (HTTP/1.1), or HTTP/2 for a request that asks for it (a webhook's `http2`). */
  send?: DrainSender;
  /** The pause between attempts (default a timer: tests pass their own). */
  sleep?: (ms: number) => Promise<void>;
  backoffMs?: (attempt: number) => number;
  /** Replaces Datadog's intake URL (`LOG_ENDPOINTS_DATADOG_URL`). */
  datadogUrl?: string;
  /** Told of drops and of a receiver that starts failing (default: none). */
  onWarning?: (warning: { code: 'drain_failing' | 'drain_dropped'; message: string; drain: number }) => void;
}

interface Runner {
  id: number;
  stats: DrainStats;
  /** Its rules per source; a source it has none for is passed over as it grows. */
  routes: Map<SourceName, Matchers>;
  running: Promise<void> | null;
  /** Set when something may be there to read; the loop waits only while it is false. */
  woken: boolean;
  wake: (() => void) | null;
  /** The batch being sent: a kept segment dropped meanwhile counts only what comes after it. */
  inflight: { source: SourceName; next: LogPosition } | null;
}

/**
 * Forwards to each drain the events its rules match, read from the write-ahead log after ingest
 * made them durable (docs/supabase.md, "Log Drains"): from the drain's cursor, in order per
 * source, in batches of up to 250, each retried with backoff until the receiver takes it; the
 * cursor is written (fsynced) after each batch taken, so a crash sends at most the batch in flight
 * again. Ingest only wakes it: nothing is read or sent on the ingest path.
 *
 * @example
 * const forwarder = new Forwarder({ store, log });
 */
export class Forwarder {
  private closed = false;
  private readonly runners = new Map<number, Runner>();
  private readonly send: DrainSender;
  private readonly http2 = new Http2Sender();
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly backoffMs: (attempt: number) => number;
  private readonly names = new Map<SourceName, string>();
  private readonly unsubscribe: () => void;
  private following: Promise<void> = Promise.resolve();
  private started = false;

  constructor(private readonly options: ForwarderOptions) {
    this.send = options.send ?? ((request) => (request.http === 'http2' ? this.http2.send(request) : fetchSender(request)));
    this.sleep = options.sleep ?? timerSleep;
    this.backoffMs = options.backoffMs ?? defaultDrainBackoffMs;
    for (const source of options.store.sources) this.names.set(source.name, source.logflare.names[0] ?? source.name);
    this.unsubscribe = options.log.onAppended(() => {
      for (const runner of this.runners.values()) this.poke(runner);
    });
    options.store.onChange(() => {
      if (!this.started) return;
      // The rules as the store holds them now, at once: a source whose rule was just added is not passed over while the cursors are written.
      const routes = this.routes();
      for (const runner of this.runners.values()) runner.routes = routes.get(runner.id)?.matchers ?? new Map();
      void this.follow();
    });
  }

  /**
   * Starts forwarding: cursors of drains deleted meanwhile go, drains without one get one (the
   * log's end); then drops are counted here, and those written in the cursors while none was
   * (the offline ingest, or this start before the drains had runners) are added and told.
   */
  async start(): Promise<void> {
    await this.follow();
    this.options.log.onDrop((source, segment, why) => this.dropped(source, segment, why));
    for (const [id, missed] of await this.options.log.takeUnreported()) {
      const runner = this.runners.get(id);
      if (runner) this.drop(runner, missed.events, missed.why);
    }
  }

  /** Resolves once every drain has read everything there is (a receiver that stays down keeps it waiting). */
  async idle(): Promise<void> {
    for (;;) {
      await this.following;
      const busy = [...this.runners.values()].filter((r) => r.running !== null && (r.woken || r.wake === null)).map((r) => r.running);
      if (busy.length === 0) return;
      await Promise.race([...busy, new Promise<void>((resolve) => setImmediate(resolve))]);
    }
  }

  /** Each drain's counters. */
  stats(): DrainStats[] {
    return [...this.runners.values()].map((r) => ({ ...r.stats, backlogBytes: this.backlogOf(r) }));
  }

  /** Stops forwarding; what is not sent stays in the log for the next start. */
  close(): void {
    this.closed = true;
    this.unsubscribe();
    this.http2.close();
    for (const runner of this.runners.values()) this.poke(runner);
  }

  /** The drains and their rules as the store holds them now; one at a time. */
  private follow(): Promise<void> {
    this.following = this.following.then(() => this.followNow()).catch((error: unknown) => this.warn('drain_failing', 0, `Log drains: a cursor could not be written (${(error as Error).message}).`));
    return this.following;
  }

  private async followNow(): Promise<void> {
    if (this.closed) return;
    const { store, log } = this.options;
    const drains = new Map(store.list().map((d) => [d.id, d]));
    // At start, cursors of drains the store does not hold (deleted before a crash let the cursor go);
    // after, those of drains deleted now (a drain being created has its cursor before the store holds it).
    const gone = this.started ? [...this.runners.keys()].filter((id) => !drains.has(id)) : log.drains().filter((id) => !drains.has(id));
    this.started = true;
    for (const id of gone) {
      const runner = this.runners.get(id);
      this.runners.delete(id);
      if (runner) this.poke(runner);
      await log.removeCursor(id);
    }
    const routes = this.routes();
    for (const drain of drains.values()) {
      if (log.positionsOf(drain.id) === undefined) await log.createCursor(drain.id);
      let runner = this.runners.get(drain.id);
      if (runner) Object.assign(runner.stats, { name: drain.name, type: drain.type });
      else {
        runner = {
          id: drain.id,
          routes: new Map(),
          running: null,
          woken: true,
          wake: null,
          inflight: null,
          stats: { id: drain.id, token: drain.token, name: drain.name, type: drain.type, backlogBytes: 0, sent: 0, dropped: 0, failures: 0, lastError: null },
        };
        this.runners.set(drain.id, runner);
      }
      const route = routes.get(drain.id);
      runner.routes = route?.matchers ?? new Map();
      // The sources it has rules for are read (one new to it from its end); the others are passed over, and nothing of them is kept for it.
      await log.follow(drain.id, route?.rules ?? new Map());
      if (log.attached && runner.running === null) this.launch(runner);
      this.poke(runner);
    }
    await log.trim();
  }

  /** Each drain's rules per source, as the store holds them: their texts, and compiled. */
  private routes(): Map<number, { rules: Map<SourceName, SourceRules>; matchers: Map<SourceName, Matchers> }> {
    const routes = new Map<number, { rules: Map<SourceName, SourceRules>; matchers: Map<SourceName, Matchers> }>();
    for (const [drain, rules] of drainRules(this.options.store)) {
      routes.set(drain, { rules, matchers: new Map([...rules].map(([source, lql]) => [source, compileRules(lql)])) });
    }
    return routes;
  }

  private poke(runner: Runner): void {
    runner.woken = true;
    const wake = runner.wake;
    runner.wake = null;
    wake?.();
  }

  private launch(runner: Runner): void {
    runner.running = this.run(runner)
      .catch((error: unknown) => this.warn('drain_failing', runner.id, `Log drain ${runner.stats.name}: forwarding stopped on ${(error as Error).message}; it starts again with the next events.`))
      .finally(() => {
        runner.running = null;
        if (this.runners.get(runner.id) === runner && !this.closed) {
          runner.woken = false;
          // Started again by the next event, not at once: a failing disk is not read in a loop.
          runner.wake = () => this.launch(runner);
        }
      });
  }

  private live(runner: Runner): boolean {
    return !this.closed && this.runners.get(runner.id) === runner;
  }

  /** Reads each source from the drain's cursor and sends what its rules match, until there is nothing more; then waits for ingest. */
  private async run(runner: Runner): Promise<void> {
    const { log } = this.options;
    while (this.live(runner)) {
      runner.woken = false;
      let sent = false;
      for (const source of log.sources) {
        if (!this.live(runner)) return;
        const at = log.positionsOf(runner.id)?.get(source);
        if (at === undefined) continue;
        const matchers = runner.routes.get(source);
        if (!matchers) {
          // No rule for the source: its events are passed over (nothing of it is kept for the drain).
          log.advance(runner.id, source, log.end(source));
          continue;
        }
        const batch = await log.read(source, at, DRAIN_BATCH_EVENTS);
        if (batch.next.seq === at.seq && batch.next.offset === at.offset) continue;
        const events = this.matching(source, batch.lines, matchers);
        if (events.length > 0) {
          runner.inflight = { source, next: batch.next };
          const delivered = await this.deliver(runner, events);
          runner.inflight = null;
          if (!delivered) return;
        }
        // A kept segment dropped while the batch was out moved the cursor past it already.
        const now = log.positionsOf(runner.id)?.get(source);
        if (now && now.seq === at.seq && now.offset === at.offset) log.advance(runner.id, source, batch.next);
        sent = true;
        runner.woken = true;
      }
      if (sent) await log.saveCursor(runner.id);
      if (!runner.woken) await new Promise<void>((resolve) => (runner.wake = resolve));
    }
  }

  private matching(source: SourceName, lines: readonly string[], matchers: Matchers): OutgoingEvent[] {
    const name = this.names.get(source) ?? source;
    return matchingEvents(lines, matchers).map((event) => ({ source: name, event }));
  }

  /** Sends one batch until the receiver takes it (true), refuses it (true: dropped and counted), or the drain stops (false). */
  private async deliver(runner: Runner, batch: OutgoingEvent[]): Promise<boolean> {
    const { stats } = runner;
    for (let attempt = 1; ; attempt++) {
      const drain = this.current(runner.id);
      if (drain === null || !this.live(runner)) return false;
      let failure: string;
      try {
        const status = await this.send(await drainRequest(drain, batch, this.options.datadogUrl));
        if (status >= 200 && status < 300) {
          stats.sent += batch.length;
          stats.lastError = null;
          return true;
        }
        failure = `the receiver answered ${status}`;
        // A refusal that another attempt cannot change: the batch is given up at once.
        if (status >= 400 && status < 500 && status !== 408 && status !== 429) {
          stats.failures++;
          stats.lastError = failure;
          this.drop(runner, batch.length, failure);
          return true;
        }
      } catch (error) {
        failure = (error as Error).message;
      }
      stats.failures++;
      if (stats.lastError === null) this.warn('drain_failing', runner.id, `Log drain ${drain.name} (${drain.type}): ${failure}; retrying with backoff.`);
      stats.lastError = failure;
      await this.sleep(this.backoffMs(attempt));
    }
  }

  /**
   * A segment deleted though drains want it (a kept one past the backlog bound): each drain still
   * before its end counts the events of it its rules match and it has not been sent, and its
   * cursor moves past it.
   */
  private async dropped(source: SourceName, segment: KeptSegment, why: string): Promise<void> {
    const { log } = this.options;
    for (const runner of this.runners.values()) {
      const matchers = runner.routes.get(source);
      let at = log.positionsOf(runner.id)?.get(source);
      if (at === undefined || at.seq > segment.seq || (at.seq === segment.seq && at.offset >= segment.bytes)) continue;
      if (runner.inflight?.source === source && runner.inflight.next.seq === segment.seq) at = runner.inflight.next;
      let events = 0;
      if (matchers) {
        for (let from = at.seq < segment.seq ? { seq: segment.seq, offset: 0 } : at; from.seq === segment.seq; ) {
          const batch = await log.read(source, from, DRAIN_BATCH_EVENTS);
          if (batch.next.seq !== segment.seq || (batch.next.offset === from.offset && batch.lines.length === 0)) break;
          events += this.matching(source, batch.lines, matchers).length;
          from = batch.next;
        }
      }
      log.advance(runner.id, source, { seq: segment.seq + 1, offset: 0 });
      await log.persist(runner.id);
      this.drop(runner, events, why);
    }
  }

  private backlogOf(runner: Runner): number {
    const positions = this.options.log.positionsOf(runner.id);
    let bytes = 0;
    for (const source of runner.routes.keys()) {
      const at = positions?.get(source);
      if (at) bytes += this.options.log.behind(source, at);
    }
    return bytes;
  }

  private current(id: number): StoredDrain | null {
    return this.options.store.list().find((d) => d.id === id) ?? null;
  }

  private drop(runner: Runner, events: number, why: string): void {
    if (events === 0) return;
    runner.stats.dropped += events;
    this.warn('drain_dropped', runner.id, `Log drain ${runner.stats.name} (${runner.stats.type}): dropped ${events} events (${why}); ${runner.stats.dropped} dropped in all.`);
  }

  private warn(code: 'drain_failing' | 'drain_dropped', drain: number, message: string): void {
    try {
      this.options.onWarning?.({ code, message, drain });
    } catch {
      // A failing hook must not stop forwarding.
    }
  }
}

/** POST with `fetch`, 30 s at most, the answer's body read and discarded. */
const fetchSender: DrainSender = async (request) => {
  const response = await fetch(request.url, { method: 'POST', headers: request.headers, body: request.body, signal: AbortSignal.timeout(30_000) });
  await response.arrayBuffer().catch(() => undefined);
  return response.status;
};

function timerSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
