/**
 * npm run bench -- [--scale default|small|tiny] [--runs 20] [--json out.json] [--postgres <url>] [--burst-only]
 *
 * Measures, side by side in one run, the library against baselines on this machine and prints
 * a markdown table; --json writes the machine-readable result.
 */
import { writeFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import { benchCases } from './cases';
import { prepareDataset, SCALES, type Scale } from './dataset';
import { measureBareDuckDB, measureLibrary, type Samples } from './library';
import { measurePostgres } from './postgres';
import { measureHttp, measureServer } from './http';
import { measureBurst, type BurstResult } from './memory';
import { summarize, round, type Timing } from './stats';
import { scannedRows } from './pruning';
import { ingestMarkdown, measureIngest, type IngestCase } from './ingest';
import { managedMarkdown, measureManaged, type ManagedResult } from './managed';

const { values } = parseArgs({
  options: {
    scale: { type: 'string', default: 'default' },
    runs: { type: 'string', default: '20' },
    json: { type: 'string' },
    postgres: { type: 'string' },
    'http-seconds': { type: 'string', default: '10' },
    'skip-http': { type: 'boolean', default: false },
    'ingest-seconds': { type: 'string', default: '10' },
    'skip-ingest': { type: 'boolean', default: false },
    // Requests ingested into managed storage for its query cases (invocations: half as many).
    'managed-events': { type: 'string', default: '1000000' },
    'skip-managed': { type: 'boolean', default: false },
    // Only the memory case: a burst of 200 uncached logs.all queries against the server.
    'burst-only': { type: 'boolean', default: false },
    // 1 = the busiest project (28% of all events with the generator's Zipf-like traffic).
    // Projects by traffic rank, comma separated: 1 = the busiest, 6 = about the average of 20.
    'project-rank': { type: 'string', default: '1,6' },
    // Comma-separated filters, for supplementary runs: endpoint names and variants to measure.
    endpoints: { type: 'string' },
    variants: { type: 'string' },
  },
});
const scale = values.scale as Scale;
if (!(scale in SCALES)) throw new Error(`--scale must be one of ${Object.keys(SCALES).join(', ')}`);
const runs = Math.max(1, Number(values.runs));
const log = (line: string) => process.stderr.write(`${line}\n`);

type Variant = 'library-ndjson' | 'library-parquet' | 'library-parquet-1x' | 'bare-duckdb-parquet' | 'bare-duckdb-old-sql' | 'postgres-logflare-layout';
interface CaseResult extends Timing {
  name: string;
  variant: Variant;
  mode: 'warm' | 'cold';
}

const dataset = await prepareDataset(scale, log);
const ranks = values['project-rank']!.split(',').map((r) => Math.max(1, Number(r)));
const wanted = (list: string | undefined, item: string) => list === undefined || list.split(',').includes(item);
const burstOnly = values['burst-only'];
const cases = burstOnly ? [] : ranks.flatMap((rank) => benchCases(dataset.projects[rank - 1]!, rank)).filter((c) => wanted(values.endpoints, c.endpoint));
const results: CaseResult[] = [];
const record = (name: string, variant: Variant, samples: Samples) => {
  results.push({ name, variant, mode: 'warm', ...summarize(samples.warm) });
  results.push({ name, variant, mode: 'cold', ...summarize(samples.cold) });
};

for (const c of cases) {
  log(`case: ${c.name}`);
  if (wanted(values.variants, 'library-parquet')) record(c.name, 'library-parquet', await measureLibrary(dataset.parquet, c, runs));
  if (wanted(values.variants, 'bare-duckdb-parquet')) record(c.name, 'bare-duckdb-parquet', await measureBareDuckDB(dataset.parquet, c, runs));
  if (wanted(values.variants, 'bare-duckdb-old-sql')) record(c.name, 'bare-duckdb-old-sql', await measureBareDuckDB(dataset.parquet, c, runs, 'old'));
  // NDJSON is 100 times slower: measured for the first project only and at most 5 times, so a run
  // stays well under an hour (and not at the large scale, which has no NDJSON of its own).
  if (wanted(values.variants, 'library-ndjson') && c.rank === ranks[0] && scale !== 'large') record(c.name, 'library-ndjson', await measureLibrary(dataset.ndjson, c, Math.min(runs, 5)));
  // The large scale is the default four times over: the same case on the default data, for the growth.
  if (scale === 'large' && wanted(values.variants, 'library-parquet-1x')) {
    record(c.name, 'library-parquet-1x', await measureLibrary((await prepareDataset('default', log)).parquet, c, runs));
  }
  if (values.postgres && wanted(values.variants, 'postgres-logflare-layout')) {
    record(c.name, 'postgres-logflare-layout', await measurePostgres(values.postgres, dataset, c, runs, log));
  }
}

// How much of the Parquet each case reads (EXPLAIN ANALYZE of the library's SQL).
const scans: Array<{ name: string } & Awaited<ReturnType<typeof scannedRows>>> = [];
for (const c of cases) scans.push({ name: c.name, ...(await scannedRows(dataset.parquet, c)) });

let http = { rps: NaN, baseline_rps: NaN, p99_ms: NaN, rss_mb_under_load: NaN };
let server = { rss_mb_uncached_burst: NaN, startup_ms: NaN };
let burst: BurstResult | null = null;
let ingest: IngestCase[] = [];
let managed: ManagedResult | null = null;
const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
const output = () => ({
  scale,
  machine,
  cases: results.filter((r) => r.mode === 'warm').map(({ name, variant, p50_ms, p95_ms, runs }) => ({ name, variant, p50_ms, p95_ms, runs })),
  cold: results.filter((r) => r.mode === 'cold').map(({ name, variant, p50_ms, p95_ms, runs }) => ({ name, variant, p50_ms, p95_ms, runs })),
  scans,
  http,
  // The target's measure: peak RSS of the server under the (cache-hit) HTTP benchmark.
  rss_mb: http.rss_mb_under_load,
  rss_mb_uncached_burst: server.rss_mb_uncached_burst,
  startup_ms: server.startup_ms,
  ingest,
  managed,
  // Peak RSS under 200 uncached logs.all queries sent at once; target: memoryLimit + 128 MB.
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
    log('memory: a burst of 200 uncached logs.all queries, --memory-limit 256MB');
    burst = await measureBurst(dataset, log);
  }

  if (!values['skip-ingest']) {
    log('ingest: events/s through serve --data-dir (fsync before every 200), against append + fdatasync of the same bytes');
    ingest = await measureIngest(Number(values['ingest-seconds']), log);
  }

  if (!values['skip-managed'] && !burstOnly) {
    log('managed: queries on managed storage while it ingests, against the same events compacted by hand');
    managed = await measureManaged(dataset, cases.filter((c) => c.rank === ranks[0]), runs, Number(values['managed-events']), log);
  }
} finally {
  await report();
}

function markdown(o: ReturnType<typeof output>): string {
  const lines = [`### Benchmark, scale \`${o.scale}\` (${SCALES[scale].functionEvents.toLocaleString('en')} invocations, ${SCALES[scale].edgeEvents.toLocaleString('en')} requests)`, '', `Machine: ${o.machine}`, ''];
  if (o.cases.length === 0) return [...lines, ...burstLines(o.burst)].join('\n');
  lines.push('| case | variant | warm p50 ms | warm p95 ms | cold p50 ms | cold p95 ms | runs |', '|---|---|---:|---:|---:|---:|---:|');
  for (const w of o.cases) {
    const c = o.cold.find((x) => x.name === w.name && x.variant === w.variant);
    lines.push(`| ${w.name} | ${w.variant} | ${w.p50_ms} | ${w.p95_ms} | ${c?.p50_ms ?? ''} | ${c?.p95_ms ?? ''} | ${w.runs} |`);
  }
  lines.push('', '| ratio (warm p50) | value |', '|---|---:|');
  for (const name of new Set(o.cases.map((c) => c.name))) {
    const get = (v: Variant) => o.cases.find((c) => c.name === name && c.variant === v)?.p50_ms;
    const lib = get('library-parquet'), bare = get('bare-duckdb-parquet'), old = get('bare-duckdb-old-sql'), pg = get('postgres-logflare-layout');
    if (lib && bare) lines.push(`| ${name}: library / bare DuckDB, same SQL | ${round(lib / bare)} |`);
    if (lib && old) lines.push(`| ${name}: library / bare DuckDB of the old SQL | ${round(lib / old)} |`);
    const oneX = get('library-parquet-1x');
    if (lib && oneX) lines.push(`| ${name}: at 4x the data / at 1x | ${round(lib / oneX)} |`);
    if (lib && pg) lines.push(`| ${name}: Postgres / library | ${round(pg / lib, 1)} |`);
  }
  lines.push('', '| case (compacted Parquet) | files read | rows scanned | rows in the dataset |', '|---|---:|---:|---:|');
  for (const s of o.scans) lines.push(`| ${s.name} | ${s.files} of ${s.allFiles} | ${s.scanned.toLocaleString('en')} | ${s.total.toLocaleString('en')} |`);
  lines.push(
    '',
    `HTTP cache hits: ${o.http.rps} req/s through the node adapter vs ${o.http.baseline_rps} req/s bare node:http (ratio ${round(o.http.rps / o.http.baseline_rps)}), p99 ${o.http.p99_ms} ms`,
    `Serving process (memoryLimit 256MB): peak RSS ${o.rss_mb} MB under the HTTP benchmark, ${o.rss_mb_uncached_burst} MB after a burst of uncached logs.all queries; start to first answer ${o.startup_ms} ms`,
    '',
  );
  if (o.ingest.length) lines.push(...ingestMarkdown(o.ingest), '');
  if (o.managed) lines.push(...managedMarkdown(o.managed), '');
  lines.push(...burstLines(o.burst));
  return lines.join('\n');
}

function burstLines(b: BurstResult | null): string[] {
  if (!b) return [];
  // RSS is in MiB (kB / 1024); the limit in DuckDB's MB (10^6 bytes), so the target is in MiB too.
  const target = round((b.memory_limit_mb * 1e6) / 2 ** 20 + 128, 1);
  return [
    '| memory: burst of uncached logs.all | value |', '|---|---:|',
    `| requests sent at once | ${b.requests} (${Object.entries(b.statuses).map(([s, n]) => `${n} × ${s}`).join(', ')}) |`,
    `| RSS before | ${b.rss_mb_before} MiB |`,
    `| peak RSS (target ≤ memoryLimit ${b.memory_limit_mb} MB + 128 MiB = ${target} MiB) | ${b.rss_mb_peak} MiB ${b.rss_mb_peak <= target ? '(met)' : '(missed)'} |`,
    `| RSS 1 s after the last answer | ${b.rss_mb_after} MiB |`,
    `| burst duration | ${b.burst_ms} ms |`,
    '',
  ];
}
