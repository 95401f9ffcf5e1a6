import type { EngineResult } from '../engine';
import type { ReadSet } from '../../files/source-reader';
import { partitionDay } from '../../files/file-kinds';

type Answer = Pick<EngineResult, 'rows' | 'columns'>;

/**
 * A caller's SELECT whose answer is any `limit` rows that pass its filter (`firstRows`, found when
 * it was checked: src/query/first-rows.ts), over one source's read, by UTC day, newest first: the
 * two newest days' Parquet files (a list of the last hours crosses midnight) with what is not
 * compacted yet (the write-ahead log, the memory tables), then, while fewer than `limit` rows are
 * found, the two days before, then four, eight, ... (a statement per step: a week takes at most
 * 3, a 90-day window 7). Each part's rows are rows of the whole, so the answer is one the whole
 * read could give; Studio's single log (an id of the list it showed, `limit 1`) reads two days'
 * files instead of every day's. `run(part)` answers the SELECT over a part of the read; a read
 * whose Parquet files are not all in day partitions is answered whole.
 *
 * @example
 * const answer = await firstRowsByDay(read, 1, 1000, (part) => runOver(part));
 */
export async function firstRowsByDay(read: ReadSet, limit: number, maxRows: number, run: (part: ReadSet) => Promise<Answer>): Promise<Answer> {
  const dayOf = new Map(read.parquet.map((f) => [f, f.dataset ? partitionDay(f.path) : null]));
  if ([...dayOf.values()].some((d) => d === null)) return run(read);
  const days = [...new Set(dayOf.values())].sort().reverse() as string[];
  if (days.length < 3) return run(read);
  const wanted = Math.min(limit, maxRows);
  // What is not compacted yet is read with the newest days, once.
  const { memory: _memory, memoryNewest: _newest, ...compacted } = read;
  // The two newest days first: a list of the last hours crosses midnight.
  const newest = new Set(days.slice(0, 2));
  const answer = await run({ ...read, parquet: read.parquet.filter((f) => newest.has(dayOf.get(f)!)) });
  const rows = [...answer.rows];
  for (let from = 2, size = 2; from < days.length && rows.length < wanted; from += size, size *= 2) {
    const step = new Set(days.slice(from, from + size));
    rows.push(...(await run({ ...compacted, ndjson: [], ranges: [], parquet: read.parquet.filter((f) => step.has(dayOf.get(f)!)) })).rows);
  }
  return { ...answer, rows: rows.slice(0, wanted) };
}
