/**
 * A Studio chart's statement counted in one step or two (src/bigquery/counts-per-value.ts), bare:
 * DuckDB (2 threads) runs each text over a table of the gateway's typed columns holding the
 * chart's window at the Studio bench's default rate (23,802 events an hour, its statuses weighted
 * as the Kong feed's), the texts interleaved run by run, each planned on every run as the
 * library's statements are (they have parameters). Reported per chart: the median CPU of the
 * process per run, the rows and the first step's groups (docs/performance.md, round thirteen,
 * "One step for a chart by minute").
 *
 *   npx tsx bench/chart-steps.ts [--before <another tree's src/>] [--runs 200]
 *
 * `--before`: that tree's translator prints the "before" text (main's, where a chart by minute
 * was counted in two steps); without it, "before" is the chart counted in the other form than
 * this tree's (a HAVING every bucket passes keeps a query in one step).
 */
import { DuckDBInstance } from '@duckdb/node-api';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { bigQuerySchemaOf } from '../src/bigquery/schema-of-sources';
import { translateBigQuery } from '../src/bigquery/translate-bigquery';
import { SUPABASE_SOURCES } from '../src/index';
import { chartQuery } from '../test/support/supabase/studio-sql';
import { percentile, round, loadAverages } from './stats';
import { peakRssMb } from './serve-process';

const { values: args } = parseArgs({ options: { before: { type: 'string' }, runs: { type: 'string', default: '200' } } });
const runs = Math.max(1, Number(args.runs));
const HOUR = 3_600_000_000;
const PER_HOUR = 23_802;
// The Kong feed's statuses, roughly as weighted over its routes (test/support/supabase/vector-kong.ts).
const STATUSES: Array<[string, number]> = [
  ['200', 80],
  ['201', 6],
  ['204', 3],
  ['304', 2],
  ['400', 1],
  ['401', 3],
  ['404', 2],
  ['409', 1],
  ['500', 1],
  ['503', 1],
];

type Translate = typeof translateBigQuery;
const before: Translate = args.before
  ? ((await import(pathToFileURL(join(resolve(args.before), 'bigquery', 'translate-bigquery.ts')).href)) as { translateBigQuery: Translate }).translateBigQuery
  : translateBigQuery;
const schema = bigQuerySchemaOf(SUPABASE_SOURCES);
const NOW = Date.parse('2026-11-21T12:00:00Z') * 1000;

const charts = [
  { name: 'chart by minute, last hour', hours: 1, start: NOW - HOUR },
  { name: 'chart by minute, last 3 hours', hours: 3, start: NOW - 3 * HOUR },
  { name: 'chart by minute, last 6 hours', hours: 6, start: NOW - 6 * HOUR },
  { name: 'chart by minute, last 12 hours', hours: 12, start: NOW - 12 * HOUR },
  { name: 'chart by hour, last 24 hours', hours: 24, start: NOW - 24 * HOUR },
  { name: 'chart by hour, last 7 days', hours: 168, start: NOW - 168 * HOUR },
];

const db = await DuckDBInstance.create(':memory:', { threads: '2' });
const c = await db.connect();
const total = STATUSES.reduce((n, [, w]) => n + w, 0);
const cases = STATUSES.map(([s, w], i) => [STATUSES.slice(0, i).reduce((n, [, x]) => n + x, 0), w, s] as const)
  .map(([from, w, s]) => `WHEN h < ${from + w} THEN '${s}'`)
  .join(' ');
const rows: string[] = [];
console.log(`| chart | rows | first step's groups | before: steps, CPU ms | after: steps, CPU ms | before / after | load |`);
console.log('|---|---:|---:|---|---|---:|---|');
for (const chart of charts) {
  const n = chart.hours * PER_HOUR;
  // The window's rows alone: the library's template keeps the window (iso_timestamp_start) itself.
  await c.run(`CREATE OR REPLACE TABLE edge_logs AS SELECT make_timestamp(${NOW - chart.hours * HOUR} + (i * ${chart.hours * HOUR}) // ${n}) AS "timestamp", false AS "arrays:metadata",
    CASE ${cases} END AS "text:metadata.response.status_code", CAST(NULL AS JSON) AS "json:metadata.response.status_code"
    FROM (SELECT i, hash(i) % ${total} AS h FROM range(${n}) AS r(i))`);
  const sql = chartQuery('edge_logs', { start: new Date(chart.start / 1000).toISOString(), end: '' }, {}, NOW);
  const text = async (t: Translate, q: string) => {
    const r = await t(q, schema, 'duckdb');
    return (r.arraysFree ?? r.sql).replaceAll('$now', `make_timestamp(${NOW})`);
  };
  const after = await text(translateBigQuery, sql);
  // Without another tree: the other form of this tree's text.
  const other = args.before
    ? await text(before, sql)
    : after.includes('"__bq_n"')
      ? await text(translateBigQuery, sql.replace('GROUP BY\ntimestamp', 'GROUP BY\ntimestamp\nHAVING count(*) > 0'))
      : null;
  if (other === null) throw new Error(`${chart.name}: no two-step text to compare with`);
  const steps = (t: string) => (t.includes('"__bq_n"') ? 'two' : 'one');
  // The first step: from the outer SELECT's FROM to its GROUP BY of the bucket.
  const two = steps(after) === 'two' ? after : other;
  const open = two.indexOf('FROM (SELECT CASE WHEN epoch_us');
  const close = two.lastIndexOf(') AS "t" GROUP BY "t"."__bq_k1"');
  const groups = open >= 0 && close > open ? Number((await c.runAndReadAll(`SELECT count(*) FROM (${two.slice(open + 6, close)})`)).getRows()[0]![0]) : null;
  const texts = [other, after];
  const answers = await Promise.all(texts.map(async (t) => JSON.stringify((await c.runAndReadAll(t)).getRowsJson())));
  if (answers[0] !== answers[1]) throw new Error(`${chart.name}: the two texts' answers differ`);
  const cpu: number[][] = [[], []];
  const load = loadAverages()[0]!;
  const warm = Math.max(5, Math.round(runs / 10));
  const each = chart.hours > 24 ? Math.max(5, Math.round(runs / 10)) : runs;
  for (let i = 0; i < warm + each; i++) {
    for (const k of i % 2 ? [1, 0] : [0, 1]) {
      const t0 = process.cpuUsage();
      await c.runAndReadAll(texts[k]!);
      const d = process.cpuUsage(t0);
      if (i >= warm) cpu[k]!.push((d.user + d.system) / 1000);
    }
  }
  const [b, a] = cpu.map((s) => round(percentile(s, 0.5), 2));
  rows.push(chart.name);
  console.log(
    `| ${chart.name} | ${n.toLocaleString('en')} | ${groups?.toLocaleString('en') ?? '-'} | ${steps(other)}, ${b} | ${steps(after)}, ${a} | ${round(b! / a!, 2)} | ${load} - ${loadAverages()[0]!} |`,
  );
}
console.log(
  `\n${new Date().toISOString()}, ${runs} runs a text after ${Math.max(5, Math.round(runs / 10))} (the 7-day chart: a tenth), interleaved; peak RSS (VmHWM) of the bench process: ${peakRssMb(process.pid)} MiB`,
);
