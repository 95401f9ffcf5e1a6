import { timeChart } from './charts';
import { PanelView, type LoadOutcome } from './panel-view';
import { bucketSeconds, invocationStatsColumns, type InvocationStatsRow } from './series';

/** functions.invocation-stats: latency lines (avg, p95, p99) and count / error bars per bucket. */
export function statsPanel(view: PanelView) {
  const latency = timeChart(
    view.root.querySelector<HTMLElement>('[data-chart="latency"]')!,
    [
      { label: 'average', color: '#64748b', kind: 'line' },
      { label: 'p95', color: '#f59e0b', kind: 'line' },
      // Dashed: in small buckets p99 often equals p95, which stays visible under it.
      { label: 'p99', color: '#dc2626', kind: 'line', dash: [6, 4] },
    ],
    'ms',
    'asinh',
  );
  const counts = timeChart(
    view.root.querySelector<HTMLElement>('[data-chart="counts"]')!,
    [
      { label: 'invocations', color: '#93c5fd', kind: 'bars' },
      { label: 'errors', color: '#dc2626', kind: 'bars' },
    ],
    'invocations',
  );
  return {
    interval: view.control<HTMLSelectElement>('interval'),
    load(project: string, functionId: string, interval: string): Promise<LoadOutcome> {
      return view.load<InvocationStatsRow>({ project, function_id: functionId, interval }, (rows) => {
        const columns = invocationStatsColumns(rows);
        latency.update(columns.latency, bucketSeconds(interval));
        counts.update(columns.counts, bucketSeconds(interval));
        const total = rows.reduce((n, r) => n + r.count, 0);
        return `${total.toLocaleString('en-US')} invocations in ${rows.length} buckets`;
      });
    },
  };
}
