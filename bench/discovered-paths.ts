/**
 * One Explorer question on a field no source declares (docs/performance.md, "Discovered fields"):
 * the gateway's top client addresses over the last 7 days (`request.headers.cf_connecting_ip`), on managed
 * storage with typed columns (compaction discovered the path; the instance reads it as a column
 * from its next open on) and with `metadata` alone (`storage.typedColumns: false`, what every
 * undeclared path cost before). The same week and data directories as bench/studio-layouts.ts;
 * answers compared, then the two layouts' runs interleaved, idle. Its peer: chdb on the Studio
 * section's tables (bench/studio-chdb.ts), reading the field from `metadata` with `JSONExtract`
 * and from a MATERIALIZED column of its own (what a ClickHouse user adds for a field asked often),
 * answers compared with ours, its two forms' runs interleaved after ours closed.
 *
 *   npm run bench                                   (a phase of the full run; --skip-discovered)
 *   npx tsx bench/discovered-paths.ts [--scale small|tiny|default] [--runs 20] [--skip-chdb]   (this table alone)
 */
import { cpus, totalmem } from 'node:os';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { prepareStudioData, STUDIO_SCALES, type StudioScale } from './studio-data';
import { openOurs } from './studio-ours';
import { openStudioChdb } from './studio-chdb';
import { answerDifference } from './studio-compare';
import { ch, RANGE, type StudioCase } from './studio-cases';
import { missingChdb } from './peers/install-chdb';
import { peakRssMb, resetPeakRss } from './serve-process';
import { REFERENCE } from './dataset';
import { loadAverages, round, summarize, timeMs, type Timing } from './stats';
import type { StudioRequest } from '../test/support/supabase/studio-requests';

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
/** How the answers are compared: a top list (ties at the last count may be cut anywhere). */
const SHAPE: Pick<StudioCase, 'shape' | 'groupBy' | 'countColumn'> = { shape: 'top', groupBy: ['client'], countColumn: 'c' };
/** The field as ClickHouse reads it from the JSON text, and the column chdb is given for it. */
const FROM_JSON = "JSONExtract(metadata, 'request', 'headers', 'cf_connecting_ip', 'Nullable(String)')";
const COLUMN = 'cf_connecting_ip';
const chdbQuery = (client: string) => ch(request, `SELECT ${client} AS client, count() AS c FROM edge_logs WHERE ${RANGE} GROUP BY client ORDER BY c DESC LIMIT 100`);

export interface DiscoveredResult {
  scale: StudioScale;
  events: number;
  runs: number;
  load_average: { start: number[]; end: number[] };
  request: string;
  rows: number;
  ours: {
    json_only: Timing;
    typed: Timing;
    /** What the JSON-only layout answered otherwise (null: the same answer). */
    difference: string | null;
    /** VmHWM of the process from opening both layouts (a copy made, when not reused) to the last timing. */
    vmhwm_mib: number;
  };
  chdb: {
    json: Timing;
    column: Timing;
    /** What each form answered otherwise than ours (null: the same answer). */
    json_difference: string | null;
    column_difference: string | null;
    /** Seconds the column took to materialize in this run (null: an earlier run's was reused). */
    materialize_s: number | null;
    /** VmHWM of the process from opening chdb (ours closed; what it did not give back included) to its last timing. */
    vmhwm_mib: number;
  } | null;
  /** Why chdb did not run (--skip-chdb, its install failed; null: it ran). */
  chdb_left_out: string | null;
}

