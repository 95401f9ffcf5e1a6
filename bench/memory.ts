import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Dataset } from './dataset';
import { round } from './stats';
import { freePort } from './free-port';
import { BENCH_KEY, startServe } from './serve-process';

/** What a burst of uncached queries did to the serving process's memory. */
export interface BurstResult {
  /** The server's --memory-limit (the process's budget), in MB (10^6 bytes). */
  memory_limit_mb: number;
  requests: number;
  /** Answers by status and reason (`200`, `503 queue full`, `503 out of memory`, ...). */
  statuses: Record<string, number>;
  /** RSS once serving, before the burst. */
  rss_mb_before: number;
  /** Peak RSS of the process (VmHWM), the target's measure: at most the budget + 10 %. */
  rss_mb_peak: number;
  /** RSS one second after the last answer: what stays. */
  rss_mb_after: number;
  /** Time from the first request to the last answer. */
  burst_ms: number;
}

/** Why a query was refused: the queue was full, or DuckDB ran out of its memory limit. */
function kindOf(body: string): string {
  const message = String((JSON.parse(body) as { error?: { message?: string } }).error?.message);
  if (/out of memory/i.test(message)) return 'out of memory';
  if (/waiting/i.test(message)) return 'queue full';
  return message;
}

function statusMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return round(Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) / 1024, 1);
}

async function untilHealthy(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/health`)).status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error('the server did not answer /health within 60 s');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * The real CLI server on the compacted Parquet with `--memory-limit`, hit by `requests` uncached
 * logs.all queries sent at once (PRO tier, every project in turn, so no two share an answer).
 * Reports the process's peak RSS against the limit: the memory DuckDB's limit does not govern
 * (result materialisation, threads, allocator caches, queued requests) shows as the difference.
 */
export async function measureBurst(
  dataset: Dataset,
  log: (line: string) => void,
  options: { requests?: number; memoryLimit?: string; serveArgs?: string[]; env?: Record<string, string> } = {},
): Promise<BurstResult> {
  const requests = options.requests ?? 200;
  const memoryLimit = options.memoryLimit ?? '512MB';
  const port = await freePort();
  const { child } = startServe(dataset, port, { memoryLimit, serveArgs: options.serveArgs, env: options.env });
  const url = `http://127.0.0.1:${port}`;
  try {
    await untilHealthy(url, child);
    const before = statusMb(child.pid!, 'VmRSS');
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: requests }, (_, i) => {
        const project = dataset.projects[i % dataset.projects.length]!;
        return fetch(`${url}/api/endpoints/logs.all?project=${project}&project_tier=PRO`, { headers: { 'X-API-KEY': BENCH_KEY } }).then(
          async (r) => (r.status === 200 ? (await r.arrayBuffer(), '200') : `${r.status} ${kindOf(await r.text())}`),
          () => 'connection error',
        );
      }),
    );
    const burstMs = performance.now() - started;
    const peak = statusMb(child.pid!, 'VmHWM');
    await new Promise((r) => setTimeout(r, 1000));
    const after = statusMb(child.pid!, 'VmRSS');
    const statuses: Record<string, number> = {};
    for (const status of answers) statuses[status] = (statuses[status] ?? 0) + 1;
    const limitMb = Number(/^\d+/.exec(memoryLimit)?.[0]);
    log(
      `  burst of ${requests} uncached logs.all (memory limit ${memoryLimit}): peak RSS ${peak} MiB, ${after} MiB after, ${before} MiB before; ${JSON.stringify(statuses)} in ${round(burstMs, 0)} ms`,
    );
    return { memory_limit_mb: limitMb, requests, statuses, rss_mb_before: before, rss_mb_peak: peak, rss_mb_after: after, burst_ms: round(burstMs, 0) };
  } finally {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
  }
}
