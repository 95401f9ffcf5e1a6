import { VARCHAR, type DuckDBConnection } from '@duckdb/node-api';
import { sqlStringList } from '../../duckdb/sql-literal';
import { columnName } from '../../sql/column-name';
import type { ReadSet } from '../../files/source-reader';
import type { SourceDescriptor } from '../../sources/source-descriptor';
import type { Micros } from '../../time/iso';
import type { VariantCost } from '../engine';

// A variant with `cheaperWhen` (docs/definitions.md, "Variants") runs only where the project's
// events the base statement would read outnumber what the variant reads by its declared margin:
// both counted per project and hour in the stored files of the call, once per file version, then
// summed from the call's first hour on. A stored file never changes under its path, size and CRC-32
// as its commit records them; the choice changes no answer beyond the variant's own bound, only
// which of two statements the contract allows runs.

/** One file's rows of one project, per hour (microseconds since the epoch of the hour's start). */
type HourRows = ReadonlyMap<number, number>;

/** Counts one file's rows of a project per hour: `time` its timestamp column. */
export type CountHours = (path: string, projectColumn: string, time: string, project: string) => Promise<HourRows>;

/** Kept counts at most: past it, every one is dropped (compaction replaces files, callers name any project). */
const MAX_ENTRIES = 20_000;

/**
 * The per-project hour counts an engine keeps, by file version.
 *
 * @example
 * const costs = new VariantCosts();
 * const pays = await costs.pays(HOURLY_PAYS, functionEdgeLogs, read, 'abc', first, (path, column, time, project) => hourRowsIn(connection, path, column, time, project));
 */
export class VariantCosts {
  private readonly kept = new Map<string, HourRows>();

  /**
   * Whether the variant pays for this read: the project's events in its Parquet files from
   * `from` on exceed `cost.events` plus each named rollup's rows of the project from `from` on
   * times its weight. False where it cannot tell (a file without the rollup, no project bound).
   */
  async pays(cost: VariantCost, source: SourceDescriptor, read: ReadSet, project: unknown, from: Micros | undefined, count: CountHours): Promise<boolean> {
    if (typeof project !== 'string' || read.parquet.length === 0) return false;
    const since = from === undefined ? Number.NEGATIVE_INFINITY : Number(from);
    let events = 0;
    let variant = cost.events;
    for (const file of read.parquet) {
      events += sum(await this.hours(file, source.projectColumn, 'timestamp', project, count), since);
      for (const [name, { weight, time }] of Object.entries(cost.rollupRows)) {
        const stored = file.rollups?.[name];
        if (stored === undefined) return false;
        variant += weight * sum(await this.hours(stored, source.projectColumn, time, project, count), since);
      }
    }
    return variant < events;
  }

  /**
   * One file version's counts for a project: kept, or counted and kept. A file its commit gives no
   * CRC-32 (an older log) is counted every time: its path and size alone do not tell its versions
   * apart, as the trigram maps' kept origins do not (narrowed-rollups.ts).
   */
  private async hours(file: { path: string; size?: number; bytes?: number; crc32?: number }, column: string, time: string, project: string, count: CountHours): Promise<HourRows> {
    if (file.crc32 === undefined) return count(file.path, column, time, project);
    const key = `${file.path}\0${file.size ?? file.bytes}\0${file.crc32}\0${time}\0${project}`;
    const known = this.kept.get(key);
    if (known !== undefined) return known;
    const rows = await count(file.path, column, time, project);
    if (this.kept.size >= MAX_ENTRIES) this.kept.clear();
    this.kept.set(key, rows);
    return rows;
  }
}

/** The rows of the hours that end after `since` (an hour holding `since` counts whole). */
function sum(hours: HourRows, since: number): number {
  let total = 0;
  for (const [hour, rows] of hours) if (hour + 3_600_000_000 > since) total += rows;
  return total;
}

/**
 * One file's rows of a project per hour, by DuckDB (the file is sorted by project first: only the
 * project's row groups are read).
 *
 * @example
 * await hourRowsIn(connection, '/data/_rollups/function_edge_logs_summary/date=2026-11-21/part-0.parquet', 'project_ref', 'hour', 'abc');
 */
export async function hourRowsIn(connection: DuckDBConnection, path: string, projectColumn: string, time: string, project: string): Promise<HourRows> {
  const sql = `SELECT date_trunc('hour', ${columnName(time)}) AS hour, count(*) AS n FROM read_parquet(${sqlStringList([path])}) WHERE ${columnName(projectColumn)} = $project GROUP BY 1`;
  const reader = await connection.runAndReadAll(sql, { project }, { project: VARCHAR });
  const out = new Map<number, number>();
  for (const row of reader.getRows()) {
    const hour = row[0] as { micros: bigint } | null;
    if (hour !== null) out.set(Number(hour.micros), Number(row[1]));
  }
  return out;
}
