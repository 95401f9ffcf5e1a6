/**
 * Two checkouts' managed storage in one process while a writer ingests into each, beside the same
 * events compacted by hand: bench/managed.ts's live phase for the seed's cases that match a filter
 * (default: logs.all's pages), before and after a change side by side. Each build ingests the
 * newest events of the bench's NDJSON (`--edge`, `--functions`: files of them, e.g. `tail -n` of
 * the bench's data) and its background compactor settles them; then a writer per build ingests
 * batches of 100 (20 ms apart, as bench/managed.ts's) while each case's calls are interleaved
 * across the three (the order rotating round by round). Answers compared before and after the
 * timed calls. Prints the median wall time per call and each build's ratio to the files compacted
 * by hand.
 *
 *   npx tsx bench/managed-side-by-side.ts --before /path/to/other/checkout [--after .]
 *        --edge .bench-data/managed-tail/edge.ndjson --functions .bench-data/managed-tail/functions.ndjson
 *        [--filter logs.all] [--runs 5] [--rounds 4]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { benchCases } from './cases';
import { REFERENCE } from './dataset';
import { libraryAt, sourceAt, type Library } from './checkout-library';
import { liveBatch, waitCompacted } from './managed';
import { percentile, rotatingRounds, round, sameAnswers, loadAverage } from './stats';
import { peakRssMb } from './serve-process';

const { values: args } = parseArgs({
  options: {
    before: { type: 'string' },
    after: { type: 'string', default: '.' },
    edge: { type: 'string' },
    functions: { type: 'string' },
    filter: { type: 'string', default: 'logs.all' },
    runs: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '4' },
  },
});
if (!args.before || !args.edge || !args.functions) throw new Error('--before, --edge and --functions are required');
const filters = args.filter!.split(',');
// The bench's two projects: the busiest (P1) and about the average of 20 (P6).
const PROJECTS: Array<[string, number]> = [
  ['mixxcgojbhvdmfbwybqx', 1],
  ['fdwtflzzapajahtckzbl', 6],
];
const text = (v: unknown) => JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? String(x) : x));

async function readLines(path: string): Promise<string[]> {
  const out: string[] = [];
  for await (const line of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) if (line.trim() !== '') out.push(line);
  return out;
}
/** As bench/managed.ts: a nanosecond timestamp past 2^53 kept as its text. */
const parseEvent = (line: string) => JSON.parse(line.replace(/"timestamp":(-?\d{16,})/, '"timestamp":"$1"')) as object;

const dir = await mkdtemp(join(tmpdir(), 'le-bench-managed-sbs-'));
const builds: Record<'before' | 'after', Library> = {} as never;
let byHand: Library | null = null;
let writing = true;
const writers: Promise<void>[] = [];
try {
  const edge = await readLines(resolve(args.edge));
  const functions = await readLines(resolve(args.functions));
  const after = await libraryAt(args.after!);
  const { compactLogs } = await sourceAt<typeof import('../src/compaction/compact')>(args.after!, 'compaction/compact.ts');
  await compactLogs({ source: 'edgeLogs', inputs: resolve(args.edge), outDir: join(dir, 'by-hand', 'edge') });
  await compactLogs({ source: 'functionEdgeLogs', inputs: resolve(args.functions), outDir: join(dir, 'by-hand', 'functions') });
  byHand = await after.createEndpoints({
    sources: { edgeLogs: join(dir, 'by-hand', 'edge'), functionEdgeLogs: join(dir, 'by-hand', 'functions') },
    now: () => REFERENCE,
    cache: false,
    duckdb: { threads: 2 },
  });
  for (const name of ['before', 'after'] as const) {
    const lib = await libraryAt(args[name]!);
    const ep = await lib.createEndpoints({ storage: { dataDir: join(dir, name) }, now: () => REFERENCE, cache: false, duckdb: { threads: 2 } });
    builds[name] = ep;
    const started = Date.now();
    for (let i = 0; i < edge.length; i += 1000) await ep.ingest('cloudflare.logs.prod', edge.slice(i, i + 1000).map(parseEvent));
    for (let i = 0; i < functions.length; i += 1000) await ep.ingest('deno-relay-logs', functions.slice(i, i + 1000).map(parseEvent));
    await waitCompacted(ep, 600, join(dir, name));
    console.log(`${name}: ${edge.length} + ${functions.length} events ingested and compacted in ${Math.round((Date.now() - started) / 1000)} s`);
  }
  // A writer per build, as bench/managed.ts's.
  for (const ep of Object.values(builds)) {
    writers.push(
      (async () => {
        for (let i = 0; writing; i++) {
          const batch = liveBatch(i);
          await ep.ingest('cloudflare.logs.prod', batch);
          await new Promise((r) => setTimeout(r, 20));
        }
      })(),
    );
  }
  const names = ['before', 'after', 'byHand'] as const;
  const lib = (name: (typeof names)[number]) => (name === 'byHand' ? byHand! : builds[name]);
  console.log(`${args.runs} calls x ${args.rounds} rounds per case and side, interleaved, while a writer ingests into each build; load ${loadAverage()}`);
  console.log('| case | before ms | after ms | by hand ms | before / by hand | after / by hand |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const [project, rank] of PROJECTS) {
    for (const c of benchCases(project, rank).filter((k) => filters.some((f) => k.name.includes(f)))) {
      const call = (ep: Library) => ep.query(c.endpoint as never, c.params);
      // The writer's events are of another project: every answer is the same, before the timed
      // calls and after them (the writer's segments and commits change what each build reads).
      const answers = () => Promise.all(names.map(async (n) => text((await call(lib(n))).result)));
      await sameAnswers(c.name, 'before timing', answers);
      const times = await rotatingRounds(names, Number(args.rounds), Number(args.runs), (name) => call(lib(name)));
      const wall = { before: times.before.wall, after: times.after.wall, byHand: times.byHand.wall };
      await sameAnswers(c.name, 'after timing', answers);
      const p50 = (s: number[]) => round(percentile(s, 0.5), 2);
      console.log(
        `| ${c.name} | ${p50(wall.before)} | ${p50(wall.after)} | ${p50(wall.byHand)} | ${round(p50(wall.before) / p50(wall.byHand), 2)} | ${round(p50(wall.after) / p50(wall.byHand), 2)} |`,
      );
    }
  }
  console.log(`load at the end ${loadAverage()}; peak RSS (VmHWM) of the bench process, both builds and the files by hand in it: ${peakRssMb(process.pid)} MiB`);
} finally {
  writing = false;
  await Promise.all(writers);
  for (const ep of Object.values(builds)) await ep.close();
  await byHand?.close();
  await rm(dir, { recursive: true, force: true });
}
