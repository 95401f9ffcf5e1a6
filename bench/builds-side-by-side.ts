/**
 * Two checkouts' libraries in one process over the same compacted data: the seed's cases that
 * match a filter (default: hourly usage and the older pages of logs.all), each library's calls
 * interleaved (the order alternating round by round), answers compared first. Prints the median
 * wall and process CPU time per call; CPU, which waits for no other process, is the steadier
 * measure on a shared machine (docs/performance.md, "The seed's older pages and hourly usage").
 *
 *   npx tsx bench/builds-side-by-side.ts --before /path/to/other/checkout [--after .] [--data .bench-data/default]
 *                                        [--filter hourly,end=] [--runs 10] [--rounds 6] [--threads 2] [--threads-before 2]
 *
 * `--before . --threads-before 1` compares DuckDB's threads instead: the same build with one and two.
 */
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { benchCases } from './cases';
import { REFERENCE } from './dataset';
import { percentile, round } from './stats';

const { values: args } = parseArgs({
  options: {
    before: { type: 'string' },
    after: { type: 'string', default: '.' },
    data: { type: 'string', default: '.bench-data/default' },
    filter: { type: 'string', default: 'hourly,end=' },
    runs: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '6' },
    threads: { type: 'string', default: '2' },
    'threads-before': { type: 'string' },
  },
});
if (!args.before) throw new Error('--before <checkout> is required');
const dir = resolve(args.data!);
const sources = { edgeLogs: join(dir, 'parquet', 'edge'), functionEdgeLogs: join(dir, 'parquet', 'functions') };
const filters = args.filter!.split(',');
// The bench's two projects: the busiest (P1) and about the average of 20 (P6).
const PROJECTS: Array<[string, number]> = [
  ['mixxcgojbhvdmfbwybqx', 1],
  ['fdwtflzzapajahtckzbl', 6],
];

type Library = Awaited<ReturnType<typeof import('../src/index')['createEndpoints']>>;

/** A checkout's library (its own src/, loaded beside the other's), caching off, as the bench opens it. */
async function open(checkout: string, threads: string): Promise<Library> {
  const { createEndpoints } = (await import(join(resolve(checkout), 'src', 'index.ts'))) as typeof import('../src/index');
  return createEndpoints({ sources, now: () => REFERENCE, cache: false, duckdb: { threads: Number(threads) } });
}

const load = () =>
  loadavg()
    .map((n) => n.toFixed(1))
    .join(' ');
const text = (v: unknown) => JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? String(x) : x));
const builds = { before: await open(args.before, args['threads-before'] ?? args.threads!), after: await open(args.after!, args.threads!) };
console.log(`data ${dir}; ${args.runs} calls x ${args.rounds} rounds per build and case, interleaved; load ${load()}`);
console.log('| case | before: p50 / CPU ms | after: p50 / CPU ms | after / before (CPU) |');
console.log('|---|---:|---:|---:|');
try {
  for (const [project, rank] of PROJECTS) {
    for (const c of benchCases(project, rank).filter((k) => filters.some((f) => k.name.includes(f)))) {
      const call = (ep: Library) => ep.query(c.endpoint as never, c.params);
      const answers = [text((await call(builds.before)).result), text((await call(builds.after)).result)];
      if (answers[0] !== answers[1]) throw new Error(`${c.name}: the two builds answer differently`);
      const wall = { before: [] as number[], after: [] as number[] };
      const cpu = { before: [] as number[], after: [] as number[] };
      for (let r = 0; r < Number(args.rounds); r++) {
        for (const name of r % 2 ? (['after', 'before'] as const) : (['before', 'after'] as const)) {
          for (let i = 0; i < Number(args.runs); i++) {
            const started = process.hrtime.bigint();
            const used = process.cpuUsage();
            await call(builds[name]);
            const spent = process.cpuUsage(used);
            wall[name].push(Number(process.hrtime.bigint() - started) / 1e6);
            cpu[name].push((spent.user + spent.system) / 1000);
          }
        }
      }
      const p50 = (s: number[]) => round(percentile(s, 0.5), 2);
      console.log(`| ${c.name} | ${p50(wall.before)} / ${p50(cpu.before)} | ${p50(wall.after)} / ${p50(cpu.after)} | ${round(p50(cpu.after) / p50(cpu.before), 2)} |`);
    }
  }
} finally {
  await builds.before.close();
  await builds.after.close();
}
console.log(`load at the end ${load()}`);
