import { SourceReader } from '../../files/source-reader';
import { formatIsoMicros, type Micros } from '../../time/iso';

/** The UTC day (`YYYY-MM-DD`) of a query's earliest instant: partitions before it hold no answer. */
export function earliestDayOf(notBefore: Micros | undefined): string | null {
  return notBefore === undefined ? null : formatIsoMicros(notBefore).slice(0, 10);
}

/**
 * The Parquet files a query of these globs reads now (datasets through their logs, day partitions
 * before `earliestDay` left out), newest partition first: what the benchmark's bare runs read.
 */
export async function parquetFilesOf(globs: readonly string[], earliestDay: string | null = null): Promise<string[]> {
  const read = await new SourceReader(globs).snapshot(earliestDay);
  return read.parquet.map((f) => f.path);
}
