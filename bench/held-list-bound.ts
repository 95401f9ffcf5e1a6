/**
 * What a memory table's held-segment filter costs per call written as constants (the text names
 * the segments: `le_seq IN (37, 38, 39)`, a new text when a segment opens or goes) against the
 * same list bound as a parameter (one text for every list: `list_contains($le_held, le_seq)`, or
 * `le_seq IN (SELECT unnest($le_held))`), each prepared once and run alternated round by round, and
 * what preparing the constants text again costs. A table of 40 segments of 3,000 rows, 3 held.
 * docs/performance.md, "The memory segments' list bound instead of named".
 *
 *   npx tsx bench/held-list-bound.ts [--rounds 10] [--calls 200]
 */
import { parseArgs } from 'node:util';
import { BIGINT, DuckDBInstance, LIST, listValue, VARCHAR, type DuckDBType, type DuckDBValue } from '@duckdb/node-api';
import { percentile, round, loadAverage } from './stats';
import { peakRssMb } from './serve-process';

const { values: args } = parseArgs({ options: { rounds: { type: 'string', default: '10' }, calls: { type: 'string', default: '200' } } });
const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
const connection = await instance.connect();
await connection.run(`CREATE TABLE t AS SELECT i AS id, (i // 3000)::BIGINT AS le_seq, 'p' || (i % 50) AS project, md5(i::VARCHAR) AS msg FROM range(120000) r(i)`);
const held = [37n, 38n, 39n];
const text = (where: string) => `SELECT project, count(*) AS n, max(msg) AS m FROM t WHERE ${where} AND project = $project GROUP BY ALL`;
const filters: Record<string, string> = {
  constants: `le_seq IN (${held.join(', ')})`,
  list_contains: 'list_contains($le_held, le_seq)',
  in_unnest: 'le_seq IN (SELECT unnest($le_held))',
};
const prepared = new Map(await Promise.all(Object.entries(filters).map(async ([name, where]) => [name, await connection.prepare(text(where))] as const)));
// The answers first: every form reads the same rows.
const answers = new Set<string>();
const bind = (name: string) => {
  const values: Record<string, DuckDBValue> = { project: 'p3' };
  const types: Record<string, DuckDBType> = { project: VARCHAR };
  if (name !== 'constants') {
    values.le_held = listValue(held);
    types.le_held = LIST(BIGINT);
  }
  prepared.get(name)!.bind(values, types);
};
for (const name of prepared.keys()) {
  bind(name);
  answers.add(JSON.stringify((await prepared.get(name)!.runAndReadAll()).getRows(), (_, x) => (typeof x === 'bigint' ? String(x) : x)));
}
if (answers.size !== 1) throw new Error('the forms answer differently');
console.log(`${args.calls} calls x ${args.rounds} rounds per form, rotated; load ${loadAverage()}`);
const cpu: Record<string, number[]> = {};
const names = [...prepared.keys()];
for (let r = 0; r < Number(args.rounds); r++) {
  for (let k = 0; k < names.length; k++) {
    const name = names[(r + k) % names.length]!;
    const u = process.cpuUsage();
    for (let i = 0; i < Number(args.calls); i++) {
      bind(name);
      await prepared.get(name)!.runAndReadAll();
    }
    const d = process.cpuUsage(u);
    (cpu[name] ??= []).push((d.user + d.system) / 1000 / Number(args.calls));
  }
  // The constants text prepared again, as a new segment list makes it.
  const u = process.cpuUsage();
  for (let i = 0; i < Number(args.calls); i++) (await connection.prepare(text(`le_seq IN (${held.join(', ')}, ${40 + i})`))).destroySync();
  const d = process.cpuUsage(u);
  (cpu['prepare of the constants text'] ??= []).push((d.user + d.system) / 1000 / Number(args.calls));
}
for (const [name, values] of Object.entries(cpu)) console.log(`| ${name} | ${round(percentile(values, 0.5), 3)} | ${round(Math.min(...values), 3)} - ${round(Math.max(...values), 3)} |`);
console.log(`load at the end ${loadAverage()}; peak RSS (VmHWM) of the bench process: ${peakRssMb(process.pid)} MiB`);
connection.closeSync();
instance.closeSync();
