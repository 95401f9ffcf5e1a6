import { timeChart } from './charts';
import { PanelView, type LoadOutcome, type Scope } from './panel-view';
import { invocationStatsColumns, unixSeconds, type InvocationStatsRow } from './series';
import { intervalFor, rangeWindow, windowForRows } from './time-range';
import { invocationTotals } from './totals';

/** functions.invocation-stats: latency lines (avg, p95, p99) and count / error bars per bucket. */
export function statsPanel(view: PanelView, onBucket: (start: number, bucket: number) => void) {
  const latency = timeChart(
    view.root.querySelector<HTMLElement>('[data-chart="latency"]')!,
    [
      { label: 'average', color: '#64748b', kind: 'line', width: 1.5, dash: [4, 3] },
      // A wide light band under a thin p99: where the two are equal (small buckets) both stay visible.
      { label: 'p95', color: '#fdba74', kind: 'line', width: 7 },
      { label: 'p99', color: '#dc2626', kind: 'line', width: 2 },
    ],
    { yLabel: 'ms', yScale: 'asinh', onBucket },
  );
  const counts = timeChart(
    view.root.querySelector<HTMLElement>('[data-chart="counts"]')!,
    [
      { label: 'invocations', color: '#93c5fd', kind: 'bars' },
      { label: 'errors', color: '#dc2626', kind: 'bars' },
    ],
    { yLabel: 'invocations', integers: true, onBucket },
  );
  return {
    load(scope: Scope): Promise<LoadOutcome> {
      const interval = intervalFor(view.intervals('interval'), scope.range);
      if (!interval) return view.noInterval();
      return view.load<InvocationStatsRow>({ project: scope.project, function_id: scope.functionId, interval: interval.value }, (rows) => {
        const xs = rows.map((r) => unixSeconds(r.timestamp));
        const { window, inside } = windowForRows(rangeWindow(scope.nowMs, scope.range, interval.bucket), xs, interval.span > scope.range);
        const shown = rows.filter((_, i) => inside(xs[i]!));
        const columns = invocationStatsColumns(shown);
        latency.update(columns.latency, window);
        counts.update(columns.counts, window);
        view.showTotals(invocationTotals(shown));
        return `interval ${interval.value}`;
      });
    },
  };
}
