/** Timing helpers of the benchmark: wall-clock milliseconds, percentiles and the machine's load. */
import { loadavg } from 'node:os';

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

/** The machine's load average (1, 5 and 15 min) as text, one decimal each: `0.9 1.3 2.0`. */
export function loadAverage(): string {
  return loadavg()
    .map((n) => n.toFixed(1))
    .join(' ');
}

/** The machine's load average (1, 5 and 15 min), each rounded to one decimal, for JSON: `[0.9, 1.3, 2]`. */
export function loadAverages(): number[] {
  return loadavg().map((l) => round(l, 1));
}

/**
 * Calls each of `names` `runs` times a round for `rounds` rounds, the order rotating round by
 * round so that a machine getting busier weighs on each alike; the wall and process CPU ms of
 * every call, per name.
 *
 * @example
 * const { before, after } = await rotatingRounds(['before', 'after'], 10, 20, (name) => call(builds[name]));
 */
export async function rotatingRounds<N extends string>(names: readonly N[], rounds: number, runs: number, call: (name: N) => Promise<unknown>): Promise<Record<N, { wall: number[]; cpu: number[] }>> {
  const times = Object.fromEntries(names.map((name) => [name, { wall: [] as number[], cpu: [] as number[] }])) as Record<N, { wall: number[]; cpu: number[] }>;
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(r + k) % names.length]!;
      for (let i = 0; i < runs; i++) {
        const started = process.hrtime.bigint();
        const used = process.cpuUsage();
        await call(name);
        const spent = process.cpuUsage(used);
        times[name].wall.push(Number(process.hrtime.bigint() - started) / 1e6);
        times[name].cpu.push((spent.user + spent.system) / 1000);
      }
    }
  }
  return times;
}

/**
 * The builds' answers to a case; throws unless each is the first one's (`same` decides, text equality
 * by default): asked before the timed calls and again after them, so a build that answers
 * differently once warm (a memo, a kept statement) is not timed as if it were right.
 *
 * @example
 * await sameAnswers(c.name, 'before timing', () => Promise.all(builds.map(async (ep) => text((await call(ep)).result))));
 */
export async function sameAnswers(caseName: string, when: string, answers: () => Promise<string[]>, same: (a: string, b: string) => boolean = (a, b) => a === b): Promise<string[]> {
  const all = await answers();
  const [first, ...rest] = all;
  if (rest.some((other) => !same(first!, other))) throw new Error(`${caseName}: the answers differ ${when}`);
  return all;
}
