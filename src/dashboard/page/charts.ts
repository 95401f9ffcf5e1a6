import uPlot from 'uplot';
import { onBucketGrid, type Columns } from './series';
import { bucketLabel, type TimeWindow } from './time-range';

export interface SeriesSpec {
  label: string;
  color: string;
  kind: 'line' | 'bars';
  /** Line width in CSS pixels (default 2). */
  width?: number;
  /** Dash pattern of a line, e.g. [6, 4]. */
  dash?: number[];
  /** What the legend shows for a point; default: the plotted value. */
  legendValue?: (index: number) => number | null;
}

/**
 * `asinh`: logarithmic away from zero, linear near it (uPlot's distr 4), so one slow outlier does
 * not flatten a latency chart and a 0 ms value still has a place.
 */
export type YScale = 'linear' | 'asinh';

export interface ChartOptions {
  yLabel: string;
  yScale?: YScale;
  /** Counts: ticks on whole numbers only (no 0.25 requests). */
  integers?: boolean;
  /** A click on the plot: the start (Unix seconds) and width of the bucket under the pointer. */
  onBucket?: (start: number, bucket: number) => void;
}

/**
 * One uPlot chart inside a `<figure>`, redrawn with new rows. For people reading the DOM and for
 * the browser tests it tells what it drew: `data-points` (rows), `data-x-min` / `data-x-max`
 * (the x scale uPlot used, ISO 8601) and `data-y-ticks` (the y values it labelled).
 */
export interface TimeChart {
  /** Rows with x at their bucket's start, drawn over the window's whole bucket grid. */
  update(columns: Columns, window: TimeWindow): void;
  /** Removes the chart (a panel whose series change makes a new one). */
  destroy(): void;
}

const HEIGHT = 220;
/** Narrow enough for a phone held upright (390 px, less the page's and panel's padding). */
const MIN_WIDTH = 240;
const utc = (seconds: number) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC');
const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

