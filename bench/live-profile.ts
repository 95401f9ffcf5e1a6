/**
 * Managed storage's live path taken apart, statement by statement: two checkouts' managed storage
 * (each a copy of one settled data folder, made once by the checkout here: `--edge` and
 * `--functions` ingested through `ep.ingest` and compacted in the background) beside the same
 * events compacted by hand, in one process, while a writer per build ingests as bench/managed.ts's
 * (batches of 100, 20 ms apart). Each case's calls rotate across the sides round by round; answers
 * compared first. Prints per case and side the p50 wall / process CPU per call (ms) and how many
 * statements were prepared during the timed calls (a kept text is not prepared again); with
 * `--profile`, each statement run again under DuckDB's profiling: latency, planner, operators'
 * CPU (`--operators`: per operator kind); `--sql` the texts; `--why` what changed in a text
 * prepared again, and the prepare's wall time. `--hold <s>`: segments never close, the writers
 * stop after that many seconds, and the calls read what memory holds with nothing ingesting
 * beside them. `--idle`: no writer.
 * docs/performance.md, "The live path's statements cut to what they read".
 *
 *   npx tsx bench/live-profile.ts --dir /tmp/live-profile --edge .bench-data/managed-tail/edge.ndjson
 *        --functions .bench-data/managed-tail/functions.ndjson [--before <checkout>] [--after .]
 *        [--filter 'interval=hourly,logs.all project=P project_tier=PRO$'] [--runs 5] [--rounds 4]
 *        [--profile] [--operators] [--sql] [--why] [--hold 20] [--idle]
 *
 * A filter ending in `$` names a case exactly, its project as `P`.
 */
import { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBConnection } from '@duckdb/node-api';
import { createEndpoints } from '../src/index';
import { compactLogs } from '../src/compaction/compact';
import { benchCases } from './cases';
import { REFERENCE } from './dataset';
import { libraryAt, type Library } from './checkout-library';
import { liveBatch, waitCompacted } from './managed';
import { percentile, round, loadAverage } from './stats';
import { peakRssMb } from './serve-process';
import { caught, profiled, type ProfileNode } from './caught-statements';

const { values: args } = parseArgs({
  options: {
    dir: { type: 'string' },
    edge: { type: 'string' },
    functions: { type: 'string' },
    filter: { type: 'string', default: 'logs.all' },
    runs: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '4' },
    before: { type: 'string' },
    after: { type: 'string', default: '.' },
    profile: { type: 'boolean', default: false },
    operators: { type: 'boolean', default: false },
    hold: { type: 'string' },
    why: { type: 'boolean', default: false },
    sql: { type: 'boolean', default: false },
    idle: { type: 'boolean', default: false },
  },
});
const dir = resolve(args.dir!);
async function readLines(path: string): Promise<string[]> {
  const out: string[] = [];
  for await (const line of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) if (line.trim() !== '') out.push(line);
  return out;
}
const parseEvent = (line: string) => JSON.parse(line.replace(/"timestamp":(-?\d{16,})/, '"timestamp":"$1"')) as object;

