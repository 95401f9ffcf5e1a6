import type { SourceName } from '../sources/source-descriptor';
import { parseExactJson } from '../util/exact-json';
import type { DrainStore, StoredDrain } from './drain-store';
import { isEveryEvent, parseLql, type EventMatcher } from './lql';
import { drainRequest, type DrainRequest, type OutgoingEvent } from './wire-formats';
import { Fifo } from './fifo';

/** Events in one request to a receiver, at most (Logflare's adaptors send 250). */
export const DRAIN_BATCH_EVENTS = 250;

/** Bytes of events (as stored) waiting for one drain, at most, by default: past it the oldest are dropped and counted. */
export const DEFAULT_DRAIN_BACKLOG_BYTES = 8 * 1024 * 1024;

/** Attempts at sending one batch, by default, before it is dropped and counted. */
export const DEFAULT_DRAIN_ATTEMPTS = 8;

/** The pause before attempt `n + 1` of a batch: 1 s, 2 s, 4 s, ... up to a minute. */
export function defaultDrainBackoffMs(attempt: number): number {
  return Math.min(60_000, 1000 * 2 ** (attempt - 1));
}

/** Sends one request; resolves with the HTTP status (a network failure rejects). */
export type DrainSender = (request: DrainRequest) => Promise<number>;

/** What a drain did since the process started (`GET /metrics`, the log). */
export interface DrainStats {
  id: number;
  token: string;
  name: string;
  type: string;
  /** Events waiting for the drain (in memory). */
  queued: number;
  /** Events the receiver answered 2xx for. */
  sent: number;
  /** Events given up: the backlog past its bound (oldest first), a batch past its attempts, a batch the receiver refused (4xx). */
  dropped: number;
  /** Failed attempts (network errors, 5xx, 408, 429). */
  failures: number;
  /** The last failure, null once a batch went through. */
  lastError: string | null;
}

/** Options of a `Forwarder`. */
export interface ForwarderOptions {
  store: DrainStore;
  /** Default: `fetch`, POST, 30 s per request. */
  send?: DrainSender;
  /** The pause between attempts (default a timer: tests pass their own). */
  sleep?: (ms: number) => Promise<void>;
  backoffMs?: (attempt: number) => number;
  maxAttempts?: number;
  /** Per drain (default `DEFAULT_DRAIN_BACKLOG_BYTES`). */
  maxBacklogBytes?: number;
  /** Replaces Datadog's intake URL (`LOG_ENDPOINTS_DATADOG_URL`). */
  datadogUrl?: string;
  /** Told of drops and of a receiver that starts failing (default: none). */
  onWarning?: (warning: { code: 'drain_failing' | 'drain_dropped'; message: string; drain: number }) => void;
}

interface Route {
  drain: number;
  /** Null for every event: no line read to match it. */
  match: EventMatcher | null;
}

/**
 * An event waiting for a drain: its line as stored, parsed only when its batch is sent, so the
 * backlog costs about its bytes (a parsed event takes several times its line in the heap).
 */
interface Queued {
  source: string;
  line: string;
  bytes: number;
}

interface DrainState {
  queue: Fifo<Queued>;
  bytes: number;
  running: Promise<void> | null;
  stats: DrainStats;
  overflowing: boolean;
}

/**
 * Forwards events to the drains whose rules match them, after ingest made them durable: `offer`
 * only keeps the batch's bytes (no parse on the ingest path); they are read, matched and sent
 * later, in order per drain, in batches of up to 250, each retried with backoff while the
 * receiver fails. Everything waits in memory, bounded per drain: past the bound the oldest
 * events are dropped and counted, and so is a batch past its attempts (docs/supabase.md, "Log Drains").
 *
 * @example
 * const forwarder = new Forwarder({ store });
 * forwarder.offer('authLogs', lines); // after the lines are durable
 */
export class Forwarder {
  private readonly inbox = new Fifo<{ source: SourceName; lines: Uint8Array }>();
  private inboxBytes = 0;
  private closed = false;
  private routes = new Map<SourceName, Route[]>();
  private readonly drains = new Map<number, DrainState>();
  private readonly send: DrainSender;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly backoffMs: (attempt: number) => number;
  private readonly maxAttempts: number;
  private readonly maxBacklogBytes: number;
  private readonly names = new Map<SourceName, string>();
  private pump: Promise<void> | null = null;

