import type { DuckDBConnection } from '@duckdb/node-api';
import { columnName } from '../sql/column-name';
import { sqlString } from '../duckdb/sql-literal';

/**
 * A merge's rows counted by project and minute, in the layout's order (project, then newest
 * first): what `mergeSlices` cuts into slices. `minute` is the minute's start in epoch
 * microseconds, or null for the rows without a timestamp (last, as the layout's sort puts them).
 * Why minutes: a self-hosted stack sends everything as one project, so its day is cut by time
 * alone, and an hour of its gateway at a few hundred events a second is more than a slice sorts.
 */
export interface MergeCell {
  project: string | null;
  minute: bigint | null;
  rows: number;
}

const MINUTE_MICROS = 60_000_000n;

/**
 * The rows of a relation counted per project and minute, in the layout's order (`ORDER BY project,
 * timestamp DESC` with DuckDB's default null order, as `sortedLayoutTableSql` sorts): a narrow
 * scan (two columns) whatever the rows' width.
 *
 * @example
 * await mergeCells(connection, 'SELECT * FROM read_parquet([...])', 'true', 'project'); // [{ project: 'a', minute: 1795...n, rows: 4100 }, ...]
 */
export async function mergeCells(connection: DuckDBConnection, relation: string, where: string, projectColumn: string): Promise<MergeCell[]> {
  const project = columnName(projectColumn);
  const result = await connection.runAndReadAll(`
    SELECT ${project} AS le_project, epoch_us(date_trunc('minute', timestamp)) AS le_minute, count(*) AS n
    FROM (${relation})
    WHERE ${where}
    GROUP BY ${project}, le_minute
    ORDER BY ${project}, le_minute DESC`);
  return result.getRowObjects().map((row) => ({
    project: row.le_project === null ? null : String(row.le_project),
    minute: row.le_minute === null ? null : BigInt(row.le_minute as bigint),
    rows: Number(row.n),
  }));
}

/**
 * Cuts a merge's rows into slices of at most `maxRows` each, contiguous in the layout's order:
 * whole projects together while they fit, a project of more rows than that by ranges of its minutes
 * (newest first). Each slice is a SQL condition; the rows of the slices in order, each sorted, are
 * the rows of the whole sorted (the layout's key starts with the project, then the timestamp).
 * Why: the sort of a merge is what needs memory in proportion to its rows, so sorted slice by
 * slice a merge of any size fits the memory one slice needs (docs/performance.md, "A day's files
 * merged in sorted slices"). A minute of one project holding more than `maxRows` rows is a slice
 * of its own, larger than the bound (the memory retry covers it). Returns `['true']` when every
 * row fits one slice.
 *
 * @example
 * mergeSlices([{ project: 'a', minute: 0n, rows: 10 }, { project: 'b', minute: 0n, rows: 10 }], 'project', 100); // ['true']
 * mergeSlices([{ project: 'a', minute: 60000000n, rows: 60 }, { project: 'a', minute: 0n, rows: 60 }], 'project', 100);
 * // ["project = 'a' AND timestamp >= make_timestamp(60000000) AND timestamp < make_timestamp(120000000)",
 * //  "project = 'a' AND timestamp >= make_timestamp(0) AND timestamp < make_timestamp(60000000)"]
 */
export function mergeSlices(cells: readonly MergeCell[], projectColumn: string, maxRows: number): string[] {
  if (cells.reduce((n, c) => n + c.rows, 0) <= maxRows) return ['true'];
  const project = columnName(projectColumn);
  const isProject = (p: string | null) => (p === null ? `${project} IS NULL` : `${project} = ${sqlString(p)}`);
  const slices: string[] = [];
  // Whole projects gathered into one slice, from `first` to `last` in order.
  const gathered = { first: '', last: '', rows: 0, any: false };
  const flush = () => {
    if (gathered.any) slices.push(gathered.first === gathered.last ? isProject(gathered.first) : `${project} >= ${sqlString(gathered.first)} AND ${project} <= ${sqlString(gathered.last)}`);
    gathered.any = false;
  };
  for (let start = 0; start < cells.length; ) {
    let end = start;
    let rows = 0;
    while (end < cells.length && cells[end]!.project === cells[start]!.project) rows += cells[end++]!.rows;
    const name = cells[start]!.project;
    const own = cells.slice(start, end);
    start = end;
    if (rows <= maxRows && name !== null) {
      if (gathered.any && gathered.rows + rows <= maxRows) Object.assign(gathered, { last: name, rows: gathered.rows + rows });
      else {
        flush();
        Object.assign(gathered, { first: name, last: name, rows, any: true });
      }
      continue;
    }
    flush();
    if (rows <= maxRows) {
      slices.push(isProject(name));
      continue;
    }
    // A project of more rows than a slice: by ranges of its minutes, newest first.
    for (let from = 0; from < own.length; ) {
      let to = from;
      let taken = 0;
      while (to < own.length && (to === from || taken + own[to]!.rows <= maxRows)) taken += own[to++]!.rows;
      slices.push(`${isProject(name)} AND ${minutesCondition(own.slice(from, to))}`);
      from = to;
    }
  }
  flush();
  return slices;
}

/** The timestamps of a run of one project's cells, newest minute first (the cell without a timestamp last). */
function minutesCondition(run: readonly MergeCell[]): string {
  const minutes = run.flatMap((c) => (c.minute === null ? [] : [c.minute]));
  const parts: string[] = [];
  if (minutes.length) parts.push(`timestamp >= make_timestamp(${minutes[minutes.length - 1]!}) AND timestamp < make_timestamp(${minutes[0]! + MINUTE_MICROS})`);
  if (minutes.length < run.length) parts.push('timestamp IS NULL');
  return parts.length === 1 ? parts[0]! : `((${parts[0]}) OR ${parts[1]})`;
}
