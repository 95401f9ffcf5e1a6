/**
 * One Explorer question on a field no source declares (docs/performance.md, "Discovered fields"):
 * the gateway's top client addresses over the last 7 days (`request.headers.cf_connecting_ip`), on managed
 * storage with typed columns (compaction discovered the path; the instance reads it as a column
 * from its next open on) and with `metadata` alone (`storage.typedColumns: false`, what every
 * undeclared path cost before). The same week and data directories as bench/studio-layouts.ts;
 * answers compared, then the two layouts' runs interleaved, idle.
 *
 *   npx tsx bench/discovered-paths.ts [--scale small|tiny|default] [--runs 20]
 */
import { cpus, loadavg, totalmem } from 'node:os';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { prepareStudioData, STUDIO_SCALES, type StudioScale } from './studio-data';
import { openOurs } from './studio-ours';
import { answerDifference } from './studio-compare';
import { REFERENCE } from './dataset';
import { round, summarize, timeMs } from './stats';
import type { StudioRequest } from '../test/support/supabase/studio-requests';

const { values } = parseArgs({ options: { scale: { type: 'string', default: 'small' }, runs: { type: 'string', default: '20' } } });
const scale = values.scale as StudioScale;
if (!(scale in STUDIO_SCALES)) throw new Error(`--scale must be one of ${Object.keys(STUDIO_SCALES).join(', ')}`);
const runs = Math.max(1, Number(values.runs));
const log = (line: string) => process.stderr.write(`${line}\n`);

const SQL = `select
  h.cf_connecting_ip as client,
  count(timestamp) as c
from edge_logs
  cross join unnest(metadata) as m
  cross join unnest(m.request) as r
  cross join unnest(r.headers) as h
group by
  client
order by
  c desc
limit 100
`;
const NAME = 'Explorer: top client addresses (last 7 days)';
const request: Pick<StudioRequest, 'sql' | 'iso_timestamp_start' | 'iso_timestamp_end'> = {
  sql: SQL,
  iso_timestamp_start: new Date(REFERENCE.getTime() - 7 * 86_400_000).toISOString(),
  iso_timestamp_end: REFERENCE.toISOString(),
};

const data = await prepareStudioData(scale, log);
const typed = await openOurs(data, log, { typedColumns: true });
const json = await openOurs(data, log, { typedColumns: false });
const start = loadavg().map((l) => round(l, 1));
let line: string;
try {
  const [a, b] = [await typed.answer(request), await json.answer(request)];
  // Compared as the Studio bench compares a top list (ties at the last count may be cut anywhere).
  const difference = answerDifference({ shape: 'top', groupBy: ['client'], countColumn: 'c' }, a, b);
  const samples = { typed: [] as number[], json: [] as number[] };
  for (let i = 0; i < runs; i++) {
    samples.typed.push(await timeMs(() => typed.answer(request)));
    samples.json.push(await timeMs(() => json.answer(request)));
  }
  const [t, j] = [summarize(samples.typed), summarize(samples.json)];
  line = `| ${NAME} | ${a.length} | ${j.p50_ms} (${j.p95_ms}) | ${t.p50_ms} (${t.p95_ms}) | ${round(j.p50_ms / t.p50_ms, 1)} | ${difference === null ? 'same' : `differs: ${difference}`} |`;
} finally {
  await typed.close();
  await json.close();
}
const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
console.log(
  [
    `An undeclared path, scale \`${scale}\` (${STUDIO_SCALES[scale].toLocaleString('en')} events), idle, ${runs} runs each interleaved; ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}; load average ${start.join(' ')} at the start, ${loadavg()
      .map((l) => round(l, 1))
      .join(' ')} at the end; VmHWM of the process (both instances) ${hwm ? Math.round(Number(hwm) / 1024) : '?'} MiB.`,
    '',
    '| request | rows | JSON only p50 ms (p95) | discovered column p50 ms (p95) | JSON only / discovered | answers |',
    '|---|---:|---:|---:|---:|---|',
    line,
  ].join('\n'),
);
