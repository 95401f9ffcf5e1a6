/**
 * Ingest throughput: events/s through HTTP into managed storage (the real CLI server,
 * `serve --data-dir`, every batch fsynced before its 200), with batches of 100 and 1000, side by
 * side with the floor of the same disk: appending the same bytes and fdatasync-ing after each
 * batch, in one process, no HTTP, no JSON. With a log drain (`--drain`, and one case of the full
 * run): the same with a webhook drain forwarding every event to a receiver on loopback, so what a
 * drain costs ingest is measured beside ingest without one.
 *
 * The server's counters at the end of a run tell how often compaction rewrote an event: the events
 * its runs wrote and the events its merges wrote again (`/metrics`), and the data files each day
 * held once it stopped (what a query opens).
 *
 *   npm run bench                        (part of the full run)
 *   npm run build && npx tsx bench/ingest.ts [--seconds 10] [--batches 100,1000] [--cli other/dist/cli.js] [--settle 100]
 *                                        (on its own; --cli: another build's server, side by side;
 *                                        --settle: after the load, wait until every event is compacted
 *                                        and that many seconds more, and report the merges meanwhile)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { Prng } from '../src/fixtures/prng';
import { gatewayBenchEvent } from '../test/support/gateway-bench-event';
import { serializeEvents } from '../src/ingest/serialize-events';
import { round } from './stats';
import { freePort } from './free-port';
import { peakRssMb } from './serve-process';

const KEY = 'bench-ingest-key';
const DEFAULT_CLI = resolve('dist', 'cli.js');
/** Concurrent connections per batch size: enough requests waiting for group commit to share fsyncs. */
const CONNECTIONS: Record<number, number> = { 100: 32, 1000: 16 };

export interface IngestCase {
  batch: number;
  connections: number;
  /** Events per second acknowledged (200) through HTTP, over the whole run. */
  events_per_s: number;
  /** Requests acknowledged per second and the p99 latency of all requests (ms). */
  requests_per_s: number;
  p99_ms: number;
  non_2xx: number;
  /** The floor: the same stored bytes appended and fdatasync-ed per batch, sequentially. */
  baseline_events_per_s: number;
  bytes_per_event: number;
  /** The server's peak RSS (MiB) over the run: what ingesting at that rate costs in memory. */
  peak_rss_mb: number;
  /** The server's CPU (user + system, every thread) per acknowledged event over the run, µs. */
  cpu_us_per_event: number;
  seconds: number;
  /** With a webhook drain: the events its receiver took by the end of the run (else null). */
  forwarded_events: number | null;
  /** With a webhook drain: seconds after the run until its receiver had every acknowledged event (null: not within a minute). */
  caught_up_s: number | null;
  /** Events compaction's runs wrote and its merges wrote again by the end of the run (`/metrics`; null: a build without the counters). */
  compacted_events: number | null;
  merged_events: number | null;
  /** The dataset's data files per day once the server stopped (most, over the days). */
  files_per_day: number;
  /**
   * With `settle`: after the load, once every event was compacted and `settle` seconds more went
   * by (the merges that wait for compaction to catch up): the seconds until compacted, the server's
   * CPU after the load (µs per acknowledged event), the events merges wrote again over the whole
   * run, and the most files a day held then.
   */
  settled: { compacted_after_s: number | null; cpu_us_per_event: number; merged_events: number | null; files_per_day: number } | null;
}

async function startServer(dataDir: string, port: number, cli: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [cli, 'serve', '--data-dir', dataDir, '--api-key', KEY, '--port', String(port), '--host', '127.0.0.1'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((done, fail) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c;
      if (out.includes('Listening on')) done();
    });
    child.once('exit', (code) => fail(new Error(`serve exited with ${code}`)));
  });
  return child;
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((done) => {
    if (child.exitCode !== null) return done();
    child.once('exit', () => done());
    child.kill('SIGTERM');
  });
}

/** A process's CPU so far (user + system, every thread), µs: fields 14 and 15 of /proc/<pid>/stat, in ticks of 10 ms. */
function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** A counter of the server's `/metrics` (null when it has none). */
async function metricSample(port: number, name: string): Promise<number | null> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { Authorization: `Bearer ${KEY}` } })).text();
  const line = text.split('\n').find((l) => l.startsWith(`log_endpoints_${name} `));
  return line === undefined ? null : Number(line.split(' ')[1]);
}

/** The most data files a day of the gateway's dataset holds (`<dataDir>/<source>/parquet/date=*`). */
function filesPerDay(dataDir: string): number {
  let most = 0;
  for (const source of readdirSync(dataDir, { withFileTypes: true })) {
    const dataset = join(dataDir, source.name, 'parquet');
    if (!source.isDirectory()) continue;
    let days: string[] = [];
    try {
      days = readdirSync(dataset).filter((d) => d.startsWith('date='));
    } catch {
      continue;
    }
    for (const day of days) most = Math.max(most, readdirSync(join(dataset, day)).filter((f) => f.endsWith('.parquet')).length);
  }
  return most;
}

