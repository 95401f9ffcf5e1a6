import type { DuckDBConnection } from '@duckdb/node-api';
import type { CompiledQuery, EngineValue } from '../engine';
import type { SourceDescriptor } from '../../sources/source-descriptor';
import type { MemoryRows, SourceFiles } from '../../duckdb/source-relations';
import type { ListedFile } from '../../files/list-glob';
import { headOf, type ReadSet, type SourceReader } from '../../files/source-reader';
import { partitionDay } from '../../files/file-kinds';
import { HEAD_ROWS_PER_PROJECT } from '../../dataset/newest-heads';
import { BOUND_PARAM, newestInTwoPhases } from './two-phase-newest';
import { UNIT_MICROS } from '../../time/units';
import type { HeadTables, HeldHeads } from './head-tables';
import type { Micros } from '../../time/iso';

type Rows = Record<string, EngineValue>[];

/** What a newest-first query runs with: the engine's statement runners over its connection. */
export interface NewestFirstQuery {
  connection: DuckDBConnection;
  sql: string;
  query: CompiledQuery;
  source: SourceDescriptor;
  read: ReadSet;
  files: SourceFiles;
  /** The statement `sql` over these files. */
  execute(files: SourceFiles): Promise<Rows>;
  /** A full SQL text with the request's parameters (or these). */
  executePrepared(text: string, query: Pick<CompiledQuery, 'params'>): Promise<Rows>;
  /** The full SQL text of a statement over these files. */
  fullSql(statement: string, files: SourceFiles): string;
  heads: HeadTables;
  /** Checks the bytes of what a day reads against its commits (a damaged file is left out, named). */
  reader: Pick<SourceReader, 'verifyRows' | 'verifyCompanions'>;
  /** The files of `read` listed again (after a damaged one was left out). */
  relisted(): Promise<SourceFiles>;
  /**
   * A cut (microseconds) at or before the page's `limit` newest rows of these stored files under
   * `until`, from their rows per minute (minute-counts.ts), or null.
   */
  cut?(files: readonly ListedFile[], limit: number, until: Micros | null): Promise<bigint | null>;
}

const DAY_MICROS = BigInt(UNIT_MICROS.day);

function dayStartMicros(day: string): bigint {
  return BigInt(Date.parse(`${day}T00:00:00Z`)) * 1000n;
}

/**
 * Whether a day's heads (each project's newest HEAD_ROWS_PER_PROJECT rows of each file) hold its
 * files' newest `limit` rows under an upper bound (`untilMicros`, null for none): the limit is
 * within a head's rows, and no bound cuts into the day (the newest rows of a file at or before the
 * bound are then its newest rows).
 *
 * @example
 * headsServe('2026-11-21', 100, null); // true
 */
export function headsServe(day: string, limit: number, untilMicros: Micros | null): boolean {
  return limit <= HEAD_ROWS_PER_PROJECT && (untilMicros === null || untilMicros >= dayStartMicros(day) + DAY_MICROS);
}

/**
 * The events held in memory that a newest-first page reads: none when its inclusive upper bound
 * is before the oldest of them (a page three days back reads no event ingested now, yet planned
 * and read all of them: docs/performance.md, "Memory left out of pages before it"); each
 * project's newest of them (`newest`) without an upper bound when the page's filter and limit let
 * heads serve it (`headsServe`), as a file's head does for its file; else all of them.
 *
 * @example
 * pageMemory({ rows: 'SELECT ...', typedFields: [], oldest: 10n }, undefined, true, 9n); // undefined
 */
export function pageMemory(all: MemoryRows | undefined, newest: MemoryRows | undefined, headsServe: boolean, untilMicros: Micros | null): MemoryRows | undefined {
  if (all?.oldest !== undefined && untilMicros !== null && untilMicros < all.oldest) return undefined;
  return headsServe && untilMicros === null && newest !== undefined ? newest : all;
}

/** A day's files, and whether the page reads their heads instead of them. */
interface DayRead {
  day: string;
  files: ListedFile[];
  heads: boolean;
}

