import { timeChart } from './charts';
import { PanelView, type LoadOutcome } from './panel-view';
import { apiCountsColumns, bucketSeconds, type ApiCountsRow, type Columns } from './series';
import { literalPattern } from './view-state';

const COLORS: Record<string, string> = { realtime: '#8b5cf6', auth: '#10b981', storage: '#f59e0b', REST: '#3b82f6' };

/** usage.api-counts: requests per bucket, stacked REST / storage / auth / realtime (bottom up). */
export function usagePanel(view: PanelView) {
  let raw: Columns = [[]];
  const labels = apiCountsColumns([]).labels;
  const chart = timeChart(
    view.root.querySelector<HTMLElement>('[data-chart="requests"]')!,
    labels.map((label, i) => ({ label, color: COLORS[label]!, kind: 'bars' as const, legendValue: (index: number) => raw[i + 1]?.[index] ?? null })),
    'requests',
  );
  return {
    interval: view.control<HTMLSelectElement>('interval'),
    load(project: string, interval: string): Promise<LoadOutcome> {
      // The endpoint's `project` is a pattern searched in the URL; the ref is matched literally.
      return view.load<ApiCountsRow>({ project: literalPattern(project), interval }, (rows) => {
        const columns = apiCountsColumns(rows);
        raw = columns.raw;
        chart.update(columns.stacked, bucketSeconds(interval));
        return `${rows.length} buckets`;
      });
    },
  };
}
