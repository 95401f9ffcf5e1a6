/**
 * Supabase Studio's queries on a self-hosted week (docs/performance.md, "Supabase Studio's
 * queries"): each kind of request Studio's Logs pages send to `logs.all` (a list, the "new logs"
 * count, a chart, a single log, Logs Explorer templates), timed warm on managed storage with the
 * Supabase preset while a writer ingests batches of 100, side by side with
 * - Logflare on Postgres: the same events in Logflare's layout, running what Logflare's translator
 *   makes of the same SQL (bench/studio-logflare.ts);
 * - chdb: the same question written for ClickHouse by hand (bench/studio-chdb.ts), the nested
 *   fields the Supabase descriptors declare typed read from MATERIALIZED columns (bench/studio-chdb-fields.ts),
 *   timed idle in the same rounds as ours opened again with no writer (the order alternating);
 * answers compared before anything is timed. Target: ours ≤ 50 ms p50, ≥ 10x Postgres. Ours is
 * also timed stage by stage (bench/studio-stages.ts) and beside a copy of the week without typed
 * columns (bench/studio-layouts.ts), both idle, before the writer starts.
 *
 *   npm run bench                                   (a section of the full run; --skip-studio, --skip-layouts)
 *   npx tsx bench/studio.ts [--scale default|small|tiny] [--runs 20] [--pg-runs 5] [--json out.json]
 *                           [--skip-postgres] [--skip-chdb] [--skip-layouts]
 */
import { writeFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { answerDifference } from './studio-compare';
import { peakRssMb } from './serve-process';
import { studioCasesOf, type StudioCase } from './studio-cases';
import { openStudioChdb } from './studio-chdb';
import { chdbColumnsOf } from './studio-chdb-fields';
import { missingChdb } from './peers/install-chdb';
import { prepareStudioData, STUDIO_SCALES, type StudioScale } from './studio-data';
import { openLogflarePostgres } from './studio-logflare';
import { missingPostgres } from './postgres';
import { openOurs } from './studio-ours';
import { loadAverages, round, summarize, timeMs, type Timing } from './stats';
import { installStageMeter, medianStages, STAGES, type Stages } from './studio-stages';
import { layoutsMarkdown, measureLayouts, type LayoutsResult } from './studio-layouts';

export interface StudioCaseResult {
  kind: string;
  ours: Timing;
  postgres: Timing | null;
  chdb: Timing | null;
  /** Ours idle, timed in the same rounds as chdb (the order alternating), null without chdb. */
  ours_idle: Timing | null;
  rows: number;
  /** What differs from ours, per peer (null: the same answer). */
  postgres_difference: string | null;
  chdb_difference: string | null;
  /** Ours stage by stage, idle (studio-stages.ts): the first call of the text, and the median of the calls after it. */
  stages: { first: Stages; warm: Stages };
}

export interface StudioResult {
  scale: StudioScale;
  events: number;
  machine: string;
  load_average: { start: number[]; end: number[] };
  /** Events the writer got acknowledged while ours was timed. */
  ingested_while_querying: number;
  /** Peak RSS of the bench process while ours was timed (ours runs in it; the peers had not started). */
  ours_peak_rss_mb: number;
  cases: StudioCaseResult[];
  /** EXPLAIN ANALYZE of the slowest Postgres case, for where its time goes. */
  postgres_plan: string | null;
  /** Why the Logflare-on-Postgres peer did not run (null: it ran). */
  postgres_left_out: string | null;
  /** Why the chdb peer did not run (--skip-chdb, its install failed; null: it ran). */
  chdb_left_out: string | null;
  /** The same requests on the JSON-only layout beside ours, idle (studio-layouts.ts); null when left out. */
  layouts: LayoutsResult | null;
}

export interface StudioOptions {
  scale: StudioScale;
  runs: number;
  pgRuns: number;
  /** Why the Logflare-on-Postgres peer is left out (--skip-postgres, no Postgres installed), or null to run it. */
  postgresLeftOut: string | null;
  chdb: boolean;
  /** Time the requests on both Parquet layouts too (studio-layouts.ts), idle, before the writer starts. */
  layouts: boolean;
}

async function warmTimes(runs: number, work: () => Promise<unknown>): Promise<Timing> {
  await work();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) samples.push(await timeMs(work));
  return summarize(samples);
}