/**
 * A newest-first top-N (logs.all) over a compacted dataset, by UTC day: the newest day with the
 * NDJSON and the events in memory first, then older days only while they can still hold one of
 * the N newest rows. Every row of a day is older than the next day's start, so once the N-th row
 * so far is at or after a day's end, that day and all older ones are skipped; the older days that
 * are left are read in one statement over their heads. A query reads about one day's data, and at
 * most one more statement, however many days the window (90 for PAYG) and the dataset hold. A
 * day's heads are read from one table in memory (head-tables.ts) when they fit.
 */
export async function newestFirst(q: NewestFirstQuery): Promise<Rows> {
  const { query, read, files } = q;
  const order = query.newestFirst!;
  const limit = Number(query.params[order.limit]);
  const days = new Map<string, ListedFile[]>();
  for (const file of read.parquet) {
    const day = file.dataset ? partitionDay(file.path) : null;
    // Files of unknown day (or schema: not from a dataset) are read in one query, as usual: their
    // data files' rows are checked first (a damaged one is left out, named, and the files listed again).
    if (day === null) return q.execute((await q.reader.verifyRows(read)) ? await q.relisted() : files);
    days.set(day, [...(days.get(day) ?? []), file]);
  }
  const until = query.params[order.until];
  const untilMicros = until && typeof until === 'object' ? until.timestamp : null;
  // Newest first; days that start after the upper bound hold nothing to return.
  const ordered = [...days.keys()]
    .sort()
    .reverse()
    .filter((day) => untilMicros === null || dayStartMicros(day) <= untilMicros);
  /**
   * A day's files, or their heads (each project's newest rows of each file) when they are enough:
   * the statement's filter reads only the project and time bounds (`NewestFirst.heads`), every
   * file has one, it holds at least `limit` rows per project, and no upper bound cuts into the day
   * (the newest rows of a file at or before the bound are then its newest rows).
   */
  const dayRead = async (day: string): Promise<DayRead> => {
    // What a day reads is checked against its commits as it is reached: its heads (a damaged one
    // is dropped, its data file read instead), else its data files (a damaged one left out, named).
    const wanted = order.heads === true && headsServe(day, limit, untilMicros);
    if (wanted && days.get(day)!.every((f) => f.head)) await q.reader.verifyCompanions(read, { heads: true, files: days.get(day) });
    const heads = wanted && days.get(day)!.every((f) => f.head);
    if (!heads && (await q.reader.verifyRows(read, days.get(day))))
      days.set(
        day,
        days.get(day)!.filter((f) => read.parquet.includes(f)),
      );
    const list = days.get(day)!;
    return { day, files: heads ? list.map((f) => headOf(f)!) : list, heads };
  };
  const memory = pageMemory(files.memory, read.memoryNewest, order.heads === true && limit <= HEAD_ROWS_PER_PROJECT, untilMicros);
  let rows = await readDays(q, ordered.length ? [await dayRead(ordered[0]!)] : [], true, memory);
  // Older days that can still hold one of the N newest rows: once the N-th row so far is at or
  // after a day's end, that day and every older one cannot.
  const older = ordered.slice(1);
  const stop = older.findIndex((day) => {
    const nth = rows[limit - 1];
    return nth !== undefined && BigInt(nth.timestamp as bigint) >= dayStartMicros(day) + DAY_MICROS;
  });
  const open: DayRead[] = [];
  for (const day of stop === -1 ? older : older.slice(0, stop)) open.push(await dayRead(day));
  // Those with heads in one statement over all their heads: each holds every project's newest
  // rows of its file, so the newest of all of them are among their heads. One statement instead
  // of one per day: a project with few rows pages through a 90-day window in one read, not 90
  // (nine days of the bench's data, a project with none: 20-31 ms became 6-12 ms under load).
  const withHeads = open.filter((day) => day.heads);
  if (withHeads.length) rows = newestFirstMerge(rows, await readDays(q, withHeads, false), limit);
  // The others (files without heads) one day at a time, newest first, as long as they can matter.
  for (const day of open.filter((d) => !d.heads)) {
    const nth = rows[limit - 1];
    if (nth && BigInt(nth.timestamp as bigint) >= dayStartMicros(day.day) + DAY_MICROS) break;
    rows = newestFirstMerge(rows, await readDays(q, [day], false), limit);
  }
  return rows;
}

/**
 * The newest rows of some days (all read by heads, or one day read by its files) in one statement,
 * with the NDJSON (parsed once, not twice) and `memory` when `first`. A day's heads come from its
 * table in memory when it fits (else from the head files); a day's data files that an upper bound
 * cuts into are read in two phases (two-phase-newest.ts).
 */