  constructor(private readonly options: ForwarderOptions) {
    this.send = options.send ?? fetchSender;
    this.sleep = options.sleep ?? timerSleep;
    this.backoffMs = options.backoffMs ?? defaultDrainBackoffMs;
    this.maxAttempts = options.maxAttempts ?? DEFAULT_DRAIN_ATTEMPTS;
    this.maxBacklogBytes = options.maxBacklogBytes ?? DEFAULT_DRAIN_BACKLOG_BYTES;
    for (const source of options.store.sources) this.names.set(source.name, source.logflare.names[0] ?? source.name);
    this.follow();
    options.store.onChange(() => this.follow());
  }

  /** A durable batch of a source (its stored lines): kept for the drains whose rules name the source, nothing else done now. */
  offer(source: SourceName, lines: Uint8Array): void {
    if (this.closed || !this.routes.has(source)) return;
    // The inbox is bounded like each drain's backlog: a burst past it loses its oldest batches.
    this.inbox.push({ source, lines });
    this.inboxBytes += lines.length;
    while (this.inboxBytes > this.maxBacklogBytes && this.inbox.length > 1) {
      const dropped = this.inbox.shift()!;
      this.inboxBytes -= dropped.lines.length;
      const events = countLines(dropped.lines);
      for (const route of this.routes.get(dropped.source) ?? []) this.drop(this.drains.get(route.drain), events, 'the backlog is full');
    }
    this.schedulePump();
  }

