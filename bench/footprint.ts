import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { deriveSeed, Prng } from '../src/fixtures/prng';
import { microsOf } from '../test/support/supabase/instants';
import { BUILDERS } from '../test/support/supabase/vector-events';
import { LOG_TABLES, sourceNameOf, type LogTable } from '../test/support/supabase/vector-sources';
import { studioChartQuery, studioListQuery, studioWhere } from '../test/support/studio-queries';
import { freePort } from './free-port';
import { FEED_WEIGHTS } from './studio-data';

/**
 * The footprint of `serve --supabase` run as docs/supabase.md documents it (no memory flag): a
 * Vector-like sender over the nine feeds at a fixed rate, Studio's list and chart asked every 5 s,
 * then the process left idle. Memory is the kernel's accounting from /proc (VmHWM, the peak; VmRSS
 * after), CPU the process's own (utime + stime), so nothing is sampled.
 */

const CLI = resolve('dist', 'cli.js');

/**
 * The environment docs/supabase.md's compose service sets beyond the tokens (`MALLOC_ARENA_MAX`,
 * glibc's trim and top-pad thresholds, `NODE_OPTIONS`), read from the page so the bench runs the
 * command as documented.
 */
const DOCUMENTED_ENV: Record<string, string> = (() => {
  const page = readFileSync(resolve('docs', 'supabase.md'), 'utf8');
  const env: Record<string, string> = {};
  for (const name of ['MALLOC_ARENA_MAX', 'MALLOC_TRIM_THRESHOLD_', 'MALLOC_TOP_PAD_', 'NODE_OPTIONS']) {
    const value = new RegExp(`^\\s+${name}:\\s*"?([^"\\n]+?)"?\\s*$`, 'm').exec(page)?.[1];
    if (value) env[name] = value;
  }
  return env;
})();
const PRIVATE = 'bench-private';
const PUBLIC = 'bench-public';

/** One footprint case: what was offered and what the process took. */
export interface FootprintCase {
  label: string;
  offeredPerSecond: number;
  seconds: number;
  /** Events answered 200. */
  accepted: number;
  /** Requests answered 503 (refused under load). */
  refused: number;
  idleMiB: number;
  peakMiB: number;
  /** RSS 30 s and 60 s after the sender stopped. */
  after30MiB: number;
  after60MiB: number;
  /** The process's CPU per accepted event (user + system). */
  cpuMicrosPerEvent: number;
  /** What /metrics said as the sender stopped and 60 s after: V8's heap and the memory tables' NDJSON (MiB). */
  heapMiB: [number, number];
  memoryTablesMiB: [number, number];
  /** The budget the server said it runs under (its first lines). */
  budget: string;
  /** What held memory at the highest resident sample of the run (MiB), one sample a second. */
  atPeak: PeakParts;
  /** What resident memory was made of idle, before the sender (MiB), and 60 s after it stopped. */
  idleParts: { anon: number; file: number; duckdbQueries: number };
  after60Parts: { anon: number; file: number; duckdbQueries: number };
}

/**
 * The parts of resident memory at the run's highest sample: anonymous (heaps, DuckDB, the
 * allocators) and file-backed (the code), and of the anonymous what `/metrics` counts (V8's heap
 * and buffers, the memory tables' NDJSON); the rest is DuckDB's and the allocators'.
 */
export interface PeakParts {
  rss: number;
  anon: number;
  file: number;
  heap: number;
  external: number;
  memoryTables: number;
  /** What each DuckDB instance counted in its buffer pool at the last /metrics answer before the sample (`/metrics`' duckdb_memory_bytes). */
  duckdbQueries: number;
  duckdbCompaction: number;
}

/** A join bomb asked of the documented command: its answer and the process's peak. */
export interface BombCase {
  sql: string;
  status: number;
  code: string | null;
  seconds: number;
  peakMiB: number;
  afterMiB: number;
  /** Whether /health and an ingest answered 200 right after. */
  aliveAfter: boolean;
}

