import { vi } from 'vitest';
import { SourceInputs } from '../../src/engine/duckdb/source-inputs';

/**
 * Runs `call` while recording the Parquet files of every set the engine made ready for DuckDB
 * (`SourceInputs.sourceFiles`): the first set is the whole read's, the last the statement's. What
 * tests of the heads and hour counts read to tell which files a request took its rows from.
 *
 * @example
 * const { result, reads } = await withParquetReads(() => ep.query('logs.all', { project: 'p' }, { sql }));
 * reads.at(-1)!.some((path) => path.includes('/_heads/')); // the statement read a head
 */
export async function withParquetReads<T>(call: () => Promise<T>): Promise<{ result: T; reads: string[][] }> {
  const reads: string[][] = [];
  const original = SourceInputs.prototype.sourceFiles;
  const spy = vi.spyOn(SourceInputs.prototype, 'sourceFiles').mockImplementation(function (this: SourceInputs, ...args: Parameters<SourceInputs['sourceFiles']>) {
    reads.push(args[1].parquet.map((f) => f.path));
    return original.apply(this, args);
  });
  try {
    return { result: await call(), reads };
  } finally {
    spy.mockRestore();
  }
}