/** Times the question on ours's two layouts, then on chdb's two forms (unless `chdb` is false). */
export async function measureDiscovered(scale: StudioScale, runs: number, chdb: boolean, log: (line: string) => void): Promise<DiscoveredResult> {
  const start = loadAverages();
  const data = await prepareStudioData(scale, log);
  resetPeakRss(process.pid);
  const typed = await openOurs(data, log, { typedColumns: true });
  let ours: DiscoveredResult['ours'];
  let answer: Array<Record<string, unknown>>;
  try {
    const json = await openOurs(data, log, { typedColumns: false });
    try {
      answer = await typed.answer(request);
      const difference = answerDifference(SHAPE, answer, await json.answer(request));
      const samples = { typed: [] as number[], json: [] as number[] };
      for (let i = 0; i < runs; i++) {
        samples.typed.push(await timeMs(() => typed.answer(request)));
        samples.json.push(await timeMs(() => json.answer(request)));
      }
      ours = { json_only: summarize(samples.json), typed: summarize(samples.typed), difference, vmhwm_mib: peakRssMb(process.pid) };
      log(`discovered: ours JSON only ${ours.json_only.p50_ms} ms p50, discovered column ${ours.typed.p50_ms} ms p50${difference ? `; answer differs: ${difference}` : ''}`);
    } finally {
      await json.close();
    }
  } finally {
    await typed.close();
  }

  let peer: DiscoveredResult['chdb'] = null;
  const chdbLeftOut = chdb ? await missingChdb(log) : '--skip-chdb';
  if (chdbLeftOut && chdb) log(`discovered: chdb left out: ${chdbLeftOut}`);
  if (chdbLeftOut === null) {
    resetPeakRss(process.pid);
    const session = await openStudioChdb(data, log);
    try {
      const materialize_s = await session.materialize('edge_logs', COLUMN, 'Nullable(String)', FROM_JSON);
      const [fromJson, fromColumn] = [chdbQuery(FROM_JSON), chdbQuery(COLUMN)];
      const run = (q: ReturnType<typeof chdbQuery>) => session.run(q.sql, q.params);
      const json_difference = answerDifference(SHAPE, answer, await run(fromJson));
      const column_difference = answerDifference(SHAPE, answer, await run(fromColumn));
      const samples = { json: [] as number[], column: [] as number[] };
      for (let i = 0; i < runs; i++) {
        samples.column.push(await timeMs(() => run(fromColumn)));
        samples.json.push(await timeMs(() => run(fromJson)));
      }
      peer = { json: summarize(samples.json), column: summarize(samples.column), json_difference, column_difference, materialize_s, vmhwm_mib: peakRssMb(process.pid) };
      log(`discovered: chdb JSONExtract ${peer.json.p50_ms} ms p50, materialized column ${peer.column.p50_ms} ms p50`);
    } finally {
      session.close();
    }
  }
  return {
    scale,
    events: STUDIO_SCALES[scale],
    runs,
    load_average: { start, end: loadAverages() },
    request: NAME,
    rows: answer.length,
    ours,
    chdb: peer,
    chdb_left_out: chdbLeftOut,
  };
}

export function discoveredMarkdown(r: DiscoveredResult): string[] {
  const same = (d: string | null) => (d === null ? 'same' : `differs: ${d}`);
  const t = (x: Timing | undefined) => (x ? `${x.p50_ms} (${x.p95_ms})` : '');
  const ratio = (a: Timing | undefined, b: Timing) => (a ? String(round(a.p50_ms / b.p50_ms, 1)) : '');
  const c = r.chdb;
  return [
    `A field no source declares, scale \`${r.scale}\` (${r.events.toLocaleString('en')} events), idle, ${r.runs} runs each: ours on both layouts interleaved, then chdb's two forms interleaved; load average ${r.load_average.start.join(' ')} at the start, ${r.load_average.end.join(' ')} at the end; VmHWM of the process ${r.ours.vmhwm_mib} MiB with ours's two instances open${c ? `, ${c.vmhwm_mib} MiB while chdb ran (ours closed)${c.materialize_s === null ? '' : `; the column materialized in ${c.materialize_s} s`}` : ''}.${r.chdb_left_out ? ` chdb left out: ${r.chdb_left_out}.` : ''}`,
    '',
    '| request | rows | ours, JSON only p50 ms (p95) | ours, discovered column p50 ms (p95) | chdb, JSONExtract p50 ms (p95) | chdb, materialized column p50 ms (p95) | ours: JSON only / column | chdb / ours, JSON | chdb / ours, column | answers (ours JSON only; chdb JSON; chdb column) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    `| ${r.request} | ${r.rows} | ${t(r.ours.json_only)} | ${t(r.ours.typed)} | ${t(c?.json)} | ${t(c?.column)} | ${ratio(r.ours.json_only, r.ours.typed)} | ${ratio(c?.json, r.ours.json_only)} | ${ratio(c?.column, r.ours.typed)} | ${same(r.ours.difference)}; ${c ? same(c.json_difference) : ''}; ${c ? same(c.column_difference) : ''} |`,
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const { values } = parseArgs({ options: { scale: { type: 'string', default: 'small' }, runs: { type: 'string', default: '20' }, 'skip-chdb': { type: 'boolean', default: false } } });
  const scale = values.scale as StudioScale;
  if (!(scale in STUDIO_SCALES)) throw new Error(`--scale must be one of ${Object.keys(STUDIO_SCALES).join(', ')}`);
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const result = await measureDiscovered(scale, Math.max(1, Number(values.runs)), !values['skip-chdb'], log);
  process.stdout.write(`${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}\n\n${discoveredMarkdown(result).join('\n')}\n`);
}
