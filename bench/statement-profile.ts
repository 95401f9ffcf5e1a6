/**
 * Where a seed case's time goes inside DuckDB: the library's own statements (caught by wrapping the
 * DuckDB client's prepare, bind and run), each run again with DuckDB's detailed profiling on, its
 * planner (binding), optimizers (the join-order pass apart) and operator CPU per statement,
 * medians over the runs, beside the call's wall time (docs/performance.md, "The seed's older
 * pages and hourly usage").
 *
 *   npx tsx bench/statement-profile.ts [--filter hourly,end=] [--runs 9] [--data .bench-data/default]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createEndpoints } from '../src/index';
import { benchCases } from './cases';
import { REFERENCE } from './dataset';
import { percentile, round } from './stats';
import { caught, profiled, type CaughtStatement } from './caught-statements';

const { values: args } = parseArgs({
  options: { filter: { type: 'string', default: 'hourly,end=' }, runs: { type: 'string', default: '9' }, data: { type: 'string', default: '.bench-data/default' } },
});
const dir = resolve(args.data!);
const out = mkdtempSync(join(tmpdir(), 'statement-profile-'));

/** One statement run again with detailed profiling: DuckDB's own phase timings, in ms. */
async function phasesOf(r: CaughtStatement, file: string): Promise<Record<string, number>> {
  const p = await profiled(r, file);
  return { latency: p.latency! * 1000, planner: p.planner! * 1000, optimizers: p.all_optimizers! * 1000, join_order: (p.optimizer_join_order ?? 0) * 1000, operators: p.cpu_time! * 1000 };
}

const ep = await createEndpoints({
  sources: { edgeLogs: join(dir, 'parquet', 'edge'), functionEdgeLogs: join(dir, 'parquet', 'functions') },
  now: () => REFERENCE,
  cache: false,
  duckdb: { threads: 2 },
});
const load = () =>
  loadavg()
    .map((n) => n.toFixed(1))
    .join(' ');
console.log(`data ${dir}; ${args.runs} calls per case; load ${load()}`);
console.log('| case | call p50 ms | statement | latency | planner | optimizers (join order) | operators CPU |');
console.log('|---|---:|---|---:|---:|---:|---:|');
try {
  for (const [project, rank] of [
    ['mixxcgojbhvdmfbwybqx', 1],
    ['fdwtflzzapajahtckzbl', 6],
  ] as const) {
    for (const c of benchCases(project, rank).filter((k) => args.filter!.split(',').some((f) => k.name.includes(f)))) {
      await ep.query(c.endpoint as never, c.params);
      const calls: number[] = [];
      const phases: Array<Record<string, number[]>> = [];
      for (let i = 0; i < Number(args.runs); i++) {
        const started = process.hrtime.bigint();
        const statements = await caught(() => ep.query(c.endpoint as never, c.params));
        calls.push(Number(process.hrtime.bigint() - started) / 1e6);
        for (const [k, r] of statements.entries()) {
          const p = await phasesOf(r, join(out, 'profile.json'));
          phases[k] ??= {};
          for (const [name, ms] of Object.entries(p)) (phases[k]![name] ??= []).push(ms);
        }
      }
      const p50 = (s: number[] | undefined) => round(percentile(s ?? [], 0.5), 2);
      for (const [k, p] of phases.entries()) {
        console.log(
          `| ${k === 0 ? c.name : ''} | ${k === 0 ? p50(calls) : ''} | ${k + 1} | ${p50(p.latency)} | ${p50(p.planner)} | ${p50(p.optimizers)} (${p50(p.join_order)}) | ${p50(p.operators)} |`,
        );
      }
    }
  }
} finally {
  await ep.close();
  rmSync(out, { recursive: true, force: true });
}
console.log(`load at the end ${load()}`);