const status = (pid: number, key: string): number => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;
const cpuMicros = (pid: number): number => {
  // Fields after the command's closing parenthesis: utime is the 12th, stime the 13th (clock ticks, 100 a second).
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
};
/** FOOTPRINT_SMAPS=prefix: the process's /proc/<pid>/smaps copied at idle and 60 s after (`<prefix>-idle.smaps`, `<prefix>-after60.smaps`), to attribute what stays (bench/smaps-parts.ts). */
const keepSmaps = (pid: number, when: string): void => {
  const prefix = process.env.FOOTPRINT_SMAPS;
  if (prefix) writeFileSync(`${prefix}-${when}.smaps`, readFileSync(`/proc/${pid}/smaps`, 'utf8'));
};
const round = (n: number) => Math.round(n * 10) / 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Held = { heap: number; external: number; memoryTables: number; duckdbQueries: number; duckdbCompaction: number };

/** V8's heap, JavaScript's buffers, the memory tables' NDJSON bytes and each DuckDB's buffer pool (MiB), as the server's /metrics says them. */
async function heldMiB(base: string): Promise<Held> {
  const text = await (await fetch(`${base}/metrics`, { headers: { 'x-api-key': PRIVATE } })).text();
  // FOOTPRINT_TRACE: DuckDB's bytes by tag too (the lines as /metrics gives them, one answer a second).
  if (process.env.FOOTPRINT_TRACE)
    appendFileSync(`${process.env.FOOTPRINT_TRACE}.duckdb`, `${Date.now()} ${text.match(/^log_endpoints_duckdb_memory_tag_bytes\{.*\} [1-9]\d*$/gm)?.join(' ') ?? ''}\n`);
  const value = (name: string) => Number(new RegExp(`^log_endpoints_${name} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN) / 2 ** 20;
  // An instance not open now (compaction's between runs) is not in the answer: 0.
  const duckdb = (instance: string) => Number(new RegExp(`^log_endpoints_duckdb_memory_bytes\\{instance="${instance}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0) / 2 ** 20;
  return {
    heap: round(value('heap_bytes')),
    external: round(value('external_bytes')),
    memoryTables: round(value('memory_tables_bytes')),
    duckdbQueries: round(duckdb('queries')),
    duckdbCompaction: round(duckdb('compaction')),
  };
}

/**
 * What resident memory is made of now (MiB): anonymous and file-backed from /proc, and of the
 * anonymous what DuckDB's queries instance counts in its buffer pool (`/metrics`; 0 when the
 * server does not say it).
 */
async function partsMiB(pid: number, base: string): Promise<{ anon: number; file: number; duckdbQueries: number }> {
  const text = await (await fetch(`${base}/metrics`, { headers: { 'x-api-key': PRIVATE } })).text();
  const queries = Number(/^log_endpoints_duckdb_memory_bytes\{instance="queries"\} (\d+)$/m.exec(text)?.[1] ?? 0) / 2 ** 20;
  return { anon: round(status(pid, 'RssAnon')), file: round(status(pid, 'RssFile')), duckdbQueries: round(queries) };
}

/**
 * Samples the process's resident memory every 100 ms (the peaks last under a second: compaction
 * runs, Studio's queries) and /metrics once a second, and keeps the parts at its highest sample.
 */
function samplePeak(pid: number, base: string): { stop: () => PeakParts } {
  let peak: PeakParts = { rss: 0, anon: 0, file: 0, heap: 0, external: 0, memoryTables: 0, duckdbQueries: 0, duckdbCompaction: 0 };
  let held: Held = { heap: 0, external: 0, memoryTables: 0, duckdbQueries: 0, duckdbCompaction: 0 };
  let ticks = 0;
  let asking = false;
  // FOOTPRINT_TRACE=file: every sample written to a file, to see when the peaks come.
  const trace = process.env.FOOTPRINT_TRACE;
  const started = Date.now();
  const timer = setInterval(() => {
    const rss = status(pid, 'VmRSS');
    if (trace) appendFileSync(trace, `${Date.now() - started} ${round(rss)} ${held.heap} ${held.external} ${held.memoryTables} ${held.duckdbQueries} ${held.duckdbCompaction}\n`);
    if (rss > peak.rss) peak = { rss: round(rss), anon: round(status(pid, 'RssAnon')), file: round(status(pid, 'RssFile')), ...held };
    if (ticks++ % 10 !== 0 || asking) return;
    asking = true;
    heldMiB(base)
      .then((h) => (held = h))
      .catch(() => undefined)
      .finally(() => (asking = false));
  }, 100);
  timer.unref();
  return {
    stop: () => {
      clearInterval(timer);
      return peak;
    },
  };
}

/** The documented environment without the allocator setting: glibc's default arenas, its peer in the footprint table. */
export const GLIBC_DEFAULT_ARENAS: Record<string, string | undefined> = { MALLOC_ARENA_MAX: undefined };

async function startSupabase(dataDir: string, port: number, args: readonly string[] = [], env: Record<string, string | undefined> = {}): Promise<{ child: ChildProcess; banner: string }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--supabase', '--data-dir', dataDir, '--port', String(port), '--host', '127.0.0.1', ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...DOCUMENTED_ENV, ...env, LOGFLARE_PRIVATE_ACCESS_TOKEN: PRIVATE, LOGFLARE_PUBLIC_ACCESS_TOKEN: PUBLIC },
  });
  const banner = await new Promise<string>((done, fail) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c;
      if (out.includes('Listening on')) done(out);
    });
    child.once('exit', (code) => fail(new Error(`serve exited with ${code}: ${out}`)));
  });
  return { child, banner };
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((done) => {
    if (child.exitCode !== null) return done();
    child.once('exit', () => done());
    child.kill('SIGTERM');
  });
}