async function readDays(q: NewestFirstQuery, days: readonly DayRead[], first: boolean, memory?: MemoryRows): Promise<Rows> {
  const held: HeldHeads[] = [];
  try {
    const parquet: string[] = [];
    for (const day of days) {
      const table = day.heads ? await q.heads.hold(q.connection, q.source, day.day, day.files, q.files.parquetTypes) : null;
      if (table) held.push(table);
      else parquet.push(...day.files.map((f) => f.path));
    }
    const set: SourceFiles = {
      ndjson: first ? q.files.ndjson : [],
      parquet,
      parquetTypes: q.files.parquetTypes,
      ...(q.files.typedFields ? { typedFields: q.files.typedFields } : {}),
      ...(q.files.arraysFree ? { arraysFree: q.files.arraysFree } : {}),
      ...(held.length ? { held: held.map((h) => h.select) } : {}),
      ...(first && memory ? { memory } : {}),
    };
    if (days.some((d) => d.heads) || set.ndjson.length || !set.parquet.length) return await q.execute(set);
    const order = q.query.newestFirst!;
    // The stored files' rows per minute may tell a cut without the first phase's statement: the
    // page over the rows at or after it is the page when it is full and its oldest row is at or
    // after the cut (every row left out is older than all of its rows). Else the two phases.
    const until = q.query.params[order.until];
    const cut =
      q.cut && order.heads === true
        ? await q.cut(
            days.flatMap((d) => d.files),
            Number(q.query.params[order.limit]),
            until && typeof until === 'object' ? until.timestamp : null,
          )
        : null;
    if (cut !== null) {
      // The second phase's text, bound to the cut (the same prepared statement).
      const rows = await q.executePrepared(q.fullSql(q.sql, { ...set, where: `timestamp >= $${BOUND_PARAM}` }), { params: { ...q.query.params, [BOUND_PARAM]: { timestamp: cut } } });
      if (pageWithin(rows, Number(q.query.params[order.limit]), cut)) return rows;
    }
    return await newestInTwoPhases(
      q.sql,
      q.query.newestFirst!.limit,
      (text, cut) => q.fullSql(text, cut ? { ...set, where: `timestamp >= $${BOUND_PARAM}` } : set),
      (text, bound) => q.executePrepared(text, bound === null ? q.query : { params: { ...q.query.params, [BOUND_PARAM]: { timestamp: bound } } }),
    );
  } finally {
    for (const h of held) h.release();
  }
}

/**
 * Whether a newest-first page read over the rows at or after a cut is the page over all of them:
 * it holds `limit` rows and the oldest is at or after the cut, so each row the cut left out is
 * older than every row of it.
 *
 * @example
 * pageWithin([{ timestamp: 20n }, { timestamp: 10n }], 2, 10n); // true
 */
export function pageWithin(rows: Rows, limit: number, cut: bigint): boolean {
  const oldest = rows[limit - 1];
  return rows.length === limit && oldest !== undefined && oldest.timestamp !== null && BigInt(oldest.timestamp as bigint) >= cut;
}

/** The N first of two newest-first row lists, in the queries' own order (ids compared as UTF-8 bytes, as DuckDB does). */
export function newestFirstMerge(a: Rows, b: Rows, limit: number): Rows {
  const out: Rows = [];
  let i = 0;
  let j = 0;
  while (out.length < limit && (i < a.length || j < b.length)) {
    if (j >= b.length || (i < a.length && newestFirstOrder(a[i]!, b[j]!) <= 0)) out.push(a[i++]!);
    else out.push(b[j++]!);
  }
  return out;
}

function newestFirstOrder(x: Record<string, EngineValue>, y: Record<string, EngineValue>): number {
  const tx = BigInt(x.timestamp as bigint);
  const ty = BigInt(y.timestamp as bigint);
  if (tx !== ty) return tx > ty ? -1 : 1;
  if (x.id === null || x.id === undefined) return y.id === null || y.id === undefined ? 0 : 1;
  if (y.id === null || y.id === undefined) return -1;
  return Buffer.compare(Buffer.from(String(x.id)), Buffer.from(String(y.id)));
}