export function timeChart(figure: HTMLElement, specs: readonly SeriesSpec[], options: ChartOptions): TimeChart {
  let window: TimeWindow = { start: 0, end: 1, bucket: 1 };
  let hasData = false;
  const bars = uPlot.paths.bars!({ size: [0.8, 48], align: 0 });
  const integers = options.integers === true;
  const plot = new uPlot(
    {
      width: chartWidth(figure),
      height: HEIGHT,
      tzDate: utc,
      scales: {
        // Always the window of the rows: never uPlot's guess from the data (one bucket gave years, none gave 1970).
        x: { time: true, range: () => [window.start, window.end] },
        y:
          options.yScale === 'asinh'
            ? { distr: 4, asinh: 1, range: (_u, _min, max) => [0, hasData && max !== null && max > 0 ? uPlot.rangeAsinh(0, max, 10, true)[1] : 100] }
            : { range: (_u, _min, max) => [0, !hasData || max === null || max <= 0 ? 1 : max * 1.08] },
      },
      axes: [
        {},
        {
          label: options.yLabel,
          size: 64,
          ...(integers ? { incrs: WHOLE_STEPS } : {}),
          // On the log-like scale, grid lines and labels at powers of ten only (uPlot adds 2..9 × 10^k).
          ...(options.yScale === 'asinh' ? { filter: powersOfTen, grid: { filter: powersOfTen }, ticks: { filter: powersOfTen } } : {}),
          values: (u: uPlot, splits: number[]) => {
            const shown = options.yScale === 'asinh' ? powersOfTen(u, splits) : splits;
            figure.dataset.yTicks = shown.filter((v) => v !== null).join(',');
            return shown.map((v) => (v === null ? '' : format(v)));
          },
        },
      ],
      series: [
        // The legend names the bucket under the pointer by its start (points sit in the middle).
        { label: 'bucket (UTC)', value: (_u: uPlot, v: number | null) => (v === null ? '–' : bucketLabel(v - window.bucket / 2, window.bucket)) },
        ...specs.map((s) => ({
          label: s.label,
          stroke: s.color,
          width: s.kind === 'line' ? (s.width ?? 2) : 0,
          ...(s.dash ? { dash: s.dash } : {}),
          // A value between two empty buckets has no line to be part of: its point is drawn.
          ...(s.kind === 'line' ? { points: { show: false, size: Math.max(6, (s.width ?? 2) + 3), fill: s.color, filter: isolatedPoints } } : {}),
          ...(s.kind === 'bars' ? { fill: s.color, paths: bars, points: { show: false } } : {}),
          ...(s.legendValue ? { value: (_u: uPlot, v: number | null, _si: number, i: number | null) => format(i === null ? v : s.legendValue!(i)) } : {}),
        })),
      ],
      cursor: { drag: { x: false, y: false } },
      hooks: {
        setScale: [
          (u, key) => {
            if (key !== 'x' || u.scales.x!.min == null || u.scales.x!.max == null) return;
            figure.dataset.xMin = iso(u.scales.x!.min);
            figure.dataset.xMax = iso(u.scales.x!.max);
          },
        ],
      },
    },
    [[], ...specs.map(() => [])] as uPlot.AlignedData,
    figure,
  );
  // No axis before the first rows: the window is not known yet.
  figure.dataset.empty = 'Loading…';
  figure.dataset.pending = '';
  if (options.onBucket) {
    const onBucket = options.onBucket;
    plot.over.classList.add('clickable');
    plot.over.title = 'Click a bucket to open its log entries';
    plot.over.addEventListener('click', (event) => {
      const t = plot.posToVal(event.offsetX, 'x');
      const start = Math.floor(t / window.bucket) * window.bucket;
      if (start >= window.start && start < window.end) onBucket(start, window.bucket);
    });
  }
  // The chart follows its figure's width (a phone turned, a window resized).
  const resize = new ResizeObserver(() => {
    const width = chartWidth(figure);
    if (width !== plot.width) plot.setSize({ width, height: HEIGHT });
  });
  resize.observe(figure);
  return {
    update(columns, next) {
      window = next;
      hasData = columns[0].length > 0;
      plot.setData(onBucketGrid(columns, window) as uPlot.AlignedData);
      figure.dataset.points = String(columns[0].length);
      delete figure.dataset.pending;
      if (hasData) delete figure.dataset.empty;
      else figure.dataset.empty = 'No data in this window.';
    },
    destroy() {
      resize.disconnect();
      plot.destroy();
    },
  };
}

/** The figure's width: the chart is made to fit it, not the other way round. */
function chartWidth(figure: HTMLElement): number {
  return Math.max(MIN_WIDTH, Math.floor(figure.clientWidth));
}

/** Whole-number tick steps for counts. */
const WHOLE_STEPS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1e3, 2e3, 2.5e3, 5e3, 1e4, 2e4, 2.5e4, 5e4, 1e5, 2e5, 5e5, 1e6, 2e6, 5e6, 1e7, 1e8, 1e9];

/**
 * 0 and 1, 10, 100, ... (no negative durations: the scale starts at 0, though uPlot's asinh splits
 * go one below). On a scale past 1,000 the 1 is left out: it sits a few pixels above the 0.
 */
function powersOfTen(u: uPlot, splits: number[]): Array<number | null> {
  const lowest = (u.scales.y?.max ?? 0) >= 1000 ? 10 : 1;
  return splits.map((v) => (v === 0 || (v >= lowest && Math.abs(Math.log10(v) % 1) < 1e-9) ? v : null));
}

/** Indices of values with no value on either side: no line reaches them, so they need a point. */
function isolatedPoints(u: uPlot, seriesIdx: number, show: boolean): number[] | null {
  if (show) return null;
  const ys = u.data[seriesIdx]!;
  const idxs: number[] = [];
  for (let i = 0; i < ys.length; i++) if (ys[i] != null && ys[i - 1] == null && ys[i + 1] == null) idxs.push(i);
  return idxs;
}

function format(value: number | null): string {
  return value === null ? '–' : value.toLocaleString('en-US', { maximumFractionDigits: 1 });
}
