// Pure (no DOM): unit-tested in `npm test`. How the page shows the rows of an endpoint it only
// knows by its description (a user's endpoint, or a caller's own SELECT over a sandboxed one).
import { unixSeconds, type Columns } from './series';

/** A column as the page reads it: a name and one of the description's types. */
export interface RowColumn {
  name: string;
  type: string;
}

export type Row = Record<string, unknown>;

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)$/;
/** Longest text a cell shows; the rest is cut with an ellipsis (the full value is its title). */
const CELL_CHARS = 300;

/** A cell's text by its column's type: timestamps to the millisecond, numbers grouped, objects as JSON. */
export function formatCell(type: string, value: unknown): string {
  if (value === null || value === undefined) return '–';
  let text: string;
  if (type === 'timestamp' && typeof value === 'string' && ISO.test(value)) text = new Date(unixSeconds(value) * 1000).toISOString().replace('T', ' ').replace(/Z$/, '');
  else if (typeof value === 'number') text = value.toLocaleString('en-US', { maximumFractionDigits: type === 'integer' ? 0 : 3 });
  else if (typeof value === 'object') text = JSON.stringify(value);
  else text = String(value);
  return text.length > CELL_CHARS ? `${text.slice(0, CELL_CHARS)}…` : text;
}

/** The columns of rows nobody described (a caller's own SELECT): in order of appearance, typed by their values. */
export function inferColumns(rows: readonly Row[]): RowColumn[] {
  const names: string[] = [];
  for (const row of rows) for (const name of Object.keys(row)) if (!names.includes(name)) names.push(name);
  return names.map((name) => {
    const values = rows.map((r) => r[name]).filter((v) => v !== null && v !== undefined);
    const all = (test: (v: unknown) => boolean) => values.length > 0 && values.every(test);
    const type = all((v) => typeof v === 'string' && ISO.test(v))
      ? 'timestamp'
      : all((v) => Number.isInteger(v))
        ? 'integer'
        : all((v) => typeof v === 'number')
          ? 'float'
          : all((v) => typeof v === 'object')
            ? 'json'
            : 'text';
    return { name, type };
  });
}

/** What a time chart of described rows draws: x, one series per numeric column, and the rows' bucket width. */
export interface RowsChart {
  /** The timestamp column the x axis follows. */
  time: string;
  series: Array<{ label: string; kind: 'line' | 'bars' }>;
  /** x (Unix seconds, ascending, distinct), then one array per series. */
  columns: Columns;
  /** The spacing of the points in seconds: the chart's bucket width. */
  bucket: number;
  /** Whether every series counts something (whole-number ticks). */
  integers: boolean;
}

/** Most numeric columns one chart draws. */
const MAX_SERIES = 6;
/** Bucket widths for rows counted over time (seconds): the first with at most this many buckets is taken. */
const COUNT_BUCKETS = [1, 60, 3600, 86_400];
const MAX_COUNT_BUCKETS = 120;

/**
 * A time chart of rows when a column is a `timestamp` (null otherwise), from the description
 * alone: one point per distinct time. With one row per time the numeric columns are drawn as
 * they are; with several (rows grouped by time and something else) the integer columns are summed
 * per time and the float ones left out (a sum of averages means nothing); with no column to sum,
 * the rows themselves are counted per bucket.
 */
export function rowsChart(columns: readonly RowColumn[], rows: readonly Row[]): RowsChart | null {
  const time = columns.find((c) => c.type === 'timestamp');
  if (!time) return null;
  const timed = rows.flatMap((row) => {
    const value = row[time.name];
    const x = typeof value === 'string' ? unixSeconds(value) : NaN;
    return Number.isFinite(x) ? [{ x, row }] : [];
  });
  timed.sort((a, b) => a.x - b.x);
  const distinct = new Set(timed.map((t) => t.x)).size === timed.length;
  const numeric = columns.filter((c) => c.type === 'integer' || (distinct && c.type === 'float')).slice(0, MAX_SERIES);
  if (numeric.length === 0)
    return countChart(
      time.name,
      timed.map((t) => t.x),
    );
  const xs: number[] = [];
  const series: Array<Array<number | null>> = numeric.map(() => []);
  for (const { x, row } of timed) {
    const at = xs[xs.length - 1] === x ? xs.length - 1 : xs.push(x) - 1;
    numeric.forEach((c, k) => {
      const value = row[c.name];
      const n = typeof value === 'number' ? value : typeof value === 'string' && value !== '' ? Number(value) : NaN;
      const sum = series[k]![at];
      series[k]![at] = Number.isFinite(n) ? (sum ?? 0) + n : (sum ?? null);
    });
  }
  return {
    time: time.name,
    series: numeric.map((c) => ({ label: distinct ? c.name : `${c.name} (sum)`, kind: 'line' as const })),
    columns: [xs, ...series],
    bucket: spacing(xs),
    integers: numeric.every((c) => c.type === 'integer'),
  };
}

/** Rows counted per bucket, the bucket as fine as keeps the chart readable. */
function countChart(time: string, xs: readonly number[]): RowsChart {
  const extent = xs.length > 0 ? xs[xs.length - 1]! - xs[0]! : 0;
  const bucket = COUNT_BUCKETS.find((b) => extent / b <= MAX_COUNT_BUCKETS) ?? COUNT_BUCKETS[COUNT_BUCKETS.length - 1]!;
  const starts: number[] = [];
  const counts: number[] = [];
  for (const x of xs) {
    const start = Math.floor(x / bucket) * bucket;
    if (starts[starts.length - 1] === start) {
      counts[counts.length - 1]!++;
    } else {
      starts.push(start);
      counts.push(1);
    }
  }
  return { time, series: [{ label: 'rows', kind: 'bars' }], columns: [starts, counts], bucket, integers: true };
}

/** The smallest gap between consecutive times; an hour when there is none (one point). */
function spacing(xs: readonly number[]): number {
  let gap = Infinity;
  for (let i = 1; i < xs.length; i++) gap = Math.min(gap, xs[i]! - xs[i - 1]!);
  return Number.isFinite(gap) && gap > 0 ? gap : 3600;
}
