/**
 * Studio's requests on the two Parquet layouts of managed storage (docs/performance.md, "Typed
 * columns"): the week ingested and compacted with typed columns (the default; the Studio
 * section's own copy) beside a copy compacted with `metadata` alone (`storage.typedColumns:
 * false`; bench/studio-ours.ts says how it is made), both instances open in one process, each
 * request's answers compared, then timed warm and idle, the two layouts' runs interleaved so the
 * machine's load falls on both alike. Memory is the process's VmHWM over this phase alone.
 *
 *   npm run bench                                   (in the Studio section; --skip-layouts)
 *   npx tsx bench/studio.ts --scale small           (the same; --skip-layouts)
 *   npx tsx bench/studio-layouts.ts [--scale small|tiny|default] [--runs 20]    (this table alone)
 */
import { cpus, totalmem } from 'node:os';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { answerDifference } from './studio-compare';
import { studioCasesOf, type StudioCase } from './studio-cases';
import { prepareStudioData, STUDIO_SCALES, type StudioData, type StudioScale } from './studio-data';
import { openOurs, type Ours } from './studio-ours';
import { peakRssMb, resetPeakRss } from './serve-process';
import { loadAverages, round, summarize, timeMs, type Timing } from './stats';

export interface LayoutCaseResult {
  kind: string;
  rows: number;
  json_only: Timing;
  typed: Timing;
  /** What the JSON-only copy answered otherwise (null: the same answer). */
  difference: string | null;
}

export interface LayoutsResult {
  scale: StudioScale;
  events: number;
  runs: number;
  load_average: { start: number[]; end: number[] };
  /** Seconds this phase added to the run: the JSON-only copy opened (made, when not reused), the answers compared, both layouts timed. */
  seconds: number;
  /** Seconds spent making the JSON-only copy in this run (null: an earlier run's was reused). */
  json_only_build_s: number | null;
  /** VmHWM of the process from opening the JSON-only copy (its compaction, when made) to the last timing, both instances open. */
  vmhwm_mib: number;
  cases: LayoutCaseResult[];
}

/**
 * Times `cases` on `typed` (an open instance of the week with typed columns) and on the JSON-only
 * copy, opened here and closed before returning.
 */
export async function measureLayouts(data: StudioData, cases: readonly StudioCase[], typed: Ours, runs: number, log: (line: string) => void): Promise<LayoutsResult> {
  const start = loadAverages();
  const started = Date.now();
  resetPeakRss(process.pid);
  const json = await openOurs(data, log, { typedColumns: false });
  const results: LayoutCaseResult[] = [];
  try {
    for (const c of cases) {
      const [a, b] = [await typed.answer(c.request), await json.answer(c.request)];
      const samples = { typed: [] as number[], json: [] as number[] };
      for (let i = 0; i < runs; i++) {
        samples.typed.push(await timeMs(() => typed.answer(c.request)));
        samples.json.push(await timeMs(() => json.answer(c.request)));
      }
      const r = { kind: c.kind, rows: a.length, json_only: summarize(samples.json), typed: summarize(samples.typed), difference: answerDifference(c, a, b) };
      results.push(r);
      log(`layouts: ${c.kind}: JSON only ${r.json_only.p50_ms} ms p50, typed columns ${r.typed.p50_ms} ms p50${r.difference ? `; answer differs: ${r.difference}` : ''}`);
    }
  } finally {
    await json.close();
  }
  return {
    scale: data.scale,
    events: STUDIO_SCALES[data.scale],
    runs,
    load_average: { start, end: loadAverages() },
    seconds: round((Date.now() - started) / 1000, 1),
    json_only_build_s: json.madeInSeconds,
    vmhwm_mib: peakRssMb(process.pid),
    cases: results,
  };
}

export function layoutsMarkdown(r: LayoutsResult): string[] {
  const built = r.json_only_build_s === null ? 'the JSON-only copy reused from an earlier run' : `the JSON-only copy compacted from the week's NDJSON in ${r.json_only_build_s} s`;
  return [
    `Studio's requests on both layouts, scale \`${r.scale}\` (${r.events.toLocaleString('en')} events), idle, ${r.runs} runs of each interleaved, ${r.seconds} s in all; load average ${r.load_average.start.join(' ')} at the start, ${r.load_average.end.join(' ')} at the end; ${built}; VmHWM of the process over this phase (both instances open) ${r.vmhwm_mib} MiB.`,
    '',
    '| request kind | rows | JSON only p50 ms (p95) | typed columns p50 ms (p95) | JSON only / typed | answers |',
    '|---|---:|---:|---:|---:|---|',
    ...r.cases.map(
      (c) =>
        `| ${c.kind} | ${c.rows} | ${c.json_only.p50_ms} (${c.json_only.p95_ms}) | ${c.typed.p50_ms} (${c.typed.p95_ms}) | ${round(c.json_only.p50_ms / c.typed.p50_ms, 1)} | ${c.difference === null ? 'same' : `differs: ${c.difference}`} |`,
    ),
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const { values } = parseArgs({ options: { scale: { type: 'string', default: 'small' }, runs: { type: 'string', default: '20' } } });
  const scale = values.scale as StudioScale;
  if (!(scale in STUDIO_SCALES)) throw new Error(`--scale must be one of ${Object.keys(STUDIO_SCALES).join(', ')}`);
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const data = await prepareStudioData(scale, log);
  const cases = studioCasesOf(data);
  const typed = await openOurs(data, log);
  try {
    const result = await measureLayouts(data, cases, typed, Math.max(1, Number(values.runs)), log);
    process.stdout.write(`${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}\n\n${layoutsMarkdown(result).join('\n')}\n`);
  } finally {
    await typed.close();
  }
}