export async function measureStudio(options: StudioOptions, log: (line: string) => void): Promise<StudioResult> {
  const start = loadAverages();
  const data = await prepareStudioData(options.scale, log);
  const cases = studioCasesOf(data);
  const results = new Map<StudioCase, StudioCaseResult>();

  const ours = await openOurs(data, log);
  const answers = new Map<StudioCase, Array<Record<string, unknown>>>();
  let ingested = 0;
  let peakRss = 0;
  let layouts: LayoutsResult | null = null;
  try {
    // Stage by stage, idle, before the timings (the meter is uninstalled before they start).
    const stages = new Map<StudioCase, StudioCaseResult['stages']>();
    const meter = installStageMeter();
    try {
      for (const c of cases) {
        const first = await meter.measure(async () => answers.set(c, await ours.answer(c.request)));
        const warm: Stages[] = [];
        for (let i = 0; i < options.runs; i++) warm.push(await meter.measure(() => ours.answer(c.request)));
        stages.set(c, { first, warm: medianStages(warm) });
        log(`studio: ${c.kind}: ours idle by stage, first call ${JSON.stringify(first)}, then ${JSON.stringify(stages.get(c)!.warm)}`);
      }
    } finally {
      meter.uninstall();
    }
    if (options.layouts) layouts = await measureLayouts(data, cases, ours, options.runs, log);
    const writer = ours.startWriter();
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 100);
    try {
      for (const c of cases) {
        const timing = await warmTimes(options.runs, () => ours.answer(c.request));
        results.set(c, {
          kind: c.kind,
          ours: timing,
          postgres: null,
          chdb: null,
          ours_idle: null,
          rows: answers.get(c)!.length,
          postgres_difference: null,
          chdb_difference: null,
          stages: stages.get(c)!,
        });
        log(`studio: ${c.kind}: ours ${timing.p50_ms} ms p50 while ingesting (${answers.get(c)!.length} rows)`);
      }
    } finally {
      clearInterval(sampler);
      ingested = await writer.stop();
    }
  } finally {
    await ours.close();
  }

  let postgresPlan: string | null = null;
  if (options.postgresLeftOut === null) {
    const pg = await openLogflarePostgres(data, log);
    try {
      for (const c of cases) {
        const r = results.get(c)!;
        const run = () => pg.run(c.postgres.sql, c.postgres.params);
        r.postgres_difference = answerDifference(c, answers.get(c)!, await run());
        r.postgres = await warmTimes(options.pgRuns, run);
        log(`studio: ${c.kind}: Logflare on Postgres ${r.postgres.p50_ms} ms p50${r.postgres_difference ? `; answer differs: ${r.postgres_difference}` : ''}`);
      }
      const slowest = cases.reduce((a, b) => (results.get(b)!.postgres!.p50_ms > results.get(a)!.postgres!.p50_ms ? b : a));
      postgresPlan = `${slowest.kind}:\n${await pg.explain(slowest.postgres.sql, slowest.postgres.params)}`;
    } finally {
      await pg.close();
    }
  }
  // Without chdb (no registry to install it from) the run goes on without it, said in one line.
  const chdbLeftOut = options.chdb ? await missingChdb(log) : '--skip-chdb';
  if (chdbLeftOut && options.chdb) log(`studio: chdb left out: ${chdbLeftOut}`);
  if (chdbLeftOut === null) {
    const chdb = await openStudioChdb(data, log);
    // Ours again, idle (no writer), beside chdb: the two timed in the same rounds, so the ratio is
    // not of two moments of the machine (ours above was timed while ingesting, before chdb loaded).
    const idle = await openOurs(data, log);
    try {
      // The columns an expert gives the fields the cases read (once per loaded week, kept).
      for (const c of chdbColumnsOf(cases.map((k) => k.clickhouse))) await chdb.materialize(c.table, c.column, c.type, c.expression);
      for (const c of cases) {
        const r = results.get(c)!;
        const run = () => chdb.run(c.clickhouse.sql, c.clickhouse.params);
        const oursRun = () => idle.answer(c.request);
        r.chdb_difference = answerDifference(c, answers.get(c)!, await run());
        // Ours opened again answers as it did before (the writer's events are outside every range),
        // by the peers' rule (rows tied at a list's last timestamp may be cut anywhere).
        const again = answerDifference(c, answers.get(c)!, await oursRun());
        if (again) throw new Error(`studio: ${c.kind}: ours opened again answers differently: ${again}`);
        const sides = { chdb: [] as number[], ours: [] as number[] };
        for (let i = 0; i < options.runs; i++) {
          // The order alternates round by round.
          const order = i % 2 === 0 ? (['ours', 'chdb'] as const) : (['chdb', 'ours'] as const);
          for (const side of order) sides[side].push(await timeMs(side === 'chdb' ? run : oursRun));
        }
        r.chdb = summarize(sides.chdb);
        r.ours_idle = summarize(sides.ours);
        log(`studio: ${c.kind}: chdb ${r.chdb.p50_ms} ms p50, ours idle ${r.ours_idle.p50_ms} in the same rounds${r.chdb_difference ? `; answer differs: ${r.chdb_difference}` : ''}`);
      }
      // The process's peak so far, with ours and chdb's week both held: beside the same-rounds figures.
      log(`studio: peak RSS (VmHWM) of the process with ours idle and chdb open: ${peakRssMb(process.pid)} MiB`);
    } finally {
      chdb.close();
      await idle.close();
    }
  }
  return {
    scale: options.scale,
    events: STUDIO_SCALES[options.scale],
    machine: `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
    load_average: { start, end: loadAverages() },
    ingested_while_querying: ingested,
    ours_peak_rss_mb: Math.round(peakRss / 2 ** 20),
    cases: [...results.values()],
    postgres_plan: postgresPlan,
    postgres_left_out: options.postgresLeftOut,
    chdb_left_out: chdbLeftOut,
    layouts,
  };
}

export function studioMarkdown(r: StudioResult): string[] {
  const ratio = (t: Timing | null, ours: Timing) => (t ? `${round(t.p50_ms / ours.p50_ms, 1)}` : '');
  const same = (d: string | null, t: Timing | null) => (t === null ? '' : d === null ? 'same' : `differs: ${d}`);
  return [
    `Supabase Studio's queries, scale \`${r.scale}\`: a self-hosted week of ${r.events.toLocaleString('en')} events over the nine feeds; ${r.machine}; load average ${r.load_average.start.join(' ')} at the start, ${r.load_average.end.join(' ')} at the end. Ours: managed storage with the Supabase preset, warm, while a writer ingested ${r.ingested_while_querying.toLocaleString('en')} events in batches of 100; peak RSS of the process ${r.ours_peak_rss_mb} MB. Target: ours ≤ 50 ms p50 and Postgres / ours ≥ 10.${r.postgres_left_out ? ` Logflare on Postgres left out: ${r.postgres_left_out}.` : ''}${r.chdb_left_out ? ` chdb left out: ${r.chdb_left_out}.` : ''}`,
    '',
    '| request kind | rows | ours p50 ms (p95), ingesting | Logflare on Postgres p50 ms | Postgres / ours | ours idle p50 ms (p95) | chdb p50 ms (p95), same rounds | chdb / ours idle | answers (Postgres; chdb) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---|',
    ...r.cases.map(
      (c) =>
        `| ${c.kind} | ${c.rows} | ${c.ours.p50_ms} (${c.ours.p95_ms}) | ${c.postgres?.p50_ms ?? ''} | ${ratio(c.postgres, c.ours)} | ${c.ours_idle ? `${c.ours_idle.p50_ms} (${c.ours_idle.p95_ms})` : ''} | ${c.chdb ? `${c.chdb.p50_ms} (${c.chdb.p95_ms})` : ''} | ${c.ours_idle && c.chdb ? round(c.chdb.p50_ms / c.ours_idle.p50_ms, 2) : ''} | ${same(c.postgres_difference, c.postgres)}; ${same(c.chdb_difference, c.chdb)} |`,
    ),
    '',
    "Ours by stage, idle (before the writer starts; ms): the first call of each text, then the median of the calls after it (each stage's median on its own, so they need not add up to the total's). Translate: Studio's BigQuery SQL parsed, translated and printed for DuckDB (the first translation of the process loads the parser); check: the sandbox's rules on the parse trees; parse: DuckDB's parse of the translated text the rules read (the three once per text); prepare: the DuckDB statement (once per text and connection); snapshot: the sources' files listed and checked, made ready for DuckDB; bind: the request's values bound; run: DuckDB running it and reading its result; shape: from that result to the answer in Logflare's wire format; other: the parameters, the memo of checked texts, the query gate and connection, the statement's text (bench/studio-stages.ts).",
    '',
    `| request kind | call | total | ${STAGES.join(' | ')} |`,
    `|---|---|---:|${STAGES.map(() => '---:').join('|')}|`,
    ...r.cases.flatMap((c) => {
      const cells = (s: Stages) => [s.total_ms, ...STAGES.map((stage) => s[`${stage}_ms`])].join(' | ');
      return [`| ${c.kind} | first | ${cells(c.stages.first)} |`, `| ${c.kind} | then | ${cells(c.stages.warm)} |`];
    }),
    ...(r.layouts ? ['', ...layoutsMarkdown(r.layouts)] : []),
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const { values } = parseArgs({
    options: {
      scale: { type: 'string', default: 'default' },
      runs: { type: 'string', default: '20' },
      'pg-runs': { type: 'string', default: '5' },
      'skip-postgres': { type: 'boolean', default: false },
      'skip-chdb': { type: 'boolean', default: false },
      'skip-layouts': { type: 'boolean', default: false },
      json: { type: 'string' },
    },
  });
  const scale = values.scale as StudioScale;
  if (!(scale in STUDIO_SCALES)) throw new Error(`--scale must be one of ${Object.keys(STUDIO_SCALES).join(', ')}`);
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const noPostgres = values['skip-postgres'] ? '--skip-postgres' : missingPostgres();
  if (noPostgres) log(`studio: Logflare on Postgres left out: ${noPostgres}`);
  const result = await measureStudio(
    {
      scale,
      runs: Math.max(1, Number(values.runs)),
      pgRuns: Math.max(1, Number(values['pg-runs'])),
      postgresLeftOut: noPostgres,
      chdb: !values['skip-chdb'],
      layouts: !values['skip-layouts'],
    },
    log,
  );
  if (values.json) await writeFile(values.json, JSON.stringify(result, null, 2));
  process.stdout.write(`${studioMarkdown(result).join('\n')}\n\n${result.postgres_plan ? `Postgres, EXPLAIN ANALYZE of the slowest case, ${result.postgres_plan}\n` : ''}`);
}
