import { VARCHAR, type DuckDBConnection } from '@duckdb/node-api';
import { sqlStringList } from '../../duckdb/sql-literal';
import { columnName } from '../../sql/column-name';
import type { Micros } from '../../time/iso';

// A page of a newest-first statement (logs.all) over a day's stored files ran two statements: the
// oldest timestamp of its rows, then the rows cut at it (two-phase-newest.ts). A stored file's rows
// of a project per minute tell a cut that holds at least the page's rows without the first
// statement: the newest whole minutes under the page's upper bound that hold `limit` rows. The
// counts only choose the cut; the page checks its own rows against it (newest-first.ts), so a
// filter the counts know nothing of can cost a statement, never change an answer.

const MINUTE = 60_000_000;
/** A day file's minutes: a file spanning more is not counted (no cut from it). */
const MAX_MINUTES = 1_440;
/** Kept counts at most (each at most 1,440 counts of 4 bytes): past it, every one is dropped. */
const MAX_ENTRIES = 1_000;

/** One file's rows of a project per minute, from the minute `first` on (minutes since the epoch). */
export interface MinuteRows {
  readonly first: number;
  readonly rows: Uint32Array;
}

/** Counts one file's rows of a project per minute (null: it spans more than a day, or cannot be counted). */
export type CountMinutes = (path: string, projectColumn: string, project: string) => Promise<MinuteRows | null>;

/** A stored file's version as its commit records it. */
interface FileVersion {
  readonly path: string;
  readonly size: number;
  readonly crc32?: number;
}

/**
 * The per-project minute counts an engine keeps, by file version (path, size, CRC-32): a stored file
 * never changes under its version. A version is counted on its second page, not its first:
 * counting costs a few times the statement it spares (a day's file of the bench's busiest project:
 * 20 - 30 ms of CPU, once), and a file rewritten between pages (the newest day's, while a writer
 * ingests and compaction runs) is then never counted for one page. A file without a CRC-32 is not
 * counted: counting it on every page would cost more than the statement it spares.
 *
 * @example
 * const counts = new MinuteCounts();
 * const cut = await counts.cut(files, 'project', 'abc', 100, until, after, (path, column, project) => minuteRowsIn(connection, path, column, project));
 */
export class MinuteCounts {
  private readonly kept = new Map<string, MinuteRows | null>();
  /** The versions (and projects) asked once, not counted yet. */
  private readonly asked = new Set<string>();

  /**
   * The cut for a page of `limit` rows of `project` over these files under `until` (inclusive,
   * null for none) and after `after` (exclusive, null for none): see `cutFromCounts`. Null when a
   * file is not counted or the counted minutes hold fewer rows.
   */
  async cut(files: readonly FileVersion[], projectColumn: string, project: string, limit: number, until: Micros | null, after: Micros | null, count: CountMinutes): Promise<bigint | null> {
    if (files.some((f) => f.crc32 === undefined)) return null;
    const keys = files.map((f) => `${f.path}\0${f.size}\0${f.crc32}\0${projectColumn}\0${project}`);
    // The first page of a version only marks it asked.
    const fresh = keys.filter((k) => !this.kept.has(k) && !this.asked.has(k));
    if (fresh.length) {
      if (this.asked.size + fresh.length > MAX_ENTRIES) this.asked.clear();
      for (const k of fresh) this.asked.add(k);
      return null;
    }
    const all: MinuteRows[] = [];
    for (const [i, key] of keys.entries()) {
      let rows = this.kept.get(key);
      if (rows === undefined) {
        rows = await count(files[i]!.path, projectColumn, project);
        if (this.kept.size >= MAX_ENTRIES) this.kept.clear();
        this.kept.set(key, rows);
        this.asked.delete(key);
      }
      if (rows === null) return null;
      all.push(rows);
    }
    return cutFromCounts(all, limit, until, after);
  }
}

/**
 * The start of the newest minute such that the whole minutes from it up to `until` (each minute
 * ending at or before it; every minute when null) hold at least `limit` rows of the counts, all
 * of them after `after` (exclusive; a minute starting at or before it is not counted): every one
 * of the page's `limit` newest rows is then at or after it. Null when no such minute is.
 *
 * @example
 * cutFromCounts([{ first: 10, rows: Uint32Array.of(50, 60, 70) }], 100, null, null); // 660000000n (minute 11: 60 + 70 rows)
 */
export function cutFromCounts(counts: readonly MinuteRows[], limit: number, until: Micros | null, after: Micros | null): bigint | null {
  const held = counts.filter((c) => c.rows.length > 0);
  if (held.length === 0) return null;
  // The newest whole minute ends at or before `until`: minute m ends at (m + 1) * MINUTE - 1.
  const newest = Math.max(...held.map((c) => c.first + c.rows.length - 1));
  const last = until === null ? newest : Math.min(newest, Number(floorDiv(until + 1n, BigInt(MINUTE))) - 1);
  const oldest = Math.min(...held.map((c) => c.first));
  let total = 0;
  for (let minute = last; minute >= oldest; minute--) {
    const start = BigInt(minute) * BigInt(MINUTE);
    if (after !== null && start <= after) return null;
    for (const c of held) total += c.rows[minute - c.first] ?? 0;
    if (total >= limit) return start;
  }
  return null;
}

/** Floor division (towards minus infinity, before 1970 too). */
function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

/**
 * One file's rows of a project per minute of `timestamp`, by DuckDB (the file is sorted by project
 * first: only the project's row groups are read); null when they span more than a day.
 *
 * @example
 * await minuteRowsIn(connection, '/data/edge/date=2026-11-21/part-0.parquet', 'project', 'abc');
 */
export async function minuteRowsIn(connection: DuckDBConnection, path: string, projectColumn: string, project: string): Promise<MinuteRows | null> {
  const sql = `SELECT epoch_us(timestamp) // ${MINUTE} AS minute, count(*) AS n FROM read_parquet(${sqlStringList([path])}) WHERE ${columnName(projectColumn)} = $project AND isfinite(timestamp) GROUP BY 1`;
  const found = (await connection.runAndReadAll(sql, { project }, { project: VARCHAR })).getRows().map(([minute, n]) => [Number(minute), Number(n)] as const);
  if (found.length === 0) return { first: 0, rows: new Uint32Array(0) };
  const first = Math.min(...found.map(([m]) => m));
  const span = Math.max(...found.map(([m]) => m)) - first + 1;
  if (span > MAX_MINUTES) return null;
  const rows = new Uint32Array(span);
  for (const [m, n] of found) rows[m - first] = n;
  return { first, rows };
}