  /** Reads the inbox later, one batch a turn of the event loop: ingest's answers go out in between. */
  private schedulePump(): void {
    this.pump ??= new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.drainInbox())
      .catch((error: unknown) => this.warn('drain_failing', 0, `Log drains: a batch could not be read for forwarding (${(error as Error).message}); it is dropped.`));
  }

  /** Resolves once nothing waits: every offered event sent or dropped. */
  async idle(): Promise<void> {
    for (;;) {
      const waiting = [this.pump, ...[...this.drains.values()].map((d) => d.running)].filter((p) => p !== null);
      if (waiting.length === 0) return;
      await Promise.all(waiting);
    }
  }

  /** Each drain's counters. */
  stats(): DrainStats[] {
    return [...this.drains.values()].map((d) => ({ ...d.stats, queued: d.queue.length }));
  }

  /** Stops forwarding: what waits is dropped (it is in memory only). */
  close(): void {
    this.closed = true;
    this.inbox.clear();
    for (const drain of this.drains.values()) drain.queue.clear();
  }

  /** The routes and drains as the store holds them now: a deleted drain's backlog goes with it. */
  private follow(): void {
    const drains = new Map(this.options.store.list().map((d) => [d.id, d]));
    for (const [id, state] of this.drains) {
      if (!drains.has(id)) {
        state.queue.clear();
        state.bytes = 0;
        this.drains.delete(id);
      }
    }
    for (const drain of drains.values()) {
      const state = this.drains.get(drain.id);
      if (state) Object.assign(state.stats, { name: drain.name, type: drain.type });
      else
        this.drains.set(drain.id, {
          queue: new Fifo<Queued>(),
          bytes: 0,
          running: null,
          overflowing: false,
          stats: { id: drain.id, token: drain.token, name: drain.name, type: drain.type, queued: 0, sent: 0, dropped: 0, failures: 0, lastError: null },
        });
    }
    const routes = new Map<SourceName, Route[]>();
    for (const rule of this.options.store.rules()) {
      const source = this.options.store.sourceOf(rule);
      if (source === null || !drains.has(rule.backend_id)) continue;
      const list = routes.get(source) ?? [];
      list.push({ drain: rule.backend_id, match: isEveryEvent(rule.lql_string) ? null : parseLql(rule.lql_string) });
      routes.set(source, list);
    }
    this.routes = routes;
  }

  /** Reads the oldest waiting batch, matches each event to the drains' rules, and starts their senders. */
  private drainInbox(): void {
    this.pump = null;
    const next = this.inbox.shift();
    if (next === undefined) return;
    if (this.inbox.length > 0) this.schedulePump();
    this.inboxBytes -= next.lines.length;
    const { source, lines } = next;
    const routes = this.routes.get(source);
    if (routes) {
      const name = this.names.get(source) ?? source;
      const parse = routes.some((r) => r.match !== null);
      for (const line of Buffer.from(lines.buffer, lines.byteOffset, lines.length).toString('utf8').split('\n')) {
        if (line === '') continue;
        const event = parse ? (parseExactJson(line) as Record<string, unknown>) : null;
        const to = new Set<number>();
        for (const route of routes) if (!to.has(route.drain) && (route.match === null || route.match(event!))) to.add(route.drain);
        for (const id of to) this.enqueue(id, { source: name, line, bytes: line.length + 1 });
      }
    }
    for (const [id, state] of this.drains) if (state.queue.length > 0 && state.running === null) this.start(id, state);
  }

  private enqueue(id: number, item: Queued): void {
    const state = this.drains.get(id);
    if (!state) return;
    state.queue.push(item);
    state.bytes += item.bytes;
    let dropped = 0;
    while (state.bytes > this.maxBacklogBytes && state.queue.length > 1) {
      state.bytes -= state.queue.shift()!.bytes;
      dropped++;
    }
    if (dropped > 0) this.drop(state, dropped, 'the backlog is full');
  }

  private start(id: number, state: DrainState): void {
    const run = this.run(id, state).catch((error: unknown) =>
      this.warn('drain_failing', id, `Log drain ${state.stats.name}: forwarding stopped on ${(error as Error).message}; it starts again with the next events.`),
    );
    state.running = run.finally(() => {
      state.running = null;
      if (state.queue.length > 0 && this.drains.get(id) === state && !this.closed) this.start(id, state);
    });
  }

  /** Sends the drain's backlog, one batch at a time, each until it goes through or is given up. */
  private async run(id: number, state: DrainState): Promise<void> {
    while (state.queue.length > 0 && !this.closed) {
      const batch = state.queue.take(DRAIN_BATCH_EVENTS);
      for (const item of batch) state.bytes -= item.bytes;
      if (state.queue.length === 0) state.overflowing = false;
      await this.deliver(id, state, batch);
    }
  }

  private async deliver(id: number, state: DrainState, queued: Queued[]): Promise<void> {
    const batch: OutgoingEvent[] = queued.map((q) => ({ source: q.source, event: parseExactJson(q.line) as Record<string, unknown> }));
    for (let attempt = 1; ; attempt++) {
      const drain = this.current(id);
      if (drain === null || this.closed) return;
      let failure: string;
      try {
        const status = await this.send(await drainRequest(drain, batch, this.options.datadogUrl));
        if (status >= 200 && status < 300) {
          state.stats.sent += batch.length;
          state.stats.lastError = null;
          return;
        }
        failure = `the receiver answered ${status}`;
        // A refusal that another attempt cannot change: the batch is given up at once.
        if (status >= 400 && status < 500 && status !== 408 && status !== 429) {
          state.stats.failures++;
          state.stats.lastError = failure;
          this.drop(state, batch.length, failure);
          return;
        }
      } catch (error) {
        failure = (error as Error).message;
      }
      state.stats.failures++;
      if (state.stats.lastError === null) this.warn('drain_failing', id, `Log drain ${drain.name} (${drain.type}): ${failure}; retrying with backoff.`);
      state.stats.lastError = failure;
      if (attempt >= this.maxAttempts) {
        this.drop(state, batch.length, `${failure}, ${attempt} attempts`);
        return;
      }
      await this.sleep(this.backoffMs(attempt));
    }
  }

  private current(id: number): StoredDrain | null {
    return this.options.store.list().find((d) => d.id === id) ?? null;
  }

  private drop(state: DrainState | undefined, events: number, why: string): void {
    if (!state || events === 0) return;
    state.stats.dropped += events;
    // One warning per stretch of a full backlog, each given-up batch its own.
    if (why === 'the backlog is full') {
      if (state.overflowing) return;
      state.overflowing = true;
    }
    this.warn('drain_dropped', state.stats.id, `Log drain ${state.stats.name} (${state.stats.type}): dropped ${events} events (${why}); ${state.stats.dropped} dropped in all.`);
  }

  private warn(code: 'drain_failing' | 'drain_dropped', drain: number, message: string): void {
    try {
      this.options.onWarning?.({ code, message, drain });
    } catch {
      // A failing hook must not stop forwarding.
    }
  }
}

function countLines(lines: Uint8Array): number {
  let n = 0;
  for (const byte of lines) if (byte === 0x0a) n++;
  return n;
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
