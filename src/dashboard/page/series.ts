// Pure (no DOM, no uPlot): unit-tested in `npm test`.
import type { TimeWindow } from './time-range';

/** uPlot's data layout: x values (Unix seconds), then one array per series. */
export type Columns = [number[], ...Array<Array<number | null>>];

export interface InvocationStatsRow {
  timestamp: string;
  avg_execution_time: number | null;
  p95_execution_time: number | null;
  p99_execution_time: number | null;
  count: number;
  error_count: number;
}

export interface ApiCountsRow {
  timestamp: string;
  total_rest_requests: number;
  total_storage_requests: number;
  total_auth_requests: number;
  total_realtime_requests: number;
}

export interface LogsAllRow {
  id: string;
  timestamp: string;
  event_message: string | null;
  metadata: Record<string, unknown> | null;
}

/** `2026-11-21T10:00:00.000000Z` as Unix seconds (to the millisecond; Date.parse takes at most three digits). */
export function unixSeconds(timestamp: string): number {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?Z$/.exec(timestamp);
  if (!m) return Date.parse(timestamp) / 1000;
  return Date.parse(`${m[1]}.${(m[2] ?? '.000').slice(1, 4).padEnd(3, '0')}Z`) / 1000;
}

/** invocation-stats rows as two charts: latency lines (avg, p95, p99) and count / error bars. */
export function invocationStatsColumns(rows: readonly InvocationStatsRow[]): { latency: Columns; counts: Columns } {
  const xs = rows.map((r) => unixSeconds(r.timestamp));
  return {
    latency: [xs, rows.map((r) => r.avg_execution_time), rows.map((r) => r.p95_execution_time), rows.map((r) => r.p99_execution_time)],
    counts: [xs, rows.map((r) => r.count), rows.map((r) => r.error_count)],
  };
}

/** The order of the stack, bottom first. */
export const API_COUNT_PARTS = [
  { key: 'total_rest_requests', label: 'REST' },
  { key: 'total_storage_requests', label: 'storage' },
  { key: 'total_auth_requests', label: 'auth' },
  { key: 'total_realtime_requests', label: 'realtime' },
] as const;

/**
 * api-counts rows as a stack drawn by overlaying bars: `stacked` holds the cumulative heights,
 * top of the stack first (the tallest bar is drawn first and each lower part over it), and `raw`
 * the counts of the same parts in the same order, for the legend.
 */
export function apiCountsColumns(rows: readonly ApiCountsRow[]): { stacked: Columns; raw: Columns; labels: string[] } {
  const xs = rows.map((r) => unixSeconds(r.timestamp));
  const parts = [...API_COUNT_PARTS].reverse();
  const stacked: Array<number[]> = parts.map(() => []);
  const raw: Array<number[]> = parts.map(() => []);
  for (const row of rows) {
    let below = 0;
    const heights: number[] = [];
    for (const part of API_COUNT_PARTS) heights.push((below += row[part.key]));
    parts.forEach((part, i) => {
      stacked[i]!.push(heights[API_COUNT_PARTS.length - 1 - i]!);
      raw[i]!.push(row[part.key]);
    });
  }
  return { stacked: [xs, ...stacked], raw: [xs, ...raw], labels: parts.map((p) => p.label) };
}

/** Most buckets a chart spreads its rows over (a 5min window has 301 one-second buckets). */
const MAX_BUCKETS = 5000;

/**
 * Columns on the window's whole bucket grid, each point in the middle of its bucket: an empty
 * bucket holds null, so a line breaks there instead of joining its neighbours, and a bar covers
 * its own bucket. Rows outside the window are left out.
 */
export function onBucketGrid(columns: Columns, window: TimeWindow): Columns {
  const [xs, ...series] = columns;
  const count = Math.round((window.end - window.start) / window.bucket);
  const half = window.bucket / 2;
  if (count > MAX_BUCKETS) {
    const kept = xs.flatMap((x, i) => (x >= window.start && x < window.end ? [i] : []));
    return [kept.map((i) => xs[i]! + half), ...series.map((s) => kept.map((i) => s[i] ?? null))];
  }
  const grid: Columns = [Array.from({ length: count }, (_, i) => window.start + i * window.bucket + half), ...series.map(() => new Array<number | null>(count).fill(null))];
  xs.forEach((x, row) => {
    const i = Math.floor((x - window.start) / window.bucket);
    if (i < 0 || i >= count) return;
    series.forEach((s, k) => (grid[k + 1]![i] = s[row] ?? null));
  });
  return grid;
}

/** The HTTP status of a gateway log entry (`metadata.response.status_code`), or null. */
export function statusOf(metadata: unknown): number | null {
  const response = isObject(metadata) ? metadata.response : undefined;
  const status = isObject(response) ? response.status_code : undefined;
  return typeof status === 'number' ? status : null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
