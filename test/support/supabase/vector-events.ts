import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { once } from 'node:events';
import { join } from 'node:path';
import { deriveSeed, Prng } from '../../../src/fixtures/prng';
import { DAY, HOUR, microsOf, SECOND, type Micros } from './instants';
import { postgresEvent, pgbouncerEvent } from './vector-db';
import { functionEdgeEvent, functionLogEvent } from './vector-functions';
import { kongEvent } from './vector-kong';
import { authEvent, postgrestEvent, realtimeEvent, storageEvent, type At } from './vector-services';
import { LOG_TABLES, type LogTable, type VectorEvent, type VectorEvents } from './vector-sources';

/**
 * A deterministic generator of the events self-hosted Vector sends for each of its nine feeds
 * (the shapes are in the builders: vector-kong.ts, vector-services.ts, vector-db.ts,
 * vector-functions.ts). Same options, same events: it reads neither the clock nor `Math.random`.
 *
 * Each feed's events fall in four bands around `now`, in time order, so what a query over a time
 * range holds is known by construction (`census`):
 * - `older`: 30 h to 24 h before `now`, outside the last day (the FREE tier's window, which the
 *   preset does not keep: a range that reaches back to it holds them);
 * - `lastDay`: within the last day but not the last hour;
 * - `lastHour`: within the last hour, `now` included (what Studio shows by default);
 * - `future`: up to 5 s after `now` (a container clock a little ahead).
 * Band edges are exact instants (`now - 1 h`, `now - 1 day`), and a few events sit on them or
 * a microsecond (or a nanosecond, truncated) beside them, each counted in the band the rules
 * put it in: a lower bound is exclusive, an upper bound inclusive, timestamps are microseconds.
 */

export type Band = 'older' | 'lastDay' | 'lastHour' | 'future';
const BANDS: readonly Band[] = ['older', 'lastDay', 'lastHour', 'future'];

/** How many of a feed's events fall in each band. */
export type Census = Record<Band, number>;

/** Options of `generateVectorEvents`. */
export interface VectorEventsOptions {
  /** The instant the bands are placed around. */
  now: Date;
  /** Same seed, same events (default 1). */
  seed?: number;
  /** Events per feed, besides the few on band edges (default `DEFAULT_COUNTS`). */
  counts?: Partial<Record<LogTable, number>>;
}

/** Events per feed by default: the gateway and Postgres over 100 in the last hour, so Studio's `limit 100` cuts. */
export const DEFAULT_COUNTS: Readonly<Record<LogTable, number>> = {
  edge_logs: 1500,
  auth_logs: 400,
  postgrest_logs: 200,
  realtime_logs: 200,
  storage_logs: 250,
  postgres_logs: 700,
  function_edge_logs: 300,
  function_logs: 300,
  pgbouncer_logs: 150,
};

/** Each feed's event, as Vector sends it (the bench's week builds its events with these too). */
export const BUILDERS: Record<LogTable, (prng: Prng, at: At) => VectorEvent> = {
  edge_logs: (prng, at) => kongEvent(prng, at.micros),
  auth_logs: authEvent,
  postgrest_logs: postgrestEvent,
  realtime_logs: realtimeEvent,
  storage_logs: storageEvent,
  postgres_logs: postgresEvent,
  function_edge_logs: functionEdgeEvent,
  function_logs: functionLogEvent,
  pgbouncer_logs: pgbouncerEvent,
};

/** Feeds whose timestamps are whole seconds (nginx's and PostgREST's own clocks): many events share one. */
export const WHOLE_SECONDS: ReadonlySet<LogTable> = new Set(['edge_logs', 'postgrest_logs']);

/** An event on a band edge: its offset from `now` (µs), nanoseconds past it, and the band it counts in. */
interface EdgeEvent {
  offset: Micros;
  nanos: number;
  band: Band;
}

const EDGE_EVENTS: Partial<Record<LogTable, EdgeEvent[]>> = {
  edge_logs: [
    { offset: -DAY, nanos: 0, band: 'older' },
    { offset: -HOUR, nanos: 0, band: 'lastDay' },
    { offset: 0, nanos: 0, band: 'lastHour' },
  ],
  postgres_logs: [
    { offset: -DAY, nanos: 500, band: 'older' },
    { offset: -DAY + 1, nanos: 0, band: 'lastDay' },
    { offset: -HOUR, nanos: 999, band: 'lastDay' },
    { offset: -HOUR + 1, nanos: 0, band: 'lastHour' },
  ],
  auth_logs: [{ offset: -HOUR, nanos: 0, band: 'lastDay' }],
};

