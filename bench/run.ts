/**
 * npm run bench -- [--scale default|large|small|tiny] [--runs 20] [--json out.json] [--peers chdb,clickhouse,postgres]
 *                  [--postgres <url>] [--project-rank 1,6] [--endpoints <names>] [--variants <names>] [--burst-only]
 *                  [--skip-http] [--http-seconds 10] [--skip-ingest] [--ingest-seconds 10]
 *                  [--skip-footprint] [--footprint-seconds 60] [--footprint-rates 200,1000,5000]
 *                  [--skip-managed] [--managed-events 1000000] [--skip-studio] [--skip-layouts]
 *                  [--skip-parse] [--parse-seconds 2] [--skip-discovered] [--help]
 *
 * Measures, side by side in one run, the library against baselines and other engines (peers) on
 * this machine and prints a markdown table; --json writes the machine-readable result. --help
 * prints every flag with what it does (HELP below).
 */
import { writeFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import { benchCases } from './cases';
import { prepareDataset, SCALES, type Scale } from './dataset';
import { bareDuckDB, measureBareDuckDB, measureLibrary, type Samples } from './library';
import { LibraryProcess } from './library-process';
import { missingPostgres, openPostgres } from './postgres';
import { openChdb } from './peers/chdb';
import { openClickHouse18 } from './peers/clickhouse-18';
import { measureSideBySide } from './peers/side-by-side';
import type { Peer } from './peers/peer';
import { measureHttp, measureServer } from './http';
import { measureBurst, type BurstResult } from './memory';
import { loadAverages, summarize, round, type Timing } from './stats';
import { scannedRows } from './pruning';
import { ingestMarkdown, measureIngest, type IngestCase } from './ingest';
import { footprintMarkdown, GLIBC_DEFAULT_ARENAS, measureFootprint, measureJoinBombs, type BombCase, type FootprintCase } from './footprint';
import { managedMarkdown, measureManagedApart, type ManagedResult } from './managed';
import { measureStudio, studioMarkdown, type StudioResult } from './studio';
import { measureParseApart, parseMarkdown, type ParseResult } from './parse';
import { discoveredMarkdown, measureDiscovered, type DiscoveredResult } from './discovered-paths';
import { peakRssMb } from './serve-process';

const OPTIONS = {
  scale: { type: 'string', default: 'default' },
  runs: { type: 'string', default: '20' },
  json: { type: 'string' },
  peers: { type: 'string', default: '' },
  postgres: { type: 'string' },
  'http-seconds': { type: 'string', default: '10' },
  'skip-http': { type: 'boolean', default: false },
  'ingest-seconds': { type: 'string', default: '10' },
  'skip-ingest': { type: 'boolean', default: false },
  'footprint-seconds': { type: 'string', default: '60' },
  'footprint-rates': { type: 'string', default: '200,1000,5000' },
  'skip-footprint': { type: 'boolean', default: false },
  'managed-events': { type: 'string', default: '1000000' },
  'skip-managed': { type: 'boolean', default: false },
  'skip-studio': { type: 'boolean', default: false },
  'skip-layouts': { type: 'boolean', default: false },
  'skip-studio-postgres': { type: 'boolean', default: false },
  'skip-parse': { type: 'boolean', default: false },
  'parse-seconds': { type: 'string', default: '2' },
  'skip-discovered': { type: 'boolean', default: false },
  'burst-only': { type: 'boolean', default: false },
  'project-rank': { type: 'string', default: '1,6' },
  endpoints: { type: 'string' },
  variants: { type: 'string' },
  help: { type: 'boolean', default: false },
} as const;
/** What each flag does: every flag has its line (a flag without one does not type-check). */
const HELP: Record<keyof typeof OPTIONS, string> = {
  scale: 'the dataset: tiny, small (~1.5 M events), default (5 M invocations + 10 M requests) or large (4x the default; each case also on 1x)',
  runs: 'timed runs of each case and request (medians and p95 of these)',
  json: 'also write the machine-readable result to this file',
  peers: 'other engines over the same events, answers compared, timed in the same rounds as the library: chdb, clickhouse (18.16), postgres',
  postgres: "Postgres's URL for the postgres peer (default: a local server the bench starts)",
  'http-seconds': 'seconds of the HTTP cache-hit benchmark',
  'skip-http': 'leave out the HTTP benchmark and the burst of uncached queries',
  'ingest-seconds': 'seconds of each ingest run (serve --data-dir, batches of 100 and 1,000, and with a drain)',
  'skip-ingest': 'leave out ingest',
  'footprint-seconds': 'seconds of each footprint run (serve --supabase under a Vector-like sender, then idle)',
  'footprint-rates': 'events/s of the footprint runs, comma separated',
  'skip-footprint': 'leave out the footprint runs and the join bombs',
  'managed-events': 'requests ingested into managed storage for its query cases (invocations: half as many)',
  'skip-managed': 'leave out managed storage',
  'skip-studio': "leave out Supabase Studio's requests on a self-hosted week (beside Logflare on Postgres and chdb)",
  'skip-layouts': 'in the Studio section, leave out the same requests on a copy of the week without typed columns',
  'skip-studio-postgres': 'in the Studio section, leave out Logflare on Postgres (loading the week into it takes a while; said in one line)',
  'skip-parse': 'leave out the ingest parse alone (bodyLines) beside the floor of JSON.parse + JSON.stringify',
  'parse-seconds': 'seconds of each side (ours, the floor) per feed and batch size in the parse phase',
  'skip-discovered': 'leave out the Explorer question on a discovered field (JSON only and its column, beside chdb with a materialized column)',
  'burst-only': 'only the memory case: a burst of 200 uncached logs.all queries against the server',
  'project-rank': 'projects by traffic rank, comma separated: 1 = the busiest (28 % of all events), 6 = about the average of 20',
  endpoints: 'only these endpoints, comma separated (supplementary runs)',
  variants: 'only these variants, comma separated (supplementary runs)',
  help: 'print this list and exit',
};
const { values } = parseArgs({ options: OPTIONS });
if (values.help) {
  const flag = (name: keyof typeof OPTIONS) => {
    const o = OPTIONS[name];
    return `--${name}${o.type === 'string' ? ` <${'default' in o && o.default !== '' ? o.default : 'value'}>` : ''}`;
  };
  const names = Object.keys(OPTIONS) as Array<keyof typeof OPTIONS>;
  const width = Math.max(...names.map((n) => flag(n).length));
  process.stdout.write(`npm run bench -- [flags]\n\n${names.map((n) => `  ${flag(n).padEnd(width)}  ${HELP[n]}`).join('\n')}\n`);
  process.exit(0);
}
const scale = values.scale as Scale;
if (!(scale in SCALES)) throw new Error(`--scale must be one of ${Object.keys(SCALES).join(', ')}`);
const runs = Math.max(1, Number(values.runs));
const PEER_VARIANTS: string[] = ['chdb', 'clickhouse-18.16', 'clickhouse-engine-18.16', 'postgres-logflare-layout'];
const log = (line: string) => process.stderr.write(`${line}\n`);

type Variant =
  | 'library-ndjson'
  | 'library-parquet'
  | 'library-parquet-1x'
  | 'bare-duckdb-parquet'
  | 'bare-duckdb-old-sql'
  | 'postgres-logflare-layout'
  | 'chdb'
  | 'chdb-1x'
  | 'clickhouse-18.16'
  | 'clickhouse-engine-18.16';
interface CaseResult extends Timing {
  name: string;
  variant: Variant;
  mode: 'warm' | 'cold';
}

// The machine may be shared: its load when the run started and ended goes with the numbers.
const loadAtStart = loadAverages();
const startedAt = new Date().toISOString();
const dataset = await prepareDataset(scale, log);
const ranks = values['project-rank']!.split(',').map((r) => Math.max(1, Number(r)));
const wanted = (list: string | undefined, item: string) => list === undefined || list.split(',').includes(item);
const burstOnly = values['burst-only'];
const cases = burstOnly ? [] : ranks.flatMap((rank) => benchCases(dataset.projects[rank - 1]!, rank)).filter((c) => wanted(values.endpoints, c.endpoint));
const results: CaseResult[] = [];
const record = (name: string, variant: Variant, samples: Samples) => {
  if (samples.warm.length) results.push({ name, variant, mode: 'warm', ...summarize(samples.warm) });
  if (samples.cold.length) results.push({ name, variant, mode: 'cold', ...summarize(samples.cold) });
};

// Peers open (and load the dataset into their layout, once) before any case runs.
const peerNames = (values.peers ?? '')
  .split(',')
  .map((p) => p.trim())
  .filter(Boolean);
if (values.postgres && !peerNames.includes('postgres')) peerNames.push('postgres');
const peers: Peer[] = [];
for (const name of peerNames) {
  if (name === 'chdb') peers.push(await openChdb(dataset, log));
  else if (name === 'postgres') peers.push(await openPostgres(dataset, values.postgres, log));
  // ClickHouse 18.16: the expert's SQL and the library's ClickHouse engine, on one server.
  else if (name === 'clickhouse') peers.push(...(await openClickHouse18(dataset, log)));
  else throw new Error(`--peers: unknown peer ${name} (chdb, clickhouse, postgres)`);
}
// At the large scale, each case also runs on the default data (1x), for how time grows with the
// data: the library, and chdb beside it in the same rounds when it is a peer (its growth is the target's).
const oneXData = scale === 'large' && wanted(values.variants, 'library-parquet-1x') ? await prepareDataset('default', log) : null;
const chdbAt1x = oneXData && peerNames.includes('chdb') ? await openChdb(oneXData, log, 'one_x') : null;
// The library runs in a process of its own, as in an application: its memory (and what it gives
// back after queries) is its own, not its peers' and the dataset's here (bench/library-process.ts).
const library = LibraryProcess.start();
let libraryPeakMiB = NaN;

try {
  for (const c of cases) {
    log(`case: ${c.name}`);
    // With peers, bare DuckDB's warm runs are taken in their rounds too (its cold ones alone).
    const bareInRounds = peers.length > 0 && wanted(values.variants, 'library-parquet') && wanted(values.variants, 'bare-duckdb-parquet');
    // The bare statement is built once (its files listed, their schema read) for both timings.
    const openBare = wanted(values.variants, 'bare-duckdb-parquet') ? await bareDuckDB(dataset.parquet, c) : null;
    if (openBare) record(c.name, 'bare-duckdb-parquet', await measureBareDuckDB(openBare, runs, { warm: !bareInRounds }));
    if (wanted(values.variants, 'library-parquet')) {
      // With peers, the warm runs are taken in the same rounds as theirs, answers compared first.
      record(c.name, 'library-parquet', await measureLibrary(library, dataset.parquet, c, runs, { warm: peers.length === 0 }));
      if (peers.length) {
        const bare = bareInRounds && openBare ? await openBare() : null;
        try {
          const unchecked = bare ? [{ name: 'bare-duckdb-parquet', run: bare.run }] : [];
          for (const [variant, warm] of Object.entries(await measureSideBySide(dataset, library, dataset.parquet, c, peers, runs, unchecked))) {
            record(c.name, variant as Variant, { warm, cold: [] });
          }
        } finally {
          bare?.close();
        }
      }
    }
    // The SQL of before and NDJSON: for the cases of the first rounds only.
    if (c.core && wanted(values.variants, 'bare-duckdb-old-sql')) record(c.name, 'bare-duckdb-old-sql', await measureBareDuckDB(await bareDuckDB(dataset.parquet, c, 'old'), runs));
    // NDJSON is 100 times slower: measured for the first project only and at most 5 times, so a run
    // stays well under an hour (and not at the large scale, which keeps no NDJSON).
    if (c.core && wanted(values.variants, 'library-ndjson') && c.rank === ranks[0] && scale !== 'large')
      record(c.name, 'library-ndjson', await measureLibrary(library, dataset.ndjson, c, Math.min(runs, 5)));
    // The large scale holds four times the default's traffic: the same case on the default data, for the growth.
    if (oneXData && chdbAt1x) {
      for (const [variant, warm] of Object.entries(await measureSideBySide(oneXData, library, oneXData.parquet, c, [chdbAt1x], runs))) {
        record(c.name, variant === 'chdb' ? 'chdb-1x' : 'library-parquet-1x', { warm, cold: [] });
      }
    } else if (oneXData) {
      record(c.name, 'library-parquet-1x', await measureLibrary(library, oneXData.parquet, c, runs));
    }
  }
  libraryPeakMiB = await library.peakMiB();
} finally {
  await library.stop();
  for (const peer of peers) await peer.close();
  await chdbAt1x?.close();
}

// How much of the Parquet each case reads (EXPLAIN ANALYZE of the library's SQL).
const scans: Array<{ name: string } & Awaited<ReturnType<typeof scannedRows>>> = [];
for (const c of cases) scans.push({ name: c.name, ...(await scannedRows(dataset.parquet, c)) });

let http: Awaited<ReturnType<typeof measureHttp>> = { rps: NaN, baseline_rps: NaN, cpu_us_per_request: NaN, baseline_cpu_us_per_request: NaN, p99_ms: NaN, rss_mb_under_load: NaN };
let server = { rss_mb_uncached_burst: NaN, startup_ms: NaN };
let burst: BurstResult | null = null;
let ingest: IngestCase[] = [];
let footprint: FootprintCase[] = [];
let bombs: { budget: string; idleMiB: number; bombs: BombCase[] } | null = null;
let managed: ManagedResult | null = null;
let studio: StudioResult | null = null;
let parse: ParseResult | null = null;
let discovered: DiscoveredResult | null = null;
const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
const output = () => ({
  scale,
  machine,
  started_at: startedAt,
  command: `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim(),
  load_average: { start: loadAtStart, end: loadAverages() },
  // The bench process's peak (VmHWM): bare DuckDB and chdb run in it, and the datasets are read there.
  vmhwm_mib: peakRssMb(process.pid),
  // The library's process's peak over the endpoints' cases (bench/library-process.ts).
  library_vmhwm_mib: libraryPeakMiB,
  cases: results.filter((r) => r.mode === 'warm').map(({ name, variant, p50_ms, p95_ms, runs }) => ({ name, variant, p50_ms, p95_ms, runs })),
  // Warm p50 of each peer / the library's, from the same rounds (below 1: the peer is faster).
  ratios: ratios(),
  // The library's ClickHouse engine / the expert's SQL on the same 18.16 server, same rounds (target <= 1.5).
  clickhouse_engine_vs_expert: engineVsExpert(),
  // At the large scale: warm p50 at 4x the data / at 1x, the library's and chdb's (target: the library's <= chdb's).
  growth: growth(),
  cold: results.filter((r) => r.mode === 'cold').map(({ name, variant, p50_ms, p95_ms, runs }) => ({ name, variant, p50_ms, p95_ms, runs })),
  scans,
  http,
  // The target's measure: peak RSS of the server under the (cache-hit) HTTP benchmark.
  rss_mb: http.rss_mb_under_load,
  rss_mb_uncached_burst: server.rss_mb_uncached_burst,
  startup_ms: server.startup_ms,
  ingest,
  footprint,
  bombs,
  managed,
  studio,
  // CPU per event of the ingest parse alone beside the floor of JSON.parse + JSON.stringify, batches of 100 and 1,000.
  parse,
  // An Explorer question on a discovered field: JSON only and its column, beside chdb's JSONExtract and materialized column.
  discovered,
  // Peak RSS under 200 uncached logs.all queries sent at once; target: the budget + 10 %.
  burst,
});
// Written whatever happens: a phase that fails late (ingest, managed storage) does not take the
// results of the earlier ones with it.
async function report(): Promise<void> {
  const o = output();
  if (values.json) await writeFile(values.json, JSON.stringify(o, null, 2));
  process.stdout.write(markdown(o));
}

try {
  if (!values['skip-http'] && !burstOnly) {
    log('http: cache-hit throughput against a bare node:http server');
    http = await measureHttp(dataset, cases[2]!, Number(values['http-seconds']), log);
    server = await measureServer(dataset, cases[2]!, log);
  }
  if (!values['skip-http'] || burstOnly) {
    log('memory: a burst of 200 uncached logs.all queries, --memory-limit 512MB (the default budget)');
    burst = await measureBurst(dataset, log);
  }

  if (!values['skip-ingest']) {
    log('ingest: events/s through serve --data-dir (fsync before every 200), against append + fdatasync of the same bytes');
    ingest = await measureIngest(Number(values['ingest-seconds']), log);
    // What a log drain costs ingest: the same run with a webhook drain taking every event.
    ingest.push(...(await measureIngest(Number(values['ingest-seconds']), log, [1000], { drain: true })));
  }

  if (!values['skip-footprint'] && !burstOnly) {
    log('footprint: serve --supabase as documented, a Vector-like sender over nine sources, then idle; then the join bombs');
    for (const rate of values['footprint-rates'].split(',').map(Number)) footprint.push(await measureFootprint(rate, Number(values['footprint-seconds']), log));
    // The documented MALLOC_ARENA_MAX beside its peer, glibc's default: what memory comes back after the load.
    footprint.push(await measureFootprint(1000, Number(values['footprint-seconds']), log, [], GLIBC_DEFAULT_ARENAS));
    bombs = await measureJoinBombs(60_000, log);
  }

  if (!values['skip-managed'] && !burstOnly) {
    log('managed: queries on managed storage while it ingests, against the same events compacted by hand');
    managed = measureManagedApart(dataset.ndjson, cases, runs, Number(values['managed-events']));
  }

  if (!values['skip-studio'] && !burstOnly) {
    log("studio: Supabase Studio's requests on a self-hosted week, beside Logflare on Postgres and chdb");
    // The week's size follows --scale (the large scale uses the default week); Postgres is timed 3 times (seconds a query).
    // Without a Postgres on this machine the Logflare-on-Postgres peer is left out, said in one line.
    const noPostgres = values['skip-studio-postgres'] ? '--skip-studio-postgres' : missingPostgres();
    if (noPostgres) log(`studio: Logflare on Postgres left out: ${noPostgres}`);
    studio = await measureStudio({ scale: scale === 'large' ? 'default' : scale, runs, pgRuns: Math.min(runs, 3), postgresLeftOut: noPostgres, chdb: true, layouts: !values['skip-layouts'] }, log);
  }

  if (!values['skip-discovered'] && !burstOnly) {
    log('discovered: an Explorer question on a field no source declares, JSON only and its discovered column, beside chdb');
    // The Studio section's week (its scale, its data directories and chdb tables, reused when it ran).
    discovered = await measureDiscovered(scale === 'large' ? 'default' : scale, runs, true, log);
  }

  if (!values['skip-parse'] && !burstOnly) {
    log('parse: the ingest parse alone (bodyLines) on the nine feeds, beside JSON.parse + JSON.stringify, in a process of its own');
    parse = measureParseApart([100, 1000], Number(values['parse-seconds']));
  }
} finally {
  await report();
}

function ratios(): Array<{ name: string; peer: string; library_p50_ms: number; peer_p50_ms: number; ratio: number }> {
  const warm = results.filter((r) => r.mode === 'warm');
  return warm
    .filter((r) => PEER_VARIANTS.includes(r.variant))
    .flatMap((r) => {
      const lib = warm.find((x) => x.name === r.name && x.variant === 'library-parquet');
      return lib ? [{ name: r.name, peer: r.variant, library_p50_ms: lib.p50_ms, peer_p50_ms: r.p50_ms, ratio: round(r.p50_ms / lib.p50_ms) }] : [];
    });
}

function growth(): Array<{ name: string; library: number; chdb: number | null }> {
  const p50 = (name: string, variant: Variant) => results.find((r) => r.mode === 'warm' && r.name === name && r.variant === variant)?.p50_ms;
  return [...new Set(results.map((r) => r.name))].flatMap((name) => {
    const lib = p50(name, 'library-parquet'),
      lib1x = p50(name, 'library-parquet-1x'),
      chdb = p50(name, 'chdb'),
      chdb1x = p50(name, 'chdb-1x');
    return lib && lib1x ? [{ name, library: round(lib / lib1x), chdb: chdb && chdb1x ? round(chdb / chdb1x) : null }] : [];
  });
}

function engineVsExpert(): Array<{ name: string; engine_p50_ms: number; expert_p50_ms: number; ratio: number }> {
  const warm = results.filter((r) => r.mode === 'warm');
  return warm
    .filter((r) => r.variant === 'clickhouse-engine-18.16')
    .flatMap((r) => {
      const expert = warm.find((x) => x.name === r.name && x.variant === 'clickhouse-18.16');
      return expert ? [{ name: r.name, engine_p50_ms: r.p50_ms, expert_p50_ms: expert.p50_ms, ratio: round(r.p50_ms / expert.p50_ms) }] : [];
    });
}

function sideBySideLines(o: ReturnType<typeof output>): string[] {
  const present = PEER_VARIANTS.filter((v) => o.ratios.some((r) => r.peer === v));
  if (!present.length) return [];
  const lines = [`| case | library p50 ms | ${present.map((p) => `${p} p50 ms | ${p} / library`).join(' | ')} |`, `|---|---:|${present.map(() => '---:|---:').join('|')}|`];
  for (const name of new Set(o.ratios.map((r) => r.name))) {
    const of = (p: string) => o.ratios.find((r) => r.name === name && r.peer === p);
    const lib = o.ratios.find((r) => r.name === name)!.library_p50_ms;
    lines.push(`| ${name} | ${lib} | ${present.map((p) => (of(p) ? `${of(p)!.peer_p50_ms} | ${of(p)!.ratio}` : ' | ')).join(' | ')} |`);
  }
  return [...lines, ''];
}

/** The tables of the endpoints' cases; none when the run measured none (--burst-only, or filters that leave none). */
function caseLines(o: ReturnType<typeof output>): string[] {
  if (o.cases.length === 0) return [];
  const lines: string[] = [];
  lines.push(...sideBySideLines(o));
  if (o.clickhouse_engine_vs_expert.length) {
    lines.push('| case | ClickHouse engine p50 ms | expert SQL p50 ms | engine / expert (target ≤ 1.5) |', '|---|---:|---:|---:|');
    for (const r of o.clickhouse_engine_vs_expert) lines.push(`| ${r.name} | ${r.engine_p50_ms} | ${r.expert_p50_ms} | ${r.ratio} |`);
    lines.push('');
  }
  lines.push('| case | variant | warm p50 ms | warm p95 ms | cold p50 ms | cold p95 ms | runs |', '|---|---|---:|---:|---:|---:|---:|');
  for (const w of o.cases) {
    const c = o.cold.find((x) => x.name === w.name && x.variant === w.variant);
    lines.push(`| ${w.name} | ${w.variant} | ${w.p50_ms} | ${w.p95_ms} | ${c?.p50_ms ?? ''} | ${c?.p95_ms ?? ''} | ${w.runs} |`);
  }
  const ratioLines: string[] = [];
  for (const name of new Set(o.cases.map((c) => c.name))) {
    const get = (v: Variant) => o.cases.find((c) => c.name === name && c.variant === v)?.p50_ms;
    const lib = get('library-parquet'),
      bare = get('bare-duckdb-parquet'),
      old = get('bare-duckdb-old-sql');
    if (lib && bare) ratioLines.push(`| ${name}: library / bare DuckDB, same SQL | ${round(lib / bare)} |`);
    if (lib && old) ratioLines.push(`| ${name}: library / bare DuckDB of the old SQL | ${round(lib / old)} |`);
    const oneX = get('library-parquet-1x');
    if (lib && oneX) ratioLines.push(`| ${name}: at 4x the data / at 1x | ${round(lib / oneX)} |`);
    const chdb = get('chdb'),
      chdbOneX = get('chdb-1x');
    if (chdb && chdbOneX) ratioLines.push(`| ${name}: chdb at 4x the data / at 1x (target: the library's ≤ this) | ${round(chdb / chdbOneX)} |`);
  }
  // Only the ratios this run measured (a run restricted by --variants may have none).
  if (ratioLines.length) lines.push('', '| ratio (warm p50) | value |', '|---|---:|', ...ratioLines);
  lines.push('', '| case (compacted Parquet) | files read | rows scanned | rows in the dataset |', '|---|---:|---:|---:|');
  for (const s of o.scans) lines.push(`| ${s.name} | ${s.files} of ${s.allFiles} | ${s.scanned.toLocaleString('en')} | ${s.total.toLocaleString('en')} |`);
  // A blank line ends the table: a section's first line right after it would read as one more row.
  return [...lines, ''];
}

function markdown(o: ReturnType<typeof output>): string {
  const lines = [
    `### Benchmark, scale \`${o.scale}\` (${SCALES[scale].functionEvents.toLocaleString('en')} invocations, ${SCALES[scale].edgeEvents.toLocaleString('en')} requests)`,
    '',
    `Machine: ${o.machine}; ${o.started_at}; load average (1, 5, 15 min) ${o.load_average.start.join(' ')} at the start, ${o.load_average.end.join(' ')} at the end; peak RSS (VmHWM) of the library's process over the endpoints' cases ${o.library_vmhwm_mib} MiB, of the bench's process (bare DuckDB and chdb in it) ${o.vmhwm_mib} MiB`,
    '',
    `\`${o.command}\``,
    '',
  ];
  lines.push(...caseLines(o));
  // The HTTP phase's lines only when it ran (--skip-http leaves its numbers out, not as NaN).
  if (Number.isFinite(o.http.rps))
    lines.push(
      '',
      `HTTP cache hits: ${o.http.rps} req/s through the node adapter vs ${o.http.baseline_rps} req/s bare node:http (ratio ${round(o.http.rps / o.http.baseline_rps)}), p99 ${o.http.p99_ms} ms; server CPU a request ${o.http.cpu_us_per_request} µs vs ${o.http.baseline_cpu_us_per_request} µs (bare / library ${round(o.http.baseline_cpu_us_per_request / o.http.cpu_us_per_request)})`,
      `Serving process (memory budget 640MB, queries' DuckDB 256MB): peak RSS ${o.rss_mb} MB under the HTTP benchmark, ${o.rss_mb_uncached_burst} MB after a burst of uncached logs.all queries; start to first answer ${o.startup_ms} ms`,
      '',
    );
  if (o.ingest.length) lines.push(...ingestMarkdown(o.ingest), '');
  if (o.footprint.length || o.bombs) lines.push(...footprintMarkdown(o.footprint, o.bombs), '');
  if (o.managed) lines.push(...managedMarkdown(o.managed), '');
  if (o.studio) lines.push(...studioMarkdown(o.studio), '');
  if (o.discovered) lines.push(...discoveredMarkdown(o.discovered), '');
  if (o.parse) lines.push(...parseMarkdown(o.parse), '');
  lines.push(...burstLines(o.burst));
  return lines.join('\n');
}

function burstLines(b: BurstResult | null): string[] {
  if (!b) return [];
  // RSS is in MiB (kB / 1024); the limit in DuckDB's MB (10^6 bytes), so the target is in MiB too.
  const target = round(((b.memory_limit_mb * 1e6) / 2 ** 20) * 1.1, 1);
  return [
    '| memory: burst of uncached logs.all | value |',
    '|---|---:|',
    `| requests sent at once | ${b.requests} (${Object.entries(b.statuses)
      .map(([s, n]) => `${n} × ${s}`)
      .join(', ')}) |`,
    `| RSS before | ${b.rss_mb_before} MiB |`,
    `| peak RSS (target ≤ the budget ${b.memory_limit_mb} MB + 10 % = ${target} MiB) | ${b.rss_mb_peak} MiB ${b.rss_mb_peak <= target ? '(met)' : '(missed)'} |`,
    `| RSS 1 s after the last answer | ${b.rss_mb_after} MiB |`,
    `| burst duration | ${b.burst_ms} ms |`,
    '',
  ];
}
