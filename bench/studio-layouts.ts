/**
 * Studio's requests on the two Parquet layouts of managed storage (docs/performance.md, "Typed
 * columns"): the same week ingested and compacted once with typed columns (the default) and once
 * with `metadata` alone (`storage.typedColumns: false`), both instances open in one process, each
 * request's answers compared, then timed warm and idle, the two layouts' runs interleaved so the
 * machine's load falls on both alike.
 *
 *   npx tsx bench/studio-layouts.ts [--scale small|tiny|default] [--runs 20]
 */
import { cpus, loadavg, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import { answerDifference } from './studio-compare';
import { studioCases } from './studio-cases';
import { prepareStudioData, STUDIO_SCALES, weekId, type StudioScale } from './studio-data';
import { openOurs } from './studio-ours';
import { round, summarize, timeMs } from './stats';

const { values } = parseArgs({ options: { scale: { type: 'string', default: 'small' }, runs: { type: 'string', default: '20' } } });
const scale = values.scale as StudioScale;
if (!(scale in STUDIO_SCALES)) throw new Error(`--scale must be one of ${Object.keys(STUDIO_SCALES).join(', ')}`);
const runs = Math.max(1, Number(values.runs));
const log = (line: string) => process.stderr.write(`${line}\n`);

const data = await prepareStudioData(scale, log);
const cases = studioCases(weekId('edge_logs', Math.floor(data.counts.edge_logs * (1 - 0.5 / 7))));
const typed = await openOurs(data, log, { typedColumns: true });
const json = await openOurs(data, log, { typedColumns: false });
const start = loadavg().map((l) => round(l, 1));
const rows: string[] = [];
try {
  for (const c of cases) {
    const [a, b] = [await typed.answer(c.request), await json.answer(c.request)];
    const difference = answerDifference(c, a, b);
    const samples = { typed: [] as number[], json: [] as number[] };
    for (let i = 0; i < runs; i++) {
      samples.typed.push(await timeMs(() => typed.answer(c.request)));
      samples.json.push(await timeMs(() => json.answer(c.request)));
    }
    const [t, j] = [summarize(samples.typed), summarize(samples.json)];
    rows.push(`| ${c.kind} | ${a.length} | ${j.p50_ms} (${j.p95_ms}) | ${t.p50_ms} (${t.p95_ms}) | ${round(j.p50_ms / t.p50_ms, 1)} | ${difference === null ? 'same' : `differs: ${difference}`} |`);
    log(`studio-layouts: ${c.kind}: JSON only ${j.p50_ms} ms p50, typed columns ${t.p50_ms} ms p50`);
  }
} finally {
  await typed.close();
  await json.close();
}
const status = (await import('node:fs')).readFileSync('/proc/self/status', 'utf8');
const hwm = /VmHWM:\s+(\d+) kB/.exec(status)?.[1];
console.log(
  [
    `Studio's requests on both layouts, scale \`${scale}\` (${STUDIO_SCALES[scale].toLocaleString('en')} events), idle, ${runs} runs each interleaved; ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}; load average ${start.join(' ')} at the start, ${loadavg()
      .map((l) => round(l, 1))
      .join(' ')} at the end; VmHWM of the process (both instances) ${hwm ? Math.round(Number(hwm) / 1024) : '?'} MiB.`,
    '',
    '| request kind | rows | JSON only p50 ms (p95) | typed columns p50 ms (p95) | JSON only / typed | answers |',
    '|---|---:|---:|---:|---:|---|',
    ...rows,
  ].join('\n'),
);