if (!existsSync(join(dir, 'ready'))) {
  mkdirSync(dir, { recursive: true });
  await compactLogs({ source: 'edgeLogs', inputs: resolve(args.edge!), outDir: join(dir, 'by-hand', 'edge') });
  await compactLogs({ source: 'functionEdgeLogs', inputs: resolve(args.functions!), outDir: join(dir, 'by-hand', 'functions') });
  const ep = await createEndpoints({ storage: { dataDir: join(dir, 'managed') }, now: () => REFERENCE, cache: false, duckdb: { threads: 2 } });
  const edge = await readLines(resolve(args.edge!));
  for (let i = 0; i < edge.length; i += 1000) await ep.ingest('cloudflare.logs.prod', edge.slice(i, i + 1000).map(parseEvent));
  const functions = await readLines(resolve(args.functions!));
  for (let i = 0; i < functions.length; i += 1000) await ep.ingest('deno-relay-logs', functions.slice(i, i + 1000).map(parseEvent));
  await waitCompacted(ep, 600, join(dir, 'managed'));
  await ep.close();
  writeFileSync(join(dir, 'ready'), '');
  console.log('ready');
}
// Each build opens its own copy of the settled data (the writer's files do not pile up run to run).
const builds: Record<string, Library> = {};
for (const [name, path] of [
  ['before', args.before],
  ['after', args.after],
] as const) {
  if (!path) continue;
  const copy = join(dir, `run-${name}`);
  rmSync(copy, { recursive: true, force: true });
  cpSync(join(dir, 'managed'), copy, { recursive: true });
  const lib = await libraryAt(path);
  const hold = args.hold ? { maxSegmentBytes: 2 ** 30, maxSegmentAgeMs: 1e9, segmentQuietMs: 1e9 } : {};
  builds[name] = await lib.createEndpoints({ storage: { dataDir: copy, ...hold }, now: () => REFERENCE, cache: false, duckdb: { threads: 2 } });
}
const byHand = await createEndpoints({
  sources: { edgeLogs: join(dir, 'by-hand', 'edge'), functionEdgeLogs: join(dir, 'by-hand', 'functions') },
  now: () => REFERENCE,
  cache: false,
  duckdb: { threads: 2 },
});
let writing = !args.idle;
const writers = Object.values(builds).map(async (ep) => {
  for (let i = 0; writing; i++) {
    await ep.ingest('cloudflare.logs.prod', liveBatch(i));
    await new Promise((r) => setTimeout(r, 20));
  }
});
await new Promise((r) => setTimeout(r, args.hold ? Number(args.hold) * 1000 : 3000));
if (args.hold) {
  // Memory holds what the writers wrote (their segments never close), and nothing runs beside the calls.
  writing = false;
  await Promise.all(writers);
  console.log(`writers stopped after ${args.hold} s; memory: ${JSON.stringify(Object.values(builds).map((b) => b.stats().storage?.memoryTablesBytes))}`.slice(0, 600));
}
console.log(`${args.runs} calls x ${args.rounds} rounds per case and side, rotated; load ${loadAverage()}`);
// Statements prepared per call: a text the engine kept prepared is not prepared again.
let prepares = 0;
const prepare = DuckDBConnection.prototype.prepare;
DuckDBConnection.prototype.prepare = async function (this: DuckDBConnection, sql: string) {
  prepares++;
  if (!args.why) return prepare.call(this, sql);
  // What in the text changed: the memory segments it names, the heads tables, the files; and what
  // preparing it took (wall ms: the writers' CPU shares the process, so its CPU would hold theirs).
  const marks = [...sql.matchAll(/le_seq IN \([^)]*\)|le_heads_\d+|part-[0-9a-f]{6}/g)].map((x) => x[0]);
  const t = process.hrtime.bigint();
  const prepared = await prepare.call(this, sql);
  console.log(`      prepared in ${round(Number(process.hrtime.bigint() - t) / 1e6, 2)} ms: ${[...new Set(marks)].join(' ')}`.slice(0, 400));
  return prepared;
};
const text = (v: unknown) => JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? String(x) : x));
const sides: Array<[string, Library]> = [...Object.entries(builds), ['hand', byHand]];
try {
  for (const [project, rank] of [
    ['mixxcgojbhvdmfbwybqx', 1],
    ['fdwtflzzapajahtckzbl', 6],
  ] as const) {
    for (const c of benchCases(project, rank).filter((k) => args.filter!.split(',').some((f) => (f.endsWith('$') ? k.name.replace(/P[0-9]+/, 'P') === f.slice(0, -1) : k.name.includes(f))))) {
      const answers = await Promise.all(sides.map(async ([, ep]) => text((await ep.query(c.endpoint as never, c.params)).result)));
      if (answers.some((a) => a !== answers.at(-1))) throw new Error(`${c.name}: the answers differ`);
      const m: Record<string, { wall: number[]; cpu: number[]; per: Array<Record<string, number[]>>; sqls: string[]; prepared: number }> = {};
      for (let r = 0; r < Number(args.rounds); r++) {
        for (let k = 0; k < sides.length; k++) {
          const [name, ep] = sides[(r + k) % sides.length]!;
          const x = (m[name] ??= { wall: [], cpu: [], per: [], sqls: [], prepared: 0 });
          for (let i = 0; i < Number(args.runs); i++) {
            const t = process.hrtime.bigint();
            const u = process.cpuUsage();
            const before = prepares;
            const statements = await caught(() => ep.query(c.endpoint as never, c.params));
            const d = process.cpuUsage(u);
            x.cpu.push((d.user + d.system) / 1000);
            x.wall.push(Number(process.hrtime.bigint() - t) / 1e6);
            x.prepared += prepares - before;
            x.sqls = statements.map((s) => s.sql);
            if (args.profile) {
              for (const [j, st] of statements.entries()) {
                const p = await profiled(st, join(dir, `profile-${process.pid}.json`));
                x.per[j] ??= {};
                (x.per[j]!.latency ??= []).push(p.latency! * 1000);
                (x.per[j]!.planner ??= []).push(p.planner! * 1000);
                (x.per[j]!.cpu ??= []).push(p.cpu_time! * 1000);
                if (args.operators) {
                  // Each operator's time summed by its name (and table or function), medians printed per side.
                  const sums = new Map<string, number>();
                  const walk = (n: ProfileNode) => {
                    const what = n.extra_info?.Table ?? n.extra_info?.Function ?? '';
                    const key = `${n.operator_name ?? '?'} ${String(what)}`;
                    sums.set(key, (sums.get(key) ?? 0) + (n.operator_timing ?? 0) * 1000);
                    for (const ch of n.children ?? []) walk(ch);
                  };
                  for (const ch of p.children ?? []) walk(ch);
                  for (const [key, ms] of sums) (x.per[j]![`op ${key}`] ??= []).push(ms);
                }
              }
            }
          }
        }
      }
      const p50 = (s: number[] | undefined) => round(percentile(s ?? [], 0.5), 2);
      const row = sides.map(([name]) => `${p50(m[name]!.wall)} / ${p50(m[name]!.cpu)} (${m[name]!.prepared} prepared)`);
      console.log(`| ${c.name} | ${row.join(' | ')} |`);
      for (const [name] of sides) {
        for (const [j, p] of m[name]!.per.entries()) {
          console.log(`    ${name} ${j + 1}: latency ${p50(p.latency)} planner ${p50(p.planner)} cpu ${p50(p.cpu)}`);
          for (const [key, v] of Object.entries(p)) if (key.startsWith('op ') && p50(v) >= 0.05) console.log(`      ${key}: ${p50(v)}`);
          if (args.sql) console.log(`      ${m[name]!.sqls[j]!.replace(/\s+/g, ' ').slice(0, 8000)}`);
        }
      }
    }
  }
} finally {
  writing = false;
  await Promise.all(writers);
  for (const ep of Object.values(builds)) await ep.close();
  await byHand.close();
  console.log(`load at the end ${loadAverage()}; peak RSS (VmHWM) of the bench process, every build and the files by hand in it: ${peakRssMb(process.pid)} MiB`);
}
