/**
 * Where a seed case's time goes inside DuckDB: the library's own statements (caught by wrapping the
 * DuckDB client's prepare, bind and run), each run again with DuckDB's detailed profiling on, its
 * planner (binding), optimizers (the join-order pass apart) and operator CPU per statement,
 * medians over the runs, beside the call's wall time (docs/performance.md, "The seed's older
 * pages and hourly usage").
 *
 * With `--operators`, each statement's operator tree of its last profiled run is printed after
 * the table: each operator's time, rows and DuckDB's own details (filters, files).
 *
 *   npx tsx bench/statement-profile.ts [--filter hourly,end=] [--runs 9] [--data .bench-data/default] [--operators]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createEndpoints } from '../src/index';
import { benchCases } from './cases';
import { parquetEndpointsOptions } from './dataset';
import { percentile, round, loadAverage } from './stats';
import { caught, profiled, type CaughtStatement, type Profile, type ProfileNode } from './caught-statements';
import { peakRssMb } from './serve-process';

const { values: args } = parseArgs({
  options: {
    filter: { type: 'string', default: 'hourly,end=' },
    runs: { type: 'string', default: '9' },
    data: { type: 'string', default: '.bench-data/default' },
    operators: { type: 'boolean', default: false },
  },
});
const dir = resolve(args.data!);
const out = mkdtempSync(join(tmpdir(), 'statement-profile-'));

/** One statement run again with detailed profiling: DuckDB's own phase timings, in ms. */
async function phasesOf(r: CaughtStatement, file: string, last: { profile?: Profile }): Promise<Record<string, number>> {
  const p = await profiled(r, file);
  last.profile = p;
  return { latency: p.latency! * 1000, planner: p.planner! * 1000, optimizers: p.all_optimizers! * 1000, join_order: (p.optimizer_join_order ?? 0) * 1000, operators: p.cpu_time! * 1000 };
}

const ep = await createEndpoints(parquetEndpointsOptions(dir, { duckdb: { threads: 2 } }));
console.log(`data ${dir}; ${args.runs} calls per case; load ${loadAverage()}`);
console.log('| case | call p50 ms | statement | latency | planner | optimizers (join order) | operators CPU |');
console.log('|---|---:|---|---:|---:|---:|---:|');
// Each case's statements' last profiles, printed after the table with --operators.
const trees: Array<{ name: string; statement: number; profile: Profile }> = [];
/** An operator tree, one operator a line, indented by depth: time (ms), rows, details. */
function printTree(node: ProfileNode, depth = 0): void {
  if (node.operator_name)
    console.log(`${'  '.repeat(depth)}${node.operator_name} ${round((node.operator_timing ?? 0) * 1000, 2)} ms, ${node.operator_cardinality ?? 0} rows ${JSON.stringify(node.extra_info ?? {})}`);
  for (const child of node.children ?? []) printTree(child, depth + 1);
}
try {
  for (const [project, rank] of [
    ['mixxcgojbhvdmfbwybqx', 1],
    ['fdwtflzzapajahtckzbl', 6],
  ] as const) {
    for (const c of benchCases(project, rank).filter((k) => args.filter!.split(',').some((f) => k.name.includes(f)))) {
      await ep.query(c.endpoint as never, c.params);
      const calls: number[] = [];
      const phases: Array<Record<string, number[]>> = [];
      const last: Array<{ profile?: Profile }> = [];
      for (let i = 0; i < Number(args.runs); i++) {
        const started = process.hrtime.bigint();
        const statements = await caught(() => ep.query(c.endpoint as never, c.params));
        calls.push(Number(process.hrtime.bigint() - started) / 1e6);
        for (const [k, r] of statements.entries()) {
          const p = await phasesOf(r, join(out, 'profile.json'), (last[k] ??= {}));
          phases[k] ??= {};
          for (const [name, ms] of Object.entries(p)) (phases[k]![name] ??= []).push(ms);
        }
      }
      for (const [k, { profile }] of last.entries()) if (profile) trees.push({ name: c.name, statement: k + 1, profile });
      const p50 = (s: number[] | undefined) => round(percentile(s ?? [], 0.5), 2);
      for (const [k, p] of phases.entries()) {
        console.log(
          `| ${k === 0 ? c.name : ''} | ${k === 0 ? p50(calls) : ''} | ${k + 1} | ${p50(p.latency)} | ${p50(p.planner)} | ${p50(p.optimizers)} (${p50(p.join_order)}) | ${p50(p.operators)} |`,
        );
      }
    }
  }
  if (args.operators)
    for (const { name, statement, profile } of trees) {
      console.log(`\n${name}, statement ${statement}: latency ${round(profile.latency! * 1000, 2)} ms, operators' CPU ${round(profile.cpu_time! * 1000, 2)} ms`);
      printTree(profile);
    }
} finally {
  await ep.close();
  rmSync(out, { recursive: true, force: true });
}
console.log(`load at the end ${loadAverage()}; peak RSS (VmHWM) of this process ${peakRssMb(process.pid)} MiB`);
