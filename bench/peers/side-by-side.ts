import type { SourceGlobs } from '../../src/index';
import type { BenchCase } from '../cases';
import type { Dataset } from '../dataset';
import type { LibraryProcess } from '../library-process';
import { timeMs } from '../stats';
import { assertSameAnswer } from './compare-answers';
import type { Peer } from './peer';

/**
 * The library (warm, caching off, in its own process) and each peer on one case, engines
 * interleaved in the same rounds (each round times every engine once, the order rotating), so a
 * machine that gets busier during the run slows all of them alike. Answers are compared first
 * (assertSameAnswer). Returns the warm samples per variant, the library's under `library-parquet`.
 *
 * `unchecked`: runners timed in the same rounds whose answers are not the library's shape (bare
 * DuckDB running the library's SQL: its rows as DuckDB gives them), so a ratio to the library
 * compares times taken alike rather than one loop's against another's.
 */
export async function measureSideBySide(
  dataset: Dataset,
  library: LibraryProcess,
  sources: SourceGlobs,
  c: BenchCase,
  peers: readonly Peer[],
  runs: number,
  unchecked: ReadonlyArray<{ name: string; run: () => Promise<void> }> = [],
): Promise<Record<string, number[]>> {
  await library.open(sources);
  try {
    // Each runner gives its own time: the library's is taken in its process, the others' here.
    const runners: Array<{ name: string; run: () => Promise<number> }> = [
      { name: 'library-parquet', run: async () => (await library.query(c)).ms },
      ...peers.map((p) => ({ name: p.name, run: () => timeMs(() => p.run(c)) })),
      ...unchecked.map((u) => ({ name: u.name, run: () => timeMs(u.run) })),
    ];
    // The first run of each is its warm-up, and the answers compared.
    const expected = (await library.query(c, true)).rows;
    for (const peer of peers) await assertSameAnswer(dataset, c, peer.name, expected, await peer.run(c));
    for (const u of unchecked) await u.run();
    const samples: Record<string, number[]> = Object.fromEntries(runners.map((r) => [r.name, []]));
    for (let i = 0; i < runs; i++) {
      for (let k = 0; k < runners.length; k++) {
        const r = runners[(i + k) % runners.length]!;
        samples[r.name]!.push(await r.run());
      }
    }
    return samples;
  } finally {
    await library.close();
  }
}
