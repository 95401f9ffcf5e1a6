/**
 * Two checkouts' libraries in one process over the same compacted data: the seed's cases that
 * match a filter (default: hourly usage and the older pages of logs.all), each library's calls
 * interleaved (the order alternating round by round), answers compared before and after the
 * timed calls. Prints the median wall and process CPU time per call; CPU, which waits for no
 * other process, is the steadier measure on a shared machine (docs/performance.md, "The seed's
 * older pages and hourly usage").
 *
 *   npx tsx bench/builds-side-by-side.ts --before /path/to/other/checkout [--after .] [--data .bench-data/default]
 *                                        [--filter hourly,end=] [--runs 10] [--rounds 6] [--threads 2] [--threads-before 2]
 *
 * `--before . --threads-before 1` compares DuckDB's threads instead: the same build with one and two.
 * `--other-quantiles` lets the builds' p95/p99 differ (a change of quantile summaries, each inside
 * the rank bound, which the bench checks against chdb); every other column must still be the same.
 * `--chdb` times chdb (its tables in `<data>/peers/chdb`, as the bench loads them) in the same
 * rounds, CPU per call too, and prints chdb's CPU over the after build's (below 1: we spend more).
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { benchCases } from './cases';
import { parquetEndpointsOptions, parquetSources, type Dataset } from './dataset';
import { libraryAt, type Library } from './checkout-library';
import { openChdb } from './peers/chdb';
import type { Peer } from './peers/peer';
import { percentile, rotatingRounds, round, sameAnswers, loadAverage } from './stats';
import { peakRssMb } from './serve-process';

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
    chdb: { type: 'boolean', default: false },
    'other-quantiles': { type: 'boolean', default: false },
  },
});
if (!args.before) throw new Error('--before <checkout> is required');
const dir = resolve(args.data!);
const sources = parquetSources(dir);
const filters = args.filter!.split(',');
// The bench's two projects: the busiest (P1) and about the average of 20 (P6).
const PROJECTS: Array<[string, number]> = [
  ['mixxcgojbhvdmfbwybqx', 1],
  ['fdwtflzzapajahtckzbl', 6],
];

/** A checkout's library (its own src/, loaded beside the other's), caching off, as the bench opens it. */
async function open(checkout: string, threads: string): Promise<Library> {
  const { createEndpoints } = await libraryAt(checkout);
  return createEndpoints(parquetEndpointsOptions(dir, { duckdb: { threads: Number(threads) } }));
}

const text = (v: unknown) => JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? String(x) : x));
const builds = { before: await open(args.before, args['threads-before'] ?? args.threads!), after: await open(args.after!, args.threads!) };
// chdb over the bench's own tables of the same events (loaded by `npm run bench` with --peers chdb).
const dataset: Dataset = { scale: 'default', projects: [], ndjson: sources, parquet: sources, dir };
const chdb: Peer | null = args.chdb ? await openChdb(dataset, (line) => console.log(line)) : null;
const names = chdb ? (['before', 'after', 'chdb'] as const) : (['before', 'after'] as const);
console.log(`data ${dir}; ${args.runs} calls x ${args.rounds} rounds per build and case, interleaved; load ${loadAverage()}`);
console.log(`| case | before: p50 / CPU ms | after: p50 / CPU ms | after / before (CPU) |${chdb ? ' chdb: p50 / CPU ms | chdb / after (CPU) |' : ''}`);
console.log(`|---|---:|---:|---:|${chdb ? '---:|---:|' : ''}`);
try {
  for (const [project, rank] of PROJECTS) {
    for (const c of benchCases(project, rank).filter((k) => filters.some((f) => k.name.includes(f)))) {
      const call = (ep: Library) => ep.query(c.endpoint as never, c.params);
      const answers = async () => [text((await call(builds.before)).result), text((await call(builds.after)).result)];
      // With --other-quantiles, answers whose p95 / p99 alone differ count as the same.
      const rest = (answer: string) => text(JSON.parse(answer)).replace(/"p9[59]_execution_time":[^,}]*/g, '');
      const same = (a: string, b: string) => a === b || (args['other-quantiles'] === true && rest(a) === rest(b));
      const [before, after] = await sameAnswers(c.name, 'before timing', answers, same);
      if (before !== after) console.log(`${c.name}: p95/p99 differ, every other column the same`);
      // chdb's answer is compared by the bench (its quantiles are inside the rank bound, not equal); here it is only timed.
      if (chdb) await chdb.run(c);
      const times = await rotatingRounds(names, Number(args.rounds), Number(args.runs), (name) => (name === 'chdb' ? chdb!.run(c) : call(builds[name])));
      const wall = { before: times.before.wall, after: times.after.wall, chdb: (times as Partial<typeof times>).chdb?.wall ?? [] };
      const cpu = { before: times.before.cpu, after: times.after.cpu, chdb: (times as Partial<typeof times>).chdb?.cpu ?? [] };
      await sameAnswers(c.name, 'after timing', answers, same);
      const p50 = (s: number[]) => round(percentile(s, 0.5), 2);
      const peer = chdb ? ` ${p50(wall.chdb)} / ${p50(cpu.chdb)} | ${round(p50(cpu.chdb) / p50(cpu.after), 2)} |` : '';
      console.log(`| ${c.name} | ${p50(wall.before)} / ${p50(cpu.before)} | ${p50(wall.after)} / ${p50(cpu.after)} | ${round(p50(cpu.after) / p50(cpu.before), 2)} |${peer}`);
    }
  }
} finally {
  await builds.before.close();
  await builds.after.close();
  await chdb?.close();
}
console.log(`load at the end ${loadAverage()}; peak RSS (VmHWM) of the bench process, both builds and chdb in it: ${peakRssMb(process.pid)} MiB`);
