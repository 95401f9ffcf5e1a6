import type { EngineResult } from '../engine';
import type { ReadSet } from '../../files/source-reader';
import { partitionDay } from '../../files/file-kinds';

type Answer = Pick<EngineResult, 'rows' | 'columns'>;

/**
 * A caller's SELECT whose answer is any `limit` rows that pass its filter (`firstRows`, found when
 * it was checked: src/query/first-rows.ts), over one source's read, by UTC day, newest first: the
 * newest day's Parquet files with what is not compacted yet (the write-ahead log, the memory
 * tables), then, while fewer than `limit` rows are found, the day before, the two days before
 * that, then four, ... (a statement per step: a 90-day window takes at most 8). Each part's rows
 * are rows of the whole, so the answer is one the whole read could give; Studio's single log (an
 * id of the last day, `limit 1`) reads one or two days' files instead of every day's.
 * `run(part)` answers the SELECT over a part of the read; a read whose Parquet files are not all
 * in day partitions is answered whole.
 *
 * @example
 * const answer = await firstRowsByDay(read, 1, 1000, (part) => runOver(part));
 */
export async function firstRowsByDay(read: ReadSet, limit: number, maxRows: number, run: (part: ReadSet) => Promise<Answer>): Promise<Answer> {
  const dayOf = new Map(read.parquet.map((f) => [f, f.dataset ? partitionDay(f.path) : null]));
  if ([...dayOf.values()].some((d) => d === null)) return run(read);
  const days = [...new Set(dayOf.values())].sort().reverse() as string[];
  if (days.length < 2) return run(read);
  const wanted = Math.min(limit, maxRows);
  // What is not compacted yet is read with the newest day, once.
  const { memory: _memory, memoryNewest: _newest, ...compacted } = read;
  const first = read.parquet.filter((f) => dayOf.get(f) === days[0]);
  const answer = await run({ ...read, parquet: first });
  const rows = [...answer.rows];
  for (let from = 1, size = 1; from < days.length && rows.length < wanted; from += size, size *= 2) {
    const step = new Set(days.slice(from, from + size));
    rows.push(...(await run({ ...compacted, ndjson: [], ranges: [], parquet: read.parquet.filter((f) => step.has(dayOf.get(f)!)) })).rows);
  }
  return { ...answer, rows: rows.slice(0, wanted) };
}