/**
 * Waits until the server has compacted every event (`settled`, at most 15 minutes), then `seconds`
 * more for the merges after it; what it did meanwhile (`IngestCase['settled']`, CPU in µs in all).
 */
async function settle(port: number, pid: number, dataDir: string, seconds: number): Promise<{ compacted_after_s: number | null; cpu: number; merged_events: number | null; files_per_day: number }> {
  const cpuBefore = cpuMicros(pid);
  const started = performance.now();
  let compactedAfter: number | null = null;
  while (performance.now() - started < 900_000) {
    if ((await metricSample(port, 'settled')) === 1) {
      compactedAfter = round((performance.now() - started) / 1000, 1);
      break;
    }
    await new Promise((done) => setTimeout(done, 1000));
  }
  await new Promise((done) => setTimeout(done, seconds * 1000));
  return { compacted_after_s: compactedAfter, cpu: cpuMicros(pid) - cpuBefore, merged_events: await metricSample(port, 'merged_events_total'), files_per_day: filesPerDay(dataDir) };
}

/** A webhook drain's receiver on loopback: answers 200 at once and counts the events it took. */
async function drainReceiver(): Promise<{ url: string; events: () => number; close: () => Promise<void> }> {
  let events = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      events += (JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown[]).length;
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/hook`, events: () => events, close: () => new Promise((done) => server.close(() => done())) };
}

/** Seconds until `events()` reaches `total`, polled every 100 ms; null when `limit` seconds pass first. */
async function catchUp(events: () => number, total: number, limit: number): Promise<number | null> {
  const started = performance.now();
  while (events() < total) {
    if (performance.now() - started > limit * 1000) return null;
    await new Promise((done) => setTimeout(done, 100));
  }
  return round((performance.now() - started) / 1000, 1);
}

/** Makes a webhook drain of every event of the gateway's source, as Studio does (backend, then its rule). */
async function addDrain(port: number, url: string): Promise<void> {
  const call = async (method: string, path: string, body?: object) => {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, { method, headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' }, body: body && JSON.stringify(body) });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return response.json() as Promise<unknown>;
  };
  const drain = (await call('POST', '/api/backends', {
    name: 'bench',
    description: '',
    type: 'webhook',
    config: { url, http: 'http1', gzip: false, headers: {} },
    metadata: { type: 'log-drain' },
  })) as { id: number };
  const sources = (await call('GET', '/api/sources')) as { id: string; name: string }[];
  const gateway = sources.find((s) => s.name === 'cloudflare.logs.prod');
  if (!gateway) throw new Error('no cloudflare.logs.prod source');
  await call('POST', '/api/rules', { backend_id: drain.id, lql_string: '~".*?"', source_id: gateway.id });
}

/** Appends `batch` (the bytes the WAL stores for it) and fdatasyncs, over and over, for `seconds`. */
async function baseline(dir: string, batch: Buffer, events: number, seconds: number): Promise<number> {
  const handle = await open(join(dir, 'baseline.ndjson'), 'w');
  let position = 0;
  let written = 0;
  const started = performance.now();
  try {
    while (performance.now() - started < seconds * 1000) {
      await handle.write(batch, 0, batch.length, position);
      await handle.datasync();
      position += batch.length;
      written += events;
    }
  } finally {
    await handle.close();
  }
  return written / ((performance.now() - started) / 1000);
}

/** Ingest throughput through `serve --data-dir` for each batch size, with the baseline beside it. */
export async function measureIngest(
  seconds: number,
  log: (line: string) => void,
  batches: readonly number[] = [100, 1000],
  options: { drain?: boolean; cli?: string; settle?: number } = {},
): Promise<IngestCase[]> {
  const results: IngestCase[] = [];
  for (const size of batches) {
    const dir = mkdtempSync(join(tmpdir(), 'le-bench-ingest-'));
    try {
      const prng = new Prng(size);
      const events = Array.from({ length: size }, (_, i) => gatewayBenchEvent(prng, i));
      // Every request a body of its own (the first event numbers it): ingest acknowledges a body
      // it stored lately again without storing it (a retry), so one body sent over and over
      // would measure those answers, not ingest.
      const [head, tail] = JSON.stringify({ batch: [{ bench_request: 0, ...events[0] }, ...events.slice(1)] }).split('"bench_request":0') as [string, string];
      let sent = 0;
      const nextBody = () => `${head}"bench_request":${sent++}${tail}`;
      const stored = serializeEvents(events, new Date().toISOString());
      const port = await freePort();
      const child = await startServer(join(dir, 'data'), port, options.cli ?? DEFAULT_CLI);
      const receiver = options.drain ? await drainReceiver() : null;
      let load;
      let rss = NaN;
      let cpu = NaN;
      let forwarded: number | null = null;
      let caughtUp: number | null = null;
      let compacted: number | null = null;
      let merged: number | null = null;
      let after: Awaited<ReturnType<typeof settle>> | null = null;
      try {
        if (receiver) await addDrain(port, receiver.url);
        const cpuBefore = cpuMicros(child.pid!);
        const connections = CONNECTIONS[size] ?? 8;
        load = await autocannon({
          url: `http://127.0.0.1:${port}/api/logs?source_name=cloudflare.logs.prod`,
          method: 'POST',
          headers: { 'X-API-KEY': KEY, 'Content-Type': 'application/json' },
          body: nextBody(),
          requests: [{ setupRequest: (request) => ({ ...request, body: nextBody() }) }],
          connections,
          pipelining: 1,
          duration: seconds,
        });
        rss = peakRssMb(child.pid!);
        cpu = cpuMicros(child.pid!) - cpuBefore;
        compacted = await metricSample(port, 'compacted_events_total');
        merged = await metricSample(port, 'merged_events_total');
        forwarded = receiver?.events() ?? null;
        if (receiver) caughtUp = await catchUp(receiver.events, load['2xx'] * size, 60);
        if (options.settle) after = await settle(port, child.pid!, join(dir, 'data'), options.settle);
      } finally {
        await stop(child);
        await receiver?.close();
      }
      const base = await baseline(dir, stored, size, Math.min(seconds, 5));
      const result: IngestCase = {
        batch: size,
        connections: CONNECTIONS[size] ?? 8,
        // Acknowledged only: a 503 (the WAL full until compaction catches up) stored nothing.
        events_per_s: round((load['2xx'] * size) / load.duration, 0),
        requests_per_s: round(load['2xx'] / load.duration, 0),
        p99_ms: load.latency.p99,
        non_2xx: load.non2xx,
        baseline_events_per_s: round(base, 0),
        bytes_per_event: round(stored.length / size, 0),
        peak_rss_mb: rss,
        cpu_us_per_event: round(cpu / Math.max(1, load['2xx'] * size), 1),
        seconds,
        forwarded_events: forwarded,
        caught_up_s: caughtUp,
        compacted_events: compacted,
        merged_events: merged,
        files_per_day: filesPerDay(join(dir, 'data')),
        settled: after && {
          compacted_after_s: after.compacted_after_s,
          cpu_us_per_event: round(after.cpu / Math.max(1, load['2xx'] * size), 1),
          merged_events: after.merged_events,
          files_per_day: after.files_per_day,
        },
      };
      log(
        `  batches of ${size}${options.drain ? ', webhook drain' : ''}: ${result.events_per_s} events/s (${result.requests_per_s} req/s, p99 ${result.p99_ms} ms, non-2xx ${result.non_2xx}, peak RSS ${result.peak_rss_mb} MiB over ${seconds} s, ${result.cpu_us_per_event} µs of server CPU per event; compacted ${compacted}, merged again ${merged}${compacted && merged !== null ? ` (${round(merged / compacted, 2)} rewrites an event)` : ''}, at most ${result.files_per_day} files a day after${result.settled ? `; all compacted ${result.settled.compacted_after_s} s after the load, then ${options.settle} s: ${result.settled.cpu_us_per_event} µs of CPU per event more, merged again ${result.settled.merged_events} in all (${compacted && result.settled.merged_events !== null ? round(result.settled.merged_events / (load['2xx'] * size), 2) : '-'} rewrites an event), at most ${result.settled.files_per_day} files a day` : ''}); append+fdatasync per batch: ${result.baseline_events_per_s} events/s${forwarded === null ? '' : `; the drain's receiver took ${forwarded} events by the end, all ${result.caught_up_s === null ? 'not within 60' : result.caught_up_s} s after`}`,
      );
      results.push(result);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return results;
}