/** The bands as inclusive ranges of offsets from `now`, a second inside the edges. */
const RANGES: Record<Band, readonly [Micros, Micros]> = {
  older: [-30 * HOUR, -DAY - SECOND],
  lastDay: [-DAY + SECOND, -HOUR - SECOND],
  lastHour: [-HOUR + SECOND, 0],
  future: [SECOND, 5 * SECOND],
};

function bandSizes(total: number): Record<Band, number> {
  const lastHour = Math.round(total * 0.45);
  const older = Math.round(total * 0.08);
  const future = Math.max(1, Math.round(total * 0.01));
  return { older, lastDay: Math.max(0, total - lastHour - older - future), lastHour, future };
}

/** What each band of a feed holds, by construction. */
export function censusOf(table: LogTable, total: number = DEFAULT_COUNTS[table]): Census {
  const census = bandSizes(total);
  for (const edge of EDGE_EVENTS[table] ?? []) census[edge.band]++;
  return census;
}

/** The instants of a feed's events, in time order. */
function* instants(table: LogTable, now: Micros, total: number, prng: Prng): Generator<At> {
  const sizes = bandSizes(total);
  const whole = WHOLE_SECONDS.has(table);
  const unit = whole ? SECOND : 1;
  for (const band of BANDS) {
    const [lo, hi] = RANGES[band];
    const n = sizes[band];
    const cells = Math.floor((hi - lo) / unit) + 1;
    let previous: At | null = null;
    for (let i = 0; i < n; i++) {
      // Often the same instant as the line before: a burst of requests within one second.
      if (previous && prng.chance(whole ? 0.12 : 0.02)) {
        yield { micros: previous.micros, nanos: whole ? 0 : prng.int(1000) };
        continue;
      }
      const cell = Math.min(cells - 1, Math.floor(((i + prng.next()) * cells) / n));
      previous = { micros: now + lo + cell * unit, nanos: whole ? 0 : prng.int(1000) };
      yield previous;
    }
    for (const edge of EDGE_EVENTS[table] ?? []) {
      if (edgeAfter(edge) === band) yield { micros: now + edge.offset, nanos: edge.nanos };
    }
  }
}

/** The band after which an edge event comes in time order: the last one ending at or before it. */
function edgeAfter(edge: EdgeEvent): Band {
  let after: Band = 'older';
  for (const band of BANDS) if (RANGES[band][1] <= edge.offset) after = band;
  return after;
}

/** One feed's events as a stream, in time order: what the NDJSON writer and `generateVectorEvents` read. */
export function* vectorEventStream(table: LogTable, options: VectorEventsOptions): Generator<VectorEvent> {
  const seed = options.seed ?? 1;
  const total = options.counts?.[table] ?? DEFAULT_COUNTS[table];
  const times = new Prng(deriveSeed(seed, `${table}:time`));
  const prng = new Prng(deriveSeed(seed, table));
  const build = BUILDERS[table];
  for (const at of instants(table, microsOf(options.now), total, times)) yield build(prng, at);
}

/**
 * Every feed's events (in memory), and what each band holds.
 *
 * @example
 * const { events, census } = generateVectorEvents({ now: new Date('2026-11-21T12:00:00Z') });
 * events.edge_logs.length === census.edge_logs.older + census.edge_logs.lastDay + census.edge_logs.lastHour + census.edge_logs.future;
 */
export function generateVectorEvents(options: VectorEventsOptions): { events: VectorEvents; census: Record<LogTable, Census> } {
  const events = {} as VectorEvents;
  const census = {} as Record<LogTable, Census>;
  for (const table of LOG_TABLES) {
    events[table] = [...vectorEventStream(table, options)];
    census[table] = censusOf(table, options.counts?.[table] ?? DEFAULT_COUNTS[table]);
  }
  return { events, census };
}

/**
 * Writes each feed as NDJSON (`<outDir>/<table>.ndjson`), streamed in chunks of about 1 MB, for
 * volumes that do not fit in memory (the bench's Studio cases). Returns the files by table.
 */
export async function writeVectorNdjson(
  options: VectorEventsOptions & { outDir: string; tables?: readonly LogTable[]; onProgress?: (table: LogTable, written: number) => void },
): Promise<Record<LogTable, string>> {
  await mkdir(options.outDir, { recursive: true });
  const files = {} as Record<LogTable, string>;
  for (const table of options.tables ?? LOG_TABLES) {
    const file = (files[table] = join(options.outDir, `${table}.ndjson`));
    const out = createWriteStream(file);
    let chunk = '';
    let written = 0;
    for (const event of vectorEventStream(table, options)) {
      chunk += `${JSON.stringify(event)}\n`;
      written++;
      if (chunk.length >= 1 << 20) {
        if (!out.write(chunk)) await once(out, 'drain');
        chunk = '';
        options.onProgress?.(table, written);
      }
    }
    out.end(chunk);
    await once(out, 'finish');
    options.onProgress?.(table, written);
  }
  return files;
}
