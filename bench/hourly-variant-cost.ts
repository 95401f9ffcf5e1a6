/**
 * What `HOURLY_PAYS` is fitted on: every bench project's day (functions.invocation-stats, interval
 * 1day, hour buckets) by the raw statement and by the `hourly` variant, each forced, CPU per call
 * interleaved, beside the project's invocations and hours' summary rows of the window, and the
 * statement the built-in chooses (docs/performance.md, "The busiest project's day from the hours'
 * summaries").
 *
 *   npx tsx bench/hourly-variant-cost.ts [--data .bench-data/default] [--runs 10] [--rounds 4]
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { createEndpoints } from '../src/index';
import { functionsInvocationStats, HOURLY_PAYS } from '../src/definitions/functions-invocation-stats';
import { parquetSources, REFERENCE } from './dataset';
import { percentile, round, loadAverage } from './stats';

const { values: args } = parseArgs({ options: { data: { type: 'string', default: '.bench-data/default' }, runs: { type: 'string', default: '10' }, rounds: { type: 'string', default: '4' } } });
const dir = resolve(args.data!);
const functions = parquetSources(dir).functionEdgeLogs;
const { projects } = JSON.parse(readFileSync(join(dir, 'ready.json'), 'utf8')) as { projects: string[] };
// The built-in's statements, one forced each way (a definition of its own name).
const forced = (name: string, id: string, variant: string | null) => ({ ...functionsInvocationStats, name, id, variantOf: () => variant, variantCosts: undefined });
const raw = forced('cost.raw', '6a1f0c7e-2b4d-4e8f-9a3c-5d7e9f1b3c01', null);
const hourly = forced('cost.hourly', '6a1f0c7e-2b4d-4e8f-9a3c-5d7e9f1b3c02', 'hourly');
const ep = await createEndpoints({ sources: { functionEdgeLogs: functions }, now: () => REFERENCE, cache: false, duckdb: { threads: 2 }, endpoints: [raw, hourly] as never });
const text = (v: unknown) => JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? String(x) : x));

// The window's invocations and summary rows per project, from the stored rollups.
const first = new Date(Math.floor(REFERENCE.getTime() / 3_600_000) * 3_600_000 - 86_400_000).toISOString();
const db = await DuckDBInstance.create(':memory:');
const counts = new Map<string, { n: number; s: number }>();
const connection = await db.connect();
const rollup = (name: string) => `read_parquet('${join(functions, '_rollups', name, '*', '*.parquet')}')`;
for (const row of (
  await connection.runAndReadAll(
    `SELECT h.project_ref, h.n, s.s FROM (SELECT project_ref, sum(count) AS n FROM ${rollup('function_edge_logs_hourly')} WHERE hour >= '${first}'::TIMESTAMP GROUP BY 1) h
     JOIN (SELECT project_ref, count(*) AS s FROM ${rollup('function_edge_logs_summary')} WHERE hour >= '${first}'::TIMESTAMP GROUP BY 1) s USING (project_ref)`,
  )
).getRows())
  counts.set(String(row[0]), { n: Number(row[1]), s: Number(row[2]) });

console.log(`data ${dir}; ${args.runs} calls x ${args.rounds} rounds per statement and project, interleaved; load ${loadAverage()}`);
console.log('| project | invocations | summary rows | raw CPU ms | hourly CPU ms | hourly / raw | built-in runs |');
console.log('|---|---:|---:|---:|---:|---:|---|');
try {
  for (const project of projects) {
    const params = { project, interval: '1day' } as never;
    const cpu = { raw: [] as number[], hourly: [] as number[] };
    const answers = { raw: '', hourly: '', builtIn: text((await ep.query('functions.invocation-stats', params)).result) };
    for (const name of ['raw', 'hourly'] as const) answers[name] = text((await ep.query(`cost.${name}` as never, params)).result);
    for (let r = 0; r < Number(args.rounds); r++)
      for (const name of r % 2 ? (['hourly', 'raw'] as const) : (['raw', 'hourly'] as const))
        for (let i = 0; i < Number(args.runs); i++) {
          const used = process.cpuUsage();
          await ep.query(`cost.${name}` as never, params);
          const spent = process.cpuUsage(used);
          cpu[name].push((spent.user + spent.system) / 1000);
        }
    // Which the built-in ran, told by its answer (the two differ where the summaries keep fewer values).
    const ran = answers.raw === answers.hourly ? 'either (same answer)' : answers.builtIn === answers.hourly ? 'hourly' : answers.builtIn === answers.raw ? 'raw' : 'neither?';
    const { n, s } = counts.get(project) ?? { n: 0, s: 0 };
    const [a, b] = [round(percentile(cpu.raw, 0.5), 2), round(percentile(cpu.hourly, 0.5), 2)];
    console.log(
      `| ${project} | ${n.toLocaleString('en')} | ${s.toLocaleString('en')} | ${a} | ${b} | ${round(b / a, 2)} | ${ran} (pays: ${HOURLY_PAYS.events + HOURLY_PAYS.rollupRows.function_edge_logs_summary.weight * s < n}) |`,
    );
  }
} finally {
  await ep.close();
  connection.closeSync();
}
console.log(`load at the end ${loadAverage()}`);
