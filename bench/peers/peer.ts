import { join } from 'node:path';
import type { BenchCase } from '../cases';
import type { Dataset } from '../dataset';

/** An answer row in the library's shape: ISO timestamps, metadata as an object, numbers as numbers. */
export type AnswerRow = Record<string, unknown>;

/**
 * Another engine answering the bench's cases over the same events, the way an expert of that
 * engine would store and query them. `run` is what is timed: one case, its rows back in the
 * library's shape (so answers can be compared before any timing).
 */
export interface Peer {
  /** The variant name in the table and the JSON (`chdb`, `clickhouse-18.16`, `postgres-logflare-layout`). */
  readonly name: string;
  run(c: BenchCase): Promise<AnswerRow[]>;
  close(): Promise<void>;
}

/** The compacted data files of a dataset, as a glob that leaves every companion file out. */
export function dataFilesGlob(dataset: Dataset, source: 'edge' | 'functions'): string {
  return join(dataset.dir, 'parquet', source, 'date=*', 'part-*.parquet');
}