/** The markdown lines of the ingest results. */
export function ingestMarkdown(results: readonly IngestCase[]): string[] {
  const lines = [
    '| ingest, batch | events/s via HTTP (fsync per group) | req/s | p99 ms | non-2xx | server peak RSS MiB (over the run) | server CPU per event (µs) | append + fdatasync per batch, events/s | bytes/event | rewrites per event by merges | files per day after |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of results) {
    lines.push(
      `| ${r.batch} (${r.connections} connections)${r.forwarded_events === null ? '' : `, webhook drain (its receiver took ${r.forwarded_events} events by the end, all ${r.caught_up_s === null ? 'not within 60' : r.caught_up_s} s after)`} | ${r.events_per_s} | ${r.requests_per_s} | ${r.p99_ms} | ${r.non_2xx} | ${r.peak_rss_mb} (${r.seconds} s) | ${r.cpu_us_per_event} | ${r.baseline_events_per_s} | ${r.bytes_per_event} | ${r.compacted_events && r.merged_events !== null ? round(r.merged_events / r.compacted_events, 2) : '-'} | ${r.files_per_day} |`,
    );
  }
  return lines;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '10' },
      drain: { type: 'boolean', default: false },
      batches: { type: 'string', default: '100,1000' },
      cli: { type: 'string' },
      settle: { type: 'string' },
    },
  });
  const batches = values.batches.split(',').map(Number);
  const results = await measureIngest(Number(values.seconds), (line) => process.stderr.write(`${line}\n`), batches, {
    drain: values.drain,
    cli: values.cli && resolve(values.cli),
    settle: values.settle === undefined ? undefined : Number(values.settle),
  });
  process.stdout.write(`${ingestMarkdown(results).join('\n')}\n`);
}
