/**
 * Studio's chart by minute (the gateway's last hour) through two builds' `ep.query`, alternated
 * call by call in one process (docs/performance.md, "The chart by minute without its constant
 * unnest aliases"): each build over its own copy of the Studio bench's managed week (made fresh
 * from it here, then compacted by the build's open), the answers compared first, then the median
 * CPU of the process per call. It names the caller's text each build prepared (with or without the
 * arrays half, its first step grouped by the unnest aliases or by the fields' columns alone): the
 * memory tables' rows, NDJSON or a file with a `[` make the engine run the full text.
 *
 *   npx tsup && (cd <main's tree> && npx tsup)
 *   npx tsx bench/chart-calls.ts --before <main's tree>/dist [--after dist] [--rounds 300] [--kind "chart by minute"]
 *
 * `--before dist --after dist`: the same build on both sides, to tell the copies' and the order's noise.
 */
import { DuckDBConnection } from '@duckdb/node-api';
import { cp, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { memoryBudget } from '../src/duckdb/memory-budget';
import { REFERENCE } from './dataset';
import type { Library } from './checkout-library';
import { waitCompacted } from './managed';
import { studioCasesOf } from './studio-cases';
import { prepareStudioData } from './studio-data';
import { percentile, round, loadAverages } from './stats';
import { peakRssMb } from './serve-process';

const { values: args } = parseArgs({
  options: { before: { type: 'string' }, after: { type: 'string', default: 'dist' }, rounds: { type: 'string', default: '300' }, kind: { type: 'string', default: 'chart by minute' } },
});
if (!args.before) throw new Error('--before <dist of the build to compare with> is required');
const rounds = Number(args.rounds);
const data = await prepareStudioData('default', (line) => console.error(line));
const studio = studioCasesOf(data).find((c) => c.kind.includes(args.kind!));
if (!studio) throw new Error(`no Studio case named ${args.kind}`);

// The caller's texts the builds prepare (both load the same @duckdb/node-api).
const texts: string[] = [];
const prepare = DuckDBConnection.prototype.prepare;
DuckDBConnection.prototype.prepare = function (this: DuckDBConnection, sql: string) {
  if (sql.includes('AS sandboxed LIMIT')) texts.push(sql);
  return prepare.call(this, sql);
};
const describe = (sql: string) =>
  `${sql.includes('unnest(') ? 'the full text' : 'the text without the arrays half'}${sql.includes('"__bq_n"') ? (/"__bq_a\d"\) AS "t" GROUP BY "t"\."__bq_k1"/.test(sql) ? ', first step by the unnest aliases too' : ', first step by the columns alone') : ''}`;

const builds: Array<{ label: string; ep: Library; dir: string }> = [];
for (const [label, dist] of [
  ['before', args.before],
  ['after', args.after!],
] as const) {
  const lib = (await import(pathToFileURL(join(resolve(dist), 'index.js')).href)) as typeof import('../src/index');
  const dir = join(data.dir, `calls-${label}`);
  await rm(dir, { recursive: true, force: true });
  await cp(join(data.dir, 'managed'), dir, { recursive: true });
  const ep = await lib.createEndpoints({
    ...lib.supabasePreset,
    storage: { dataDir: dir },
    now: () => REFERENCE,
    cache: false,
    memoryLimit: `${Math.ceil((process.memoryUsage().rss + 8 * 2 ** 30) / 1e6)}MB`,
    duckdb: { threads: 2, memoryLimit: memoryBudget().queries.memoryLimit },
  });
  builds.push({ label, ep, dir });
}
try {
  await Promise.all(builds.map((b) => waitCompacted(b.ep, 3600, b.dir)));
  const params = { project: 'default', iso_timestamp_start: studio.request.iso_timestamp_start, iso_timestamp_end: studio.request.iso_timestamp_end };
  const call = (b: (typeof builds)[number]) => b.ep.query('logs.all', params, { sql: studio.request.sql });
  const answers: string[] = [];
  for (const b of builds) {
    const from = texts.length;
    answers.push(JSON.stringify((await call(b)).result));
    console.log(`${b.label}: ${texts.slice(from).map(describe).join('; ') || 'no caller text prepared'}`);
  }
  if (answers[0] !== answers[1]) throw new Error('the two builds answer differently');
  const cpu = new Map(builds.map((b) => [b.label, [] as number[]]));
  const load = loadAverages()[0]!;
  const started = new Date().toISOString();
  for (let r = 0; r < 20 + rounds; r++) {
    for (const b of r % 2 ? [...builds].reverse() : builds) {
      const t0 = process.cpuUsage();
      await call(b);
      const d = process.cpuUsage(t0);
      if (r >= 20) cpu.get(b.label)!.push((d.user + d.system) / 1000);
    }
  }
  const [x, y] = builds.map((b) => percentile(cpu.get(b.label)!, 0.5));
  console.log(
    `${started}: ${studio.kind}, ${rounds} calls each after 20, alternated: CPU per call before ${round(x!, 2)} ms, after ${round(y!, 2)} ms, before / after ${round(x! / y!, 2)}; load average ${load} - ${loadAverages()[0]!}; answers the same; peak RSS (VmHWM) of the bench process, both builds in it: ${peakRssMb(process.pid)} MiB`,
  );
} finally {
  for (const b of builds) await b.ep.close();
}
