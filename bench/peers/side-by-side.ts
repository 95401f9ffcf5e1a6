import { createEndpoints, type SourceGlobs } from '../../src/index';
import type { BenchCase } from '../cases';
import { REFERENCE, type Dataset } from '../dataset';
import { timeMs } from '../stats';
import { assertSameAnswer } from './compare-answers';
import type { AnswerRow, Peer } from './peer';

/**
 * The library (warm, caching off) and each peer on one case, engines interleaved in the same
 * rounds (each round times every engine once, the order rotating), so a machine that gets busier
 * during the run slows all of them alike. Answers are compared first (assertSameAnswer).
 * Returns the warm samples per variant, the library's under `library-parquet`.
 */
export async function measureSideBySide(dataset: Dataset, sources: SourceGlobs, c: BenchCase, peers: readonly Peer[], runs: number): Promise<Record<string, number[]>> {
  const ep = await createEndpoints({ sources, now: () => REFERENCE, cache: false, duckdb: { threads: 2 }, limits: { queryTimeoutMs: 600_000 } });
  try {
    const library = async () => (await ep.query(c.endpoint as string, c.params)).result as AnswerRow[];
    const runners: Array<{ name: string; run: () => Promise<unknown> }> = [{ name: 'library-parquet', run: library }, ...peers.map((p) => ({ name: p.name, run: () => p.run(c) }))];
    // The first run of each is its warm-up, and the answers compared.
    const expected = await library();
    for (const peer of peers) await assertSameAnswer(dataset, c, peer.name, expected, await peer.run(c));
    const samples: Record<string, number[]> = Object.fromEntries(runners.map((r) => [r.name, []]));
    for (let i = 0; i < runs; i++) {
      for (let k = 0; k < runners.length; k++) {
        const r = runners[(i + k) % runners.length]!;
        samples[r.name]!.push(await timeMs(r.run));
      }
    }
    return samples;
  } finally {
    await ep.close();
  }
}