/** The budget line `serve` prints (or what it printed instead). */
function budgetOf(banner: string): string {
  return /memory budget ([^\n(]+)/i.exec(banner)?.[1]?.trim() ?? 'not printed';
}

/** Vector's http sink: one request per feed per second, a JSON array of the second's events. */
async function send(base: string, table: LogTable, events: unknown[]): Promise<{ ok: boolean; status: number }> {
  const response = await fetch(`${base}/api/logs?source_name=${encodeURIComponent(sourceNameOf(table))}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': PUBLIC, 'user-agent': 'Vector/0.34.0 (x86_64-unknown-linux-gnu)' },
    body: JSON.stringify(events),
  });
  await response.arrayBuffer();
  return { ok: response.ok, status: response.status };
}

/** Studio's Logs page: the list and the chart of the last hour, as its proxy sends them. */
async function askStudio(base: string, now: Date): Promise<void> {
  const start = new Date(now.getTime() - 3_600_000).toISOString();
  for (const sql of [studioListQuery('edge_logs', studioWhere([])), studioChartQuery('edge_logs', studioWhere([]), 'minute', start)]) {
    const url = new URL(`${base}/api/endpoints/query/logs.all`);
    url.searchParams.set('project', 'default');
    url.searchParams.set('sql', sql);
    url.searchParams.set('iso_timestamp_start', start);
    url.searchParams.set('iso_timestamp_end', now.toISOString());
    const response = await fetch(url, { headers: { 'x-api-key': PRIVATE } });
    await response.arrayBuffer();
  }
}

/**
 * Offers `rate` events a second over the nine feeds (weighted as a used stack logs) for
 * `seconds`, asks Studio's list and chart every 5 s, then idles 60 s.
 */
export async function measureFootprint(rate: number, seconds: number, log: (line: string) => void, args: readonly string[] = [], env: Record<string, string | undefined> = {}): Promise<FootprintCase> {
  const dir = await mkdtemp(join(tmpdir(), 'le-footprint-'));
  const port = await freePort();
  const { child, banner } = await startSupabase(join(dir, 'data'), port, args, env);
  const base = `http://127.0.0.1:${port}`;
  const pid = child.pid!;
  try {
    await sleep(3000);
    const idleMiB = status(pid, 'VmRSS');
    const idleParts = await partsMiB(pid, base);
    keepSmaps(pid, 'idle');
    const cpuBefore = cpuMicros(pid);
    const prng = new Prng(deriveSeed(7, `footprint:${rate}`));
    const sampler = samplePeak(pid, base);
    let accepted = 0;
    let refused = 0;
    const started = Date.now();
    for (let second = 0; second < seconds; second++) {
      const now = new Date();
      const tick = Date.now();
      const sends: Promise<unknown>[] = LOG_TABLES.map((table) => {
        const count = Math.max(1, Math.round(rate * FEED_WEIGHTS[table]));
        const events = Array.from({ length: count }, (_, i) => BUILDERS[table](prng, { micros: microsOf(now) + i, nanos: 0 }));
        return send(base, table, events).then((r) => (r.ok ? (accepted += count) : r.status === 503 ? refused++ : undefined));
      });
      if (second % 5 === 0) sends.push(askStudio(base, now));
      await Promise.all(sends);
      const wait = 1000 - (Date.now() - tick);
      if (wait > 0) await sleep(wait);
    }
    const cpu = cpuMicros(pid) - cpuBefore;
    const peakMiB = status(pid, 'VmHWM');
    const atPeak = sampler.stop();
    const sentSeconds = (Date.now() - started) / 1000;
    const heldAtStop = await heldMiB(base);
    await sleep(30_000);
    const after30MiB = status(pid, 'VmRSS');
    await sleep(30_000);
    const after60MiB = status(pid, 'VmRSS');
    keepSmaps(pid, 'after60');
    const heldAfter = await heldMiB(base);
    // Asked twice: the DuckDB reading a scrape answers is the one its previous scrape started.
    await partsMiB(pid, base);
    await sleep(500);
    const after60Parts = await partsMiB(pid, base);
    const result: FootprintCase = {
      label: `${rate.toLocaleString('en-US')} events/s${env === GLIBC_DEFAULT_ARENAS ? ", glibc's default arenas" : ''}`,
      offeredPerSecond: rate,
      seconds: round(sentSeconds),
      accepted,
      refused,
      idleMiB: round(idleMiB),
      peakMiB: round(peakMiB),
      after30MiB: round(after30MiB),
      after60MiB: round(after60MiB),
      cpuMicrosPerEvent: round(cpu / Math.max(1, accepted)),
      heapMiB: [heldAtStop.heap, heldAfter.heap],
      memoryTablesMiB: [heldAtStop.memoryTables, heldAfter.memoryTables],
      budget: budgetOf(banner),
      atPeak,
      idleParts,
      after60Parts,
    };
    log(
      `footprint ${result.label}: peak ${result.peakMiB} MiB, idle ${result.idleMiB}, after 30 s ${result.after30MiB}, after 60 s ${result.after60MiB}, ${result.cpuMicrosPerEvent} µs CPU/event, ${result.refused} refused; ` +
        `at the highest sample: RSS ${atPeak.rss} (anon ${atPeak.anon}, file ${atPeak.file}), V8 heap ${atPeak.heap}, buffers ${atPeak.external}, memory tables ${atPeak.memoryTables} NDJSON, DuckDB's buffer pools: queries ${atPeak.duckdbQueries}, compaction ${atPeak.duckdbCompaction}; ` +
        `idle: anon ${idleParts.anon}, file ${idleParts.file}, DuckDB queries ${idleParts.duckdbQueries}; ` +
        `60 s after: anon ${after60Parts.anon}, file ${after60Parts.file}, V8 heap ${heldAfter.heap}, buffers ${heldAfter.external}, DuckDB queries ${after60Parts.duckdbQueries}`,
    );
    return result;
  } finally {
    await stop(child);
    await rm(dir, { recursive: true, force: true });
  }
}

/** The Logs Explorer queries that took the documented command past 6 GB: self- and cross-joins. */
export const JOIN_BOMBS = [
  'select count(*) from edge_logs a, edge_logs b, edge_logs c, edge_logs d',
  'select count(*) from edge_logs a cross join edge_logs b cross join postgres_logs c',
  'select a.id, b.id from edge_logs a join edge_logs b on a.event_message != b.event_message order by a.id limit 10',
];

/** Loads `events` gateway and Postgres events, then asks each join bomb and checks the process after. */
export async function measureJoinBombs(events: number, log: (line: string) => void, args: readonly string[] = []): Promise<{ budget: string; idleMiB: number; bombs: BombCase[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'le-bombs-'));
  const port = await freePort();
  const { child, banner } = await startSupabase(join(dir, 'data'), port, args);
  const base = `http://127.0.0.1:${port}`;
  const pid = child.pid!;
  try {
    const prng = new Prng(deriveSeed(7, 'bombs'));
    const now = Date.now();
    for (let sent = 0; sent < events; sent += 1000) {
      for (const table of ['edge_logs', 'postgres_logs'] as const) {
        const batch = Array.from({ length: 1000 }, (_, i) => BUILDERS[table](prng, { micros: (now - 600_000) * 1000 + sent + i, nanos: 0 }));
        await send(base, table, batch);
      }
    }
    await sleep(3000);
    const idleMiB = round(status(pid, 'VmRSS'));
    const bombs: BombCase[] = [];
    for (const sql of JOIN_BOMBS) {
      const url = new URL(`${base}/api/endpoints/query/logs.all`);
      url.searchParams.set('project', 'default');
      url.searchParams.set('sql', sql);
      const started = Date.now();
      const response = await fetch(url, { headers: { 'x-api-key': PRIVATE } });
      const body = (await response.json().catch(() => ({}))) as { error?: { code?: string } };
      const seconds = (Date.now() - started) / 1000;
      await sleep(2000);
      const health = await fetch(`${base}/health`).then((r) => r.status);
      const ingest = await send(base, 'edge_logs', [BUILDERS.edge_logs(prng, { micros: Date.now() * 1000, nanos: 0 })]);
      const bomb: BombCase = {
        sql,
        status: response.status,
        code: body.error?.code ?? null,
        seconds: round(seconds),
        peakMiB: round(status(pid, 'VmHWM')),
        afterMiB: round(status(pid, 'VmRSS')),
        aliveAfter: health === 200 && ingest.ok,
      };
      log(`bomb ${sql}: ${bomb.status} ${bomb.code ?? ''} in ${bomb.seconds} s, peak ${bomb.peakMiB} MiB, after ${bomb.afterMiB} MiB, alive ${bomb.aliveAfter}`);
      bombs.push(bomb);
    }
    return { budget: budgetOf(banner), idleMiB, bombs };
  } finally {
    await stop(child);
    await rm(dir, { recursive: true, force: true });
  }
}

/** The footprint tables, as docs/performance.md and docs/ingest.md carry them. */
export function footprintMarkdown(cases: readonly FootprintCase[], bombs: { budget: string; idleMiB: number; bombs: BombCase[] } | null): string[] {
  const lines = [
    `### Footprint of \`serve --supabase\` (the documented command and environment: ${
      Object.entries(DOCUMENTED_ENV)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ') || 'none'
    }; no memory flag)`,
    '',
    `Budget the server printed: ${cases[0]?.budget ?? bombs?.budget ?? 'n/a'}. Logflare's analytics container: ~1.8 GB.`,
    '',
    '| offered | seconds | accepted events | 503s | idle RSS (MiB) | peak RSS, VmHWM (MiB) | RSS 30 s after (MiB) | RSS 60 s after (MiB) | CPU per event (µs) | V8 heap at stop / 60 s after (MiB) | memory tables at stop / 60 s after (MiB NDJSON) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...cases.map(
      (c) =>
        `| ${c.label} | ${c.seconds} | ${c.accepted} | ${c.refused} | ${c.idleMiB} | ${c.peakMiB} | ${c.after30MiB} | ${c.after60MiB} | ${c.cpuMicrosPerEvent} | ${c.heapMiB.join(' / ')} | ${c.memoryTablesMiB.join(' / ')} |`,
    ),
  ];
  if (bombs) {
    lines.push(
      '',
      `Join bombs in the Logs Explorer (idle before: ${bombs.idleMiB} MiB):`,
      '',
      '| query | status | code | seconds | peak RSS, VmHWM (MiB) | RSS after (MiB) | health and ingest after |',
      '|---|---:|---|---:|---:|---:|---|',
      ...bombs.bombs.map((b) => `| \`${b.sql}\` | ${b.status} | ${b.code ?? ''} | ${b.seconds} | ${b.peakMiB} | ${b.afterMiB} | ${b.aliveAfter ? 'yes' : 'no'} |`),
    );
  }
  return lines;
}

/**
 * On its own, one case at a time while tuning (build first: it runs dist/cli.js):
 *
 *   npx tsx bench/footprint.ts --rate 1000 --seconds 90 [--runs 2] [--serve-arg=--flag --serve-arg=value] [--env NAME=value]
 */
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({
    options: {
      rate: { type: 'string', default: '1000' },
      seconds: { type: 'string', default: '90' },
      runs: { type: 'string', default: '1' },
      'serve-arg': { type: 'string', multiple: true, default: [] },
      env: { type: 'string', multiple: true, default: [] },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write('npx tsx bench/footprint.ts --rate 1000 --seconds 90 [--runs 2] [--serve-arg=ARG]... [--env NAME=value]...\n');
    process.exit(0);
  }
  const env = Object.fromEntries(values.env.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1) || undefined]));
  const cases: FootprintCase[] = [];
  for (let run = 0; run < Number(values.runs); run++) {
    cases.push(await measureFootprint(Number(values.rate), Number(values.seconds), (line) => process.stderr.write(`${line}\n`), values['serve-arg'], env));
  }
  process.stdout.write(`${footprintMarkdown(cases, null).join('\n')}\n`);
}
