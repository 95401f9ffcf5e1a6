// Pure (no DOM): unit-tested in `npm test`.
import { API_COUNT_PARTS, statusOf, type ApiCountsRow, type InvocationStatsRow, type LogsAllRow } from './series';

/** One figure of a panel's totals line, e.g. `{ key: 'errors', label: 'errors', value: '12' }`. */
export interface Total {
  /** Stable name, for the page's `data-total` attribute. */
  key: string;
  label: string;
  value: string;
  /** Errors there are: the page shows the figure in red. */
  bad?: boolean;
}

const count = (n: number) => n.toLocaleString('en-US');
/** `1 error`, `2 errors`. */
const noun = (n: number, word: string) => (n === 1 ? word : `${word}s`);

/** `2.6 %`; a share below 0.1 % that is not zero is `< 0.1 %`; no base at all is `–`. */
export function percent(part: number, whole: number): string {
  if (whole === 0) return '–';
  const rate = (100 * part) / whole;
  if (rate > 0 && rate < 0.1) return '< 0.1 %';
  return `${Number(rate.toFixed(1)).toLocaleString('en-US')} %`;
}

/** invocation-stats over the window: invocations, errors (status 400 and above) and their share. */
export function invocationTotals(rows: readonly InvocationStatsRow[]): Total[] {
  const invocations = rows.reduce((n, r) => n + r.count, 0);
  const errors = rows.reduce((n, r) => n + r.error_count, 0);
  return [
    { key: 'invocations', label: noun(invocations, 'invocation'), value: count(invocations) },
    { key: 'errors', label: noun(errors, 'error'), value: count(errors), bad: errors > 0 },
    { key: 'error-rate', label: 'error rate', value: percent(errors, invocations), bad: errors > 0 },
  ];
}

/** api-counts over the window: all requests, then each product's. The rows carry no status, so no error rate. */
export function requestTotals(rows: readonly ApiCountsRow[]): Total[] {
  const parts = API_COUNT_PARTS.map((p) => ({ key: p.label.toLowerCase(), label: p.label, value: rows.reduce((n, r) => n + r[p.key], 0) }));
  const requests = parts.reduce((n, p) => n + p.value, 0);
  return [{ key: 'requests', label: noun(requests, 'request'), value: count(requests) }, ...parts.map((p) => ({ ...p, value: count(p.value) }))];
}

/** The entries shown (at most 100), the errors among them (status 400 and above) and their share. */
export function entryTotals(rows: readonly LogsAllRow[]): Total[] {
  const errors = rows.filter((r) => (statusOf(r.metadata) ?? 0) >= 400).length;
  return [
    { key: 'entries', label: rows.length === 1 ? 'entry' : 'entries', value: count(rows.length) },
    { key: 'errors', label: noun(errors, 'error'), value: count(errors), bad: errors > 0 },
    { key: 'error-rate', label: 'error rate', value: percent(errors, rows.length), bad: errors > 0 },
  ];
}
