/** Timing helpers of the benchmark: wall-clock milliseconds and percentiles. */

export async function timeMs(work: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** Nearest-rank percentile of a sample. */
export function percentile(sample: readonly number[], q: number): number {
  const sorted = [...sample].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[rank - 1] ?? NaN;
}

export interface Timing {
  p50_ms: number;
  p95_ms: number;
  runs: number;
}

export function summarize(sample: readonly number[]): Timing {
  return { p50_ms: round(percentile(sample, 0.5)), p95_ms: round(percentile(sample, 0.95)), runs: sample.length };
}

export const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;
