/**
 * The parse thread's work on its own: `bodyLines` (parse, checks, the stored lines) over bodies of
 * the nine Supabase feeds as Vector sends them, in one process, no HTTP, no disk. CPU of this
 * process per event, so a change to the ingest path is measured without the server's other
 * threads around it. Its peer is the floor of the same work: Node's own `JSON.parse` of the body
 * (decoded from its bytes) and `JSON.stringify` of each event, what any ingest of JSON must at
 * least do; the two are timed in alternating rounds, and each figure is the median of its rounds.
 * `npm run bench` runs it in a process of its own (`measureParseApart`), so the CPU and the peak
 * memory are the parse's alone, not those of the bench's DuckDB and peers beside it.
 *
 *   npm run bench                                          (a phase of the full run; --skip-parse, --parse-seconds)
 *   npx tsx bench/parse.ts [--batches 100,1000] [--seconds 2] [--json out.json]  (this table alone)
 *   node --cpu-prof --import tsx bench/parse.ts --batches 100  (the same, profiled)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Prng } from '../src/fixtures/prng';
import { bodyLines } from '../src/ingest/body-lines';
import { BUILDERS } from '../test/support/supabase/vector-events';
import { LOG_TABLES, sourceNameOf } from '../test/support/supabase/vector-sources';
import { peakRssMb, resetPeakRss } from './serve-process';
import { percentile, round, loadAverages } from './stats';

/** Rounds each side's time is cut into, the two sides alternating: the medians of these. */
const ROUNDS = 5;
const ARRIVAL = '2026-11-21T12:00:00.000000Z';

/** A body of `batch` events of one feed, as Vector's http sink posts it (`{"batch": [...]}` is Logflare's; Vector sends the array). */
export function feedBodies(batch: number): Array<{ name: string; source: string; body: Buffer }> {
  const prng = new Prng(batch);
  const base = Date.UTC(2026, 10, 21, 10) * 1000;
  return LOG_TABLES.map((table) => {
    const events = Array.from({ length: batch }, (_, i) => BUILDERS[table](prng, { micros: base + i * 1000, nanos: i % 1000 }));
    return { name: table, source: sourceNameOf(table), body: Buffer.from(JSON.stringify(events)) };
  });
}

/** Ours: `bodyLines` as the HTTP route hands a body over, its nesting bounded as it was read. */
const ours = (body: Buffer, source: string) => bodyLines(body, 'application/json', ARRIVAL, undefined, source, true);

/** The floor: the body decoded and parsed, each event written back as a line, with nothing checked. */
function floor(body: Buffer): number {
  const events = JSON.parse(body.toString('utf8')) as unknown[];
  let bytes = 0;
  for (const event of events) bytes += JSON.stringify(event).length;
  return bytes;
}

/** Microseconds of this process's CPU per event, `work` run on one body for about `seconds`. */
function cpuPerEvent(work: () => unknown, batch: number, seconds: number): number {
  let runs = 0;
  const started = process.cpuUsage();
  const until = performance.now() + seconds * 1000;
  while (performance.now() < until) {
    for (let i = 0; i < 20; i++) work();
    runs += 20;
  }
  const used = process.cpuUsage(started);
  return (used.user + used.system) / (runs * batch);
}

export interface ParseFeed {
  name: string;
  bytes_per_event: number;
  /** Median of the rounds, µs of CPU per event. */
  ours_us: number;
  floor_us: number;
  ratio: number;
}

export interface ParseBatch {
  batch: number;
  feeds: ParseFeed[];
  /** Means of the nine feeds' medians. */
  mean: { ours_us: number; floor_us: number; ratio: number };
}

export interface ParseResult {
  /** Seconds of each side per feed and batch, in `rounds` alternating rounds. */
  seconds: number;
  rounds: number;
  load_average: { start: number[]; end: number[] };
  /** VmHWM of the process over the measure (the bodies made, both sides run). */
  vmhwm_mib: number;
  batches: ParseBatch[];
}

