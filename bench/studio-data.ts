import { createWriteStream, existsSync } from 'node:fs';
import { once } from 'node:events';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { deriveSeed, Prng, uuid } from '../src/fixtures/prng';
import { DAY, microsOf, SECOND, type Micros } from '../test/support/supabase/instants';
import { BUILDERS, WHOLE_SECONDS } from '../test/support/supabase/vector-events';
import { LOG_TABLES, type LogTable, type VectorEvent } from '../test/support/supabase/vector-sources';
import { REFERENCE } from './dataset';

/**
 * A self-hosted Supabase week for the Studio cases (bench/studio.ts): the events Vector ships for
 * its nine feeds, built by the test suite's builders (test/support/supabase/vector-*.ts), spread
 * evenly over the 7 days before `REFERENCE`, each with an `id` of its own (seeded, so every engine
 * holds the same ids and answers can be compared by id). Written once per scale as NDJSON into
 * `.bench-data/studio-<scale>/` (git ignores it) and reused.
 */

export const STUDIO_SCALES = {
  default: 10_000_000,
  small: 1_000_000,
  tiny: 100_000,
} as const;
export type StudioScale = keyof typeof STUDIO_SCALES;

/**
 * Share of each feed in a stack that is used: the API gateway sees every request and Postgres logs
 * every statement PostgREST and the poolers run, so they dominate; the services log a line per call
 * or per state change.
 */
export const FEED_WEIGHTS: Readonly<Record<LogTable, number>> = {
  edge_logs: 0.4,
  postgres_logs: 0.25,
  auth_logs: 0.08,
  postgrest_logs: 0.07,
  realtime_logs: 0.06,
  storage_logs: 0.05,
  function_edge_logs: 0.04,
  function_logs: 0.03,
  pgbouncer_logs: 0.02,
};

export interface StudioData {
  scale: StudioScale;
  dir: string;
  /** NDJSON of each feed, in time order. */
  files: Record<LogTable, string>;
  counts: Record<LogTable, number>;
}

/** One feed's events of the week, in time order, each with its id first. */
function* weekEvents(table: LogTable, count: number, seed: number): Generator<VectorEvent> {
  const prng = new Prng(deriveSeed(seed, `week:${table}`));
  const times = new Prng(deriveSeed(seed, `week:${table}:time`));
  const ids = new Prng(deriveSeed(seed, `week:${table}:id`));
  const end: Micros = microsOf(REFERENCE);
  const span = 7 * DAY;
  for (let i = 0; i < count; i++) {
    let micros = end - span + Math.floor(((i + times.next()) * span) / count);
    if (WHOLE_SECONDS.has(table)) micros -= micros % SECOND;
    const event = BUILDERS[table](prng, { micros, nanos: WHOLE_SECONDS.has(table) ? 0 : times.int(1000) });
    // One stack, one project: the test builders put a few gateway events in another project (for
    // the single-project tests); a self-hosted Vector sends "default" for all.
    if (event.project !== undefined) event.project = 'default';
    yield { id: uuid(ids), ...event };
  }
}

/** Writes (once per scale) or reuses the week's NDJSON. */
export async function prepareStudioData(scale: StudioScale, log: (line: string) => void): Promise<StudioData> {
  const dir = resolve('.bench-data', `studio-${scale}`);
  const files = Object.fromEntries(LOG_TABLES.map((t) => [t, join(dir, `${t}.ndjson`)])) as Record<LogTable, string>;
  const total = STUDIO_SCALES[scale];
  const counts = Object.fromEntries(LOG_TABLES.map((t) => [t, Math.round(total * FEED_WEIGHTS[t])])) as Record<LogTable, number>;
  const marker = join(dir, 'ready.json');
  const expected = JSON.stringify({ counts, seed: 1, version: 2 });
  if (existsSync(marker) && (await readFile(marker, 'utf8')) === expected) {
    log(`studio: reusing the week in ${dir}`);
    return { scale, dir, files, counts };
  }
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  log(`studio: generating a self-hosted week of ${total.toLocaleString('en')} events over ${LOG_TABLES.length} feeds into ${dir}`);
  for (const table of LOG_TABLES) {
    const out = createWriteStream(files[table]);
    let chunk = '';
    for (const event of weekEvents(table, counts[table], 1)) {
      chunk += `${JSON.stringify(event)}\n`;
      if (chunk.length >= 1 << 20) {
        if (!out.write(chunk)) await once(out, 'drain');
        chunk = '';
      }
    }
    out.end(chunk);
    await once(out, 'finish');
    log(`  ${table}: ${counts[table].toLocaleString('en')} events`);
  }
  await writeFile(marker, expected);
  return { scale, dir, files, counts };
}

/** The id of a feed's `index`-th event of the week (the same sequence the generator draws). */
export function weekId(table: LogTable, index: number, seed = 1): string {
  const ids = new Prng(deriveSeed(seed, `week:${table}:id`));
  let id = '';
  for (let i = 0; i <= index; i++) id = uuid(ids);
  return id;
}
