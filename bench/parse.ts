/**
 * The parse thread's work on its own: `bodyLines` (parse, checks, the stored lines) over bodies of
 * the nine Supabase feeds as Vector sends them, in one process, no HTTP, no disk. CPU of this
 * process per event, so a change to the ingest path is measured without the server's other
 * threads around it.
 *
 *   npx tsx bench/parse.ts [--batch 100] [--seconds 2]
 *   node --cpu-prof --import tsx bench/parse.ts               (the same, profiled)
 */
import { parseArgs } from 'node:util';
import { Prng } from '../src/fixtures/prng';
import { bodyLines } from '../src/ingest/body-lines';
import { BUILDERS } from '../test/support/supabase/vector-events';
import { LOG_TABLES, sourceNameOf } from '../test/support/supabase/vector-sources';
import { round } from './stats';

/** A body of `batch` events of one feed, as Vector's http sink posts it (`{"batch": [...]}` is Logflare's; Vector sends the array). */
export function feedBodies(batch: number): Array<{ name: string; source: string; body: Buffer }> {
  const prng = new Prng(batch);
  const base = Date.UTC(2026, 10, 21, 10) * 1000;
  return LOG_TABLES.map((table) => {
    const events = Array.from({ length: batch }, (_, i) => BUILDERS[table](prng, { micros: base + i * 1000, nanos: i % 1000 }));
    return { name: table, source: sourceNameOf(table), body: Buffer.from(JSON.stringify(events)) };
  });
}

/** Microseconds of CPU per event of `bodyLines` on each body, each run for about `seconds`; as the HTTP route hands a body over, its nesting bounded as it was read. */
export function measureParse(
  bodies: ReadonlyArray<{ name: string; source: string; body: Buffer }>,
  batch: number,
  seconds: number,
): Array<{ name: string; us_per_event: number; bytes_per_event: number }> {
  const arrival = '2026-11-21T12:00:00.000000Z';
  return bodies.map(({ name, source, body }) => {
    // Warm up, so the numbers are the optimised code's.
    for (let i = 0; i < 200; i++) bodyLines(body, 'application/json', arrival, undefined, source, true);
    let runs = 0;
    const started = process.cpuUsage();
    const until = performance.now() + seconds * 1000;
    while (performance.now() < until) {
      for (let i = 0; i < 20; i++) bodyLines(body, 'application/json', arrival, undefined, source, true);
      runs += 20;
    }
    const used = process.cpuUsage(started);
    return { name, us_per_event: round((used.user + used.system) / (runs * batch), 2), bytes_per_event: Math.round(body.length / batch) };
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { batch: { type: 'string', default: '100' }, seconds: { type: 'string', default: '2' } } });
  const batch = Number(values.batch);
  const results = measureParse(feedBodies(batch), batch, Number(values.seconds));
  for (const r of results) console.log(`${r.name.padEnd(20)} ${String(r.us_per_event).padStart(6)} µs/event  (${r.bytes_per_event} bytes/event)`);
  const mean = results.reduce((sum, r) => sum + r.us_per_event, 0) / results.length;
  console.log(`${'mean of the nine'.padEnd(20)} ${String(round(mean, 2)).padStart(6)} µs/event`);
}