/** Times ours and the floor on the nine feeds' bodies at each batch size, `seconds` of each side per body. */
export function measureParse(batches: readonly number[], seconds: number, log: (line: string) => void): ParseResult {
  const start = loadAverages();
  resetPeakRss(process.pid);
  const results: ParseBatch[] = [];
  for (const batch of batches) {
    const feeds: ParseFeed[] = [];
    for (const { name, source, body } of feedBodies(batch)) {
      // Warm up both, so the numbers are the optimised code's.
      for (let i = 0; i < 200; i++) ours(body, source);
      for (let i = 0; i < 200; i++) floor(body);
      const samples = { ours: [] as number[], floor: [] as number[] };
      for (let r = 0; r < ROUNDS; r++) {
        samples.ours.push(cpuPerEvent(() => ours(body, source), batch, seconds / ROUNDS));
        samples.floor.push(cpuPerEvent(() => floor(body), batch, seconds / ROUNDS));
      }
      const [o, f] = [percentile(samples.ours, 0.5), percentile(samples.floor, 0.5)];
      feeds.push({ name, bytes_per_event: Math.round(body.length / batch), ours_us: round(o), floor_us: round(f), ratio: round(o / f, 1) });
      log(`parse: batch ${batch}, ${name}: ours ${round(o)} µs/event, floor ${round(f)} µs/event`);
    }
    const mean = (key: 'ours_us' | 'floor_us') => feeds.reduce((sum, f) => sum + f[key], 0) / feeds.length;
    results.push({ batch, feeds, mean: { ours_us: round(mean('ours_us')), floor_us: round(mean('floor_us')), ratio: round(mean('ours_us') / mean('floor_us'), 1) } });
  }
  return { seconds, rounds: ROUNDS, load_average: { start, end: loadAverages() }, vmhwm_mib: peakRssMb(process.pid), batches: results };
}

/** `measureParse` in a new process of this script (the bench's loader and flags), its result read back. */
export function measureParseApart(batches: readonly number[], seconds: number): ParseResult {
  const dir = mkdtempSync(join(tmpdir(), 'bench-parse-'));
  try {
    const out = join(dir, 'parse.json');
    const args = [...process.execArgv, fileURLToPath(import.meta.url), '--batches', batches.join(','), '--seconds', String(seconds), '--json', out];
    const child = spawnSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'] });
    if (child.status !== 0) throw new Error(`bench/parse.ts exited with ${child.status ?? child.signal}`);
    return JSON.parse(readFileSync(out, 'utf8')) as ParseResult;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function parseMarkdown(r: ParseResult): string[] {
  const [first] = r.batches;
  if (!first) return [];
  const head = r.batches.map((b) => `batch ${b.batch.toLocaleString('en')}: ours µs | floor µs | ours / floor`).join(' | ');
  const row = (name: string, bytes: string, cells: Array<{ ours_us: number; floor_us: number; ratio: number }>) =>
    `| ${name} | ${bytes} | ${cells.map((c) => `${c.ours_us} | ${c.floor_us} | ${c.ratio}`).join(' | ')} |`;
  return [
    `The ingest parse alone (\`bodyLines\`, the parse thread's work: parse, checks, the stored lines) against the floor of the same work (Node's \`JSON.parse\` of the decoded body and \`JSON.stringify\` of each event), CPU of the process per event, bodies of the nine Supabase feeds as Vector posts them; the median of ${r.rounds} alternating rounds, ${r.seconds} s of each side per body; load average ${r.load_average.start.join(' ')} at the start, ${r.load_average.end.join(' ')} at the end; VmHWM of its process (one of its own under \`npm run bench\`) ${r.vmhwm_mib} MiB.`,
    '',
    `| feed | bytes an event | ${head} |`,
    `|---|---:|${r.batches.map(() => '---:|---:|---:').join('|')}|`,
    ...first.feeds.map((f, i) =>
      row(
        f.name,
        String(f.bytes_per_event),
        r.batches.map((b) => b.feeds[i]!),
      ),
    ),
    row(
      'mean of the nine',
      '',
      r.batches.map((b) => b.mean),
    ),
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const { values } = parseArgs({ options: { batches: { type: 'string', default: '100,1000' }, seconds: { type: 'string', default: '2' }, json: { type: 'string' } } });
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const result = measureParse(values.batches.split(',').map(Number), Number(values.seconds), log);
  if (values.json) writeFileSync(values.json, JSON.stringify(result, null, 2));
  process.stdout.write(`${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}\n\n${parseMarkdown(result).join('\n')}\n`);
}
