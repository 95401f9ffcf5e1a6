import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { REFERENCE, type Dataset } from './dataset';

/** The API key every benchmark server is started with. */
export const BENCH_KEY = 'bench-key';

/**
 * Starts the real CLI server (the built one, as users run it) on the compacted Parquet, with the
 * benchmark's clock and a memory budget (default 640MB: its queries' share is the 256MB DuckDB
 * limit the earlier rounds ran under, so speed stays comparable); `startedAt` is taken just before the spawn.
 */
export function startServe(dataset: Dataset, port: number, options: { memoryLimit?: string; serveArgs?: string[]; env?: Record<string, string> } = {}): { child: ChildProcess; startedAt: bigint } {
  const startedAt = process.hrtime.bigint();
  const child = spawn(
    process.execPath,
    [
      resolve('dist', 'cli.js'),
      'serve',
      '--edge-logs',
      dataset.parquet.edgeLogs,
      '--function-logs',
      dataset.parquet.functionEdgeLogs,
      '--port',
      String(port),
      '--host',
      '127.0.0.1',
      '--api-key',
      BENCH_KEY,
      '--now',
      REFERENCE.toISOString(),
      '--memory-limit',
      options.memoryLimit ?? '640MB',
      ...(options.serveArgs ?? []),
    ],
    { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, ...options.env } },
  );
  return { child, startedAt };
}

/**
 * Starts a new peak for `peakRssMb` (Linux: writing 5 to clear_refs sets VmHWM to the present
 * RSS), so a phase of a process that ran others before reports its own peak.
 */
export function resetPeakRss(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

/** Peak resident set size of a live process (Linux VmHWM), in MB (MiB: kB / 1024). */
export function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? NaN);
  return Math.round((kb / 1024) * 10) / 10;
}
