import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import type { BenchCase } from './cases';
import type { Dataset } from './dataset';
import { percentile, round } from './stats';
import { freePort } from './free-port';
import { BENCH_KEY, peakRssMb, startServe } from './serve-process';

function stop(child: ChildProcess): Promise<void> {
  return new Promise((done) => {
    if (child.exitCode !== null) return done();
    child.once('exit', () => done());
    child.kill('SIGTERM');
  });
}

/** Polls until the server answers the case with 200; bounded to 30 s. */
async function firstAnswer(url: string): Promise<Response> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const response = await fetch(url, { headers: { 'X-API-KEY': BENCH_KEY } });
      if (response.status === 200) return response;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`no answer from ${url} within 30 s`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

function caseUrl(port: number, c: BenchCase): string {
  return `http://127.0.0.1:${port}/api/endpoints/${c.endpoint}?${new URLSearchParams(c.params)}`;
}

async function load(url: string, seconds: number, headers: Record<string, string>) {
  return autocannon({ url, connections: 32, pipelining: 1, duration: seconds, headers });
}

/**
 * Cache-hit throughput through the node adapter (the CLI server) against a bare node:http
 * server that sends the same status, headers and body bytes.
 */
export async function measureHttp(dataset: Dataset, c: BenchCase, seconds: number, log: (line: string) => void) {
  const port = await freePort();
  const { child } = startServe(dataset, port);
  try {
    const url = caseUrl(port, c);
    const first = await firstAnswer(url);
    const body = Buffer.from(await first.arrayBuffer());
    const headers: Record<string, string> = {};
    first.headers.forEach((v, k) => {
      if (!['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length'].includes(k)) headers[k] = v;
    });
    const basePort = await freePort();
    const bare = spawn(
      process.execPath,
      [
        '-e',
        `
      const body = Buffer.from(${JSON.stringify(body.toString('base64'))}, 'base64');
      const headers = ${JSON.stringify(headers)};
      // The least any server of this API does per request: parse the target and its query,
      // check the key header, send the stored bytes. Same URL and headers as the library's load.
      require('node:http').createServer((req, res) => {
        const url = new URL(req.url, 'http://localhost');
        if (req.headers['x-api-key'] !== ${JSON.stringify(BENCH_KEY)} || url.searchParams.size === 0) {
          res.writeHead(401).end();
          return;
        }
        res.writeHead(200, { ...headers, 'content-length': body.length });
        res.end(body);
      }).listen(${basePort}, '127.0.0.1');
    `,
      ],
      { stdio: 'ignore' },
    );
    try {
      const bareUrl = caseUrl(basePort, c);
      await firstAnswer(bareUrl);
      // Both servers in alternating rounds (the order turning each round), so a machine that gets
      // busier slows both alike; medians of the rounds.
      // Requests per second depend on the load generator too, which shares this machine's cores
      // with the server: rounds of the same server differ by up to 15 % here. The server's own CPU
      // time per request (from /proc) is reported beside them: what each server spends on a hit
      // (it too rises when fewer requests arrive per wakeup).
      const libraryRuns: number[] = [],
        bareRuns: number[] = [],
        libraryCpu: number[] = [],
        bareCpu: number[] = [],
        p99s: number[] = [];
      let rss = 0;
      for (let r = 0; r < HTTP_ROUNDS; r++) {
        for (const which of r % 2 === 0 ? ['library', 'bare'] : ['bare', 'library']) {
          if (which === 'library') {
            const before = cpuMs(child.pid!);
            const library = await load(url, seconds, { 'X-API-KEY': BENCH_KEY });
            const us = ((cpuMs(child.pid!) - before) * 1000) / library.requests.total;
            rss = Math.max(rss, peakRssMb(child.pid!));
            libraryRuns.push(library.requests.average);
            libraryCpu.push(us);
            p99s.push(library.latency.p99);
            log(`  library: ${library.requests.average} req/s, ${round(us, 1)} µs of server CPU a request, p99 ${library.latency.p99} ms, non-2xx ${library.non2xx}`);
          } else {
            const before = cpuMs(bare.pid!);
            const baseline = await load(bareUrl, seconds, { 'X-API-KEY': BENCH_KEY });
            const us = ((cpuMs(bare.pid!) - before) * 1000) / baseline.requests.total;
            bareRuns.push(baseline.requests.average);
            bareCpu.push(us);
            log(`  bare node:http: ${baseline.requests.average} req/s, ${round(us, 1)} µs of server CPU a request, p99 ${baseline.latency.p99} ms`);
          }
        }
      }
      return {
        rps: round(percentile(libraryRuns, 0.5), 0),
        baseline_rps: round(percentile(bareRuns, 0.5), 0),
        cpu_us_per_request: round(percentile(libraryCpu, 0.5), 1),
        baseline_cpu_us_per_request: round(percentile(bareCpu, 0.5), 1),
        p99_ms: percentile(p99s, 0.5),
        rss_mb_under_load: rss,
      };
    } finally {
      await stop(bare);
    }
  } finally {
    await stop(child);
  }
}

/** Rounds of the cache-hit comparison, each timing the library's server and the bare one. */
const HTTP_ROUNDS = 5;

/** CPU time a process has used (user and system, Linux `/proc/<pid>/stat`), in ms. */
function cpuMs(pid: number): number {
  // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th, in clock ticks (100 a second).
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * Start-up time (spawn to the first 200 answer of an endpoint), and peak RSS after a burst of
 * uncached logs.all queries: engine memory, beyond what the cache-hit benchmark touches.
 */
export async function measureServer(dataset: Dataset, c: BenchCase, log: (line: string) => void) {
  const port = await freePort();
  const { child, startedAt } = startServe(dataset, port);
  try {
    await firstAnswer(caseUrl(port, c));
    const startup = Number(process.hrtime.bigint() - startedAt) / 1e6;
    // Queries that bypass the cache, to measure memory under engine work too.
    await load(`http://127.0.0.1:${port}/api/endpoints/logs.all?project=${dataset.projects[0]}&project_tier=PRO`, 5, { 'X-API-KEY': BENCH_KEY });
    const rss = peakRssMb(child.pid!);
    log(`  start to first answer ${round(startup, 0)} ms, peak RSS ${rss} MB`);
    return { startup_ms: round(startup, 0), rss_mb_uncached_burst: rss };
  } finally {
    await stop(child);
  }
}
