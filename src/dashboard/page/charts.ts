import uPlot from 'uplot';
import type { Columns } from './series';

export interface SeriesSpec {
  label: string;
  color: string;
  kind: 'line' | 'bars';
  /** Dash pattern of a line, e.g. [6, 4]. */
  dash?: number[];
  /** What the legend shows for a point; default: the plotted value. */
  legendValue?: (index: number) => number | null;
}

/** One uPlot chart inside a `<figure>`, redrawn with new rows; `data-points` tells how many it drew. */
export interface TimeChart {
  update(columns: Columns, bucketSeconds: number): void;
}

const HEIGHT = 220;
const utc = (seconds: number) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC');

/**
 * `asinh`: logarithmic away from zero, linear near it (uPlot's distr 4), so one slow outlier does
 * not flatten a latency chart and a 0 ms value still has a place.
 */
export type YScale = 'linear' | 'asinh';

export function timeChart(figure: HTMLElement, specs: readonly SeriesSpec[], yLabel: string, yScale: YScale = 'linear'): TimeChart {
  // The x range pads one bucket on each side so the first and last bars are whole.
  let pad = 3600;
  const bars = uPlot.paths.bars!({ size: [0.8, 48] });
  const plot = new uPlot(
    {
      width: Math.max(300, figure.clientWidth),
      height: HEIGHT,
      tzDate: utc,
      scales: {
        x: { time: true, range: (_u, min, max) => (min === null || max === null ? [0, 1] : [min - pad, max + pad]) },
        y:
          yScale === 'asinh'
            ? { distr: 4, asinh: 1 }
            : { range: (_u, _min, max) => [0, max === null || max <= 0 ? 1 : max * 1.08] },
      },
      axes: [
        {},
        {
          label: yLabel,
          size: 64,
          // On the log-like scale, grid lines and labels at powers of ten only (uPlot adds 2..9 × 10^k).
          ...(yScale === 'asinh' ? { filter: powersOfTen, grid: { filter: powersOfTen }, ticks: { filter: powersOfTen } } : {}),
        },
      ],
      series: [
        { label: 'time (UTC)' },
        ...specs.map((s) => ({
          label: s.label,
          stroke: s.color,
          width: s.kind === 'line' ? 2 : 0,
          ...(s.dash ? { dash: s.dash } : {}),
          ...(s.kind === 'bars' ? { fill: s.color, paths: bars, points: { show: false } } : {}),
          ...(s.legendValue ? { value: (_u: uPlot, v: number | null, _si: number, i: number | null) => format(i === null ? v : s.legendValue!(i)) } : {}),
        })),
      ],
      cursor: { drag: { x: false, y: false } },
    },
    [[], ...specs.map(() => [])] as uPlot.AlignedData,
    figure,
  );
  new ResizeObserver(() => {
    const width = Math.max(300, figure.clientWidth);
    if (width !== plot.width) plot.setSize({ width, height: HEIGHT });
  }).observe(figure);
  return {
    update(columns, bucketSeconds) {
      pad = bucketSeconds;
      plot.setData(columns as uPlot.AlignedData);
      const points = columns[0].length;
      figure.dataset.points = String(points);
      if (points === 0) figure.dataset.empty = 'No data in this window.';
      else delete figure.dataset.empty;
    },
  };
}

function powersOfTen(_u: uPlot, splits: number[]): Array<number | null> {
  return splits.map((v) => (v === 0 || Math.abs(Math.log10(Math.abs(v)) % 1) < 1e-9 ? v : null));
}

function format(value: number | null): string {
  return value === null ? '–' : value.toLocaleString('en-US', { maximumFractionDigits: 1 });
}
