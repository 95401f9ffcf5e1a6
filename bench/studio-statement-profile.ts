/**
 * Where a Studio request's DuckDB time goes (docs/performance.md, round thirteen): the library's
 * statements of each short kind caught (prepare, bind and run wrapped), each run again with
 * DuckDB's detailed profiling, its planner, optimizers and operator tree (CPU and rows per
 * operator) printed beside the statement's text, over a copy of the Studio bench's managed week.
 *
 *   npx tsx bench/studio-statement-profile.ts --data <copy of .bench-data/studio-default/managed> [--kinds list,count] [--runs 9] [--sql]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createEndpoints, supabasePreset } from '../src/index';
import { memoryBudget } from '../src/duckdb/memory-budget';
import { REFERENCE } from './dataset';
import { studioCases } from './studio-cases';
import { weekId } from './studio-data';
import { percentile, round, loadAverage } from './stats';
import { caught, profiled, type CaughtStatement, type ProfileNode } from './caught-statements';

const { values: args } = parseArgs({
  options: { data: { type: 'string' }, kinds: { type: 'string', default: '' }, runs: { type: 'string', default: '9' }, sql: { type: 'boolean', default: false } },
});
if (!args.data) throw new Error('--data <managed data dir (a copy)> is required');
const out = mkdtempSync(join(tmpdir(), 'studio-profile-'));

function tree(n: ProfileNode, depth: number, lines: string[]): void {
  if (n.operator_name)
    lines.push(`${'  '.repeat(depth)}${n.operator_name} ${round((n.operator_timing ?? 0) * 1000, 3)} ms, ${n.operator_cardinality} rows ${JSON.stringify(n.extra_info ?? {}).slice(0, 160)}`);
  for (const c of n.children ?? []) tree(c, depth + 1, lines);
}

/** One statement run again with detailed profiling: DuckDB's phase timings in ms, and its operator tree. */
async function phasesOf(r: CaughtStatement, file: string): Promise<{ phases: Record<string, number>; lines: string[] }> {
  const p = await profiled(r, file);
  const lines: string[] = [];
  tree(p, 0, lines);
  return { phases: { latency: p.latency! * 1000, planner: p.planner! * 1000, optimizers: p.all_optimizers! * 1000, operators: p.cpu_time! * 1000 }, lines };
}

const ep = await createEndpoints({
  ...supabasePreset,
  storage: { dataDir: resolve(args.data) },
  now: () => REFERENCE,
  cache: false,
  duckdb: { threads: 2, memoryLimit: memoryBudget().queries.memoryLimit },
});
console.log(`data ${args.data}; ${args.runs} calls per kind; load ${loadAverage()}`);
const wanted = args.kinds!.split(',').filter(Boolean);
try {
  for (const c of studioCases(weekId('edge_logs', Math.floor(4_000_000 * (1 - 0.5 / 7))))) {
    if (/7 days/.test(c.kind) || (wanted.length && !wanted.some((w) => c.kind.includes(w)))) continue;
    const params = { project: 'default', iso_timestamp_start: c.request.iso_timestamp_start, iso_timestamp_end: c.request.iso_timestamp_end };
    const call = () => ep.query('logs.all', params, { sql: c.request.sql });
    await call();
    const walls: number[] = [];
    const cpus: number[] = [];
    let last: CaughtStatement[] = [];
    for (let i = 0; i < Number(args.runs); i++) {
      const cpu = process.cpuUsage();
      const started = process.hrtime.bigint();
      last = await caught(call);
      walls.push(Number(process.hrtime.bigint() - started) / 1e6);
      const used = process.cpuUsage(cpu);
      cpus.push((used.user + used.system) / 1000);
    }
    const phases: Record<string, number[]> = {};
    let lines: string[] = [];
    for (let i = 0; i < Number(args.runs); i++) {
      for (const r of last) {
        const p = await phasesOf(r, join(out, 'profile.json'));
        for (const [name, ms] of Object.entries(p.phases)) (phases[name] ??= []).push(ms);
        lines = p.lines;
      }
    }
    const p50 = (s: number[] | undefined) => round(percentile(s ?? [], 0.5), 2);
    console.log(
      `\n=== ${c.kind}: call p50 ${p50(walls)} ms wall, ${p50(cpus)} ms CPU; ${last.length} statement(s); latency ${p50(phases.latency)} planner ${p50(phases.planner)} optimizers ${p50(phases.optimizers)} operators ${p50(phases.operators)}`,
    );
    if (args.sql)
      for (const r of last)
        console.log(
          r.sql,
          '\n-- values',
          JSON.stringify(r.values, (_k, v) => (typeof v === 'bigint' ? String(v) : v)),
        );
    console.log(lines.join('\n'));
  }
} finally {
  await ep.close();
  rmSync(out, { recursive: true, force: true });
}
console.log(`load at the end ${loadAverage()}`);
