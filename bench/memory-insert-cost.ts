/**
 * The memory tables' insert of a group, two checkouts side by side in one process (each its own
 * DuckDB, as the engine attaches them): groups of `--group` gateway events from an NDJSON file
 * (e.g. `tail -n` of the bench's data), blocks of 20 groups alternating between the builds,
 * a new segment every 100 groups. Prints the median wall and process CPU time per group. Each group
goes with its events' span (oldest and newest timestamp, read before the timing as ingest's parse
reads it: `eventTimestampMicros`); a build whose `insert` takes no span reads it from the rows.
 *
 *   npx tsx bench/memory-insert-cost.ts --before /path/to/other/checkout [--after .] --edge events.ndjson [--groups 1000] [--group 100]
 */
import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { percentile, round, loadAverage } from './stats';
import { sourceAt } from './checkout-library';
import { peakRssMb } from './serve-process';

const { values: args } = parseArgs({
  options: { before: { type: 'string' }, after: { type: 'string', default: '.' }, edge: { type: 'string' }, groups: { type: 'string', default: '1000' }, group: { type: 'string', default: '100' } },
});
if (!args.before || !args.edge) throw new Error('--before and --edge are required');
const size = Number(args.group);
const groups = Number(args.groups);
const lines: string[] = [];
for await (const line of createInterface({ input: createReadStream(resolve(args.edge)), crlfDelay: Infinity })) {
  if (line.trim() !== '') lines.push(line);
  if (lines.length >= size * groups) break;
}
const { eventTimestampMicros } = await import('../src/time/event-timestamp');
/** Each group's span, as ingest's `serializeBatch` gives it with the group's lines. */
const spans = Array.from({ length: groups }, (_, g) => {
  let oldest: bigint | null = null;
  let newest: bigint | null = null;
  for (const line of lines.slice(g * size, (g + 1) * size)) {
    const micros = eventTimestampMicros((JSON.parse(line) as { timestamp?: unknown }).timestamp);
    if (micros === null) return undefined;
    if (oldest === null || micros < oldest) oldest = micros;
    if (newest === null || micros > newest) newest = micros;
  }
  return oldest === null || newest === null ? undefined : { oldest, newest };
});
const dir = await mkdtemp(join(tmpdir(), 'le-bench-memory-insert-'));
const { DuckDBInstance } = await import('@duckdb/node-api');
const open = async (checkout: string, name: string) => {
  const { MemoryTables } = await sourceAt<typeof import('../src/managed/memory-tables')>(checkout, 'managed/memory-tables.ts');
  const { TIMESTAMP_MACROS } = await sourceAt<typeof import('../src/duckdb/source-relations')>(checkout, 'duckdb/source-relations.ts');
  const { BUILT_IN_SOURCE_SET } = await sourceAt<typeof import('../src/sources/built-ins')>(checkout, 'sources/built-ins.ts');
  const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
  const setup = await instance.connect();
  for (const macro of TIMESTAMP_MACROS) await setup.run(macro);
  const memory = new MemoryTables(BUILT_IN_SOURCE_SET, { folder: join(dir, name) });
  memory.attach(instance);
  return { memory, close: async () => (await memory.close(), setup.closeSync(), instance.closeSync()) };
};
const builds = { before: await open(args.before, 'before'), after: await open(args.after!, 'after') };
const wall = { before: [] as number[], after: [] as number[] };
const cpu = { before: [] as number[], after: [] as number[] };
console.log(`${groups} groups of ${size} per build, blocks of 20 alternating; load ${loadAverage()}`);
try {
  for (let block = 0; block < groups / 20; block++) {
    for (const name of block % 2 ? (['after', 'before'] as const) : (['before', 'after'] as const)) {
      for (let g = block * 20; g < (block + 1) * 20; g++) {
        const group = Buffer.from(`${lines.slice(g * size, (g + 1) * size).join('\n')}\n`);
        const started = process.hrtime.bigint();
        const used = process.cpuUsage();
        // With the span as ingest gives it (builds from round seventeen on take it as `{ span }`).
        await builds[name].memory.insert('edgeLogs', 1 + Math.floor(g / 100), group, { span: spans[g] });
        const spent = process.cpuUsage(used);
        wall[name].push(Number(process.hrtime.bigint() - started) / 1e6);
        cpu[name].push((spent.user + spent.system) / 1000);
      }
    }
  }
  const p50 = (s: number[]) => round(percentile(s, 0.5), 3);
  console.log('| build | wall ms per group | CPU ms per group |');
  console.log('|---|---:|---:|');
  for (const name of ['before', 'after'] as const) console.log(`| ${name} | ${p50(wall[name])} | ${p50(cpu[name])} |`);
  // One process holds both builds: its peak (VmHWM) is both's, beside their CPU.
  console.log(`load at the end ${loadAverage()}; peak RSS (VmHWM) of the bench process, both builds in it: ${peakRssMb(process.pid)} MiB`);
} finally {
  await builds.before.close();
  await builds.after.close();
  await rm(dir, { recursive: true, force: true });
}
