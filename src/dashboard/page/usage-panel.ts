import { timeChart } from './charts';
import { PanelView, type LoadOutcome, type Scope } from './panel-view';
import { apiCountsColumns, onBucketGrid, unixSeconds, type ApiCountsRow, type Columns } from './series';
import { intervalFor, rangeWindow, windowForRows } from './time-range';
import { requestTotals } from './totals';
import { literalPattern } from './view-state';

const COLORS: Record<string, string> = { realtime: '#8b5cf6', auth: '#10b981', storage: '#f59e0b', REST: '#3b82f6' };

/** usage.api-counts: requests per bucket, stacked REST / storage / auth / realtime (bottom up). */
export function usagePanel(view: PanelView, onBucket: (start: number, bucket: number) => void) {
  // Each part's own count on the chart's bucket grid, for the legend (the chart draws the stacked heights).
  let raw: Columns = [[]];
  const labels = apiCountsColumns([]).labels;
  const chart = timeChart(
    view.root.querySelector<HTMLElement>('[data-chart="requests"]')!,
    labels.map((label, i) => ({
      label,
      color: COLORS[label]!,
      kind: 'bars' as const,
      legendValue: (index: number) => raw[i + 1]?.[index] ?? null,
    })),
    { yLabel: 'requests', integers: true, onBucket },
  );
  return {
    load(scope: Scope): Promise<LoadOutcome> {
      const interval = intervalFor(view.intervals('interval'), scope.range);
      if (!interval) return view.noInterval();
      // The endpoint's `project` is a pattern searched in the URL; the ref is matched literally.
      return view.load<ApiCountsRow>({ project: literalPattern(scope.project), interval: interval.value }, (rows) => {
        const xs = rows.map((r) => unixSeconds(r.timestamp));
        const { window, inside } = windowForRows(rangeWindow(scope.nowMs, scope.range, interval.bucket), xs, interval.span > scope.range);
        const shown = rows.filter((_, i) => inside(xs[i]!));
        const columns = apiCountsColumns(shown);
        raw = onBucketGrid(columns.raw, window);
        chart.update(columns.stacked, window);
        view.showTotals(requestTotals(shown));
        return `interval ${interval.value}`;
      });
    },
  };
}
