import { apiGet, queryString, type ApiAnswer } from './api';
import { cacheStateOf, describeCacheState } from './cache-state';
import type { Total } from './totals';
import type { IntervalMeanings } from './time-range';
import { errorInWords } from './words';

/** A parameter as `GET {base}/api/endpoints` describes it. */
export interface ParamDefinition {
  name: string;
  required?: boolean;
  description?: string;
  /** `text`, `iso-timestamp`, `regex`, or another the page treats as text. */
  format?: string;
  values?: readonly string[];
  /** An interval parameter: the window and bucket (seconds) each value means, as the server defines them. */
  intervals?: IntervalMeanings;
  /** The value used when the parameter is not given, when the definition declares one. */
  default?: string | number;
}

/** A column of an endpoint's rows: its type drives how the page shows it. */
export interface ColumnDefinition {
  name: string;
  /** `timestamp`, `integer`, `float`, `text`, `json` (another is shown as text). */
  type: string;
  description?: string;
}

/** The part of `GET {base}/api/endpoints` the page uses. */
export interface Definition {
  name: string;
  description?: string;
  cache: { ttlSeconds: number } | null;
  /** Whether a caller may send its own SELECT (`sql`) over the endpoint's rows. */
  sandboxed?: boolean;
  params: readonly ParamDefinition[];
  columns?: readonly ColumnDefinition[];
}

/** What every panel shows, chosen once in the page's header. */
export interface Scope {
  project: string;
  /** Empty: all functions. */
  functionId: string;
  /** The shared time range, in seconds. */
  range: number;
  /** The server's now (Unix milliseconds), the same for every panel of one refresh. */
  nowMs: number;
}

/** How a panel's load ended; `unauthorized` makes the page ask for the key again. */
export type LoadOutcome = 'ok' | 'failed' | 'unauthorized' | 'aborted';

/**
 * A panel's common part: its `data-state` (`loading`, `ready`, `error`) and `data-query` (the
 * parameters of the rows shown), the line with the cache
 * state and engine time, the error in words, and one request at a time (a newer load aborts an
 * older one, so a slow answer never overwrites a newer choice).
 */
export class PanelView {
  private controller: AbortController | null = null;
  private readonly cacheLine: HTMLElement;
  private readonly error: HTMLElement;
  private readonly totals: HTMLElement | null;

  constructor(
    readonly root: HTMLElement,
    private readonly base: string,
    readonly definition: Definition,
  ) {
    this.cacheLine = root.querySelector<HTMLElement>('[data-role="cache-state"]')!;
    this.error = root.querySelector<HTMLElement>('[data-role="error"]')!;
    this.totals = root.querySelector<HTMLElement>('[data-role="totals"]');
  }

  /** The panel's window totals: `<span data-total="errors"><b>12</b> errors</span>` each. */
  showTotals(totals: readonly Total[]): void {
    this.totals?.replaceChildren(
      ...totals.map((t) => {
        const item = document.createElement('span');
        item.dataset.total = t.key;
        if (t.bad) item.className = 'bad';
        const value = document.createElement('b');
        value.textContent = t.value;
        item.append(value, ` ${t.label}`);
        return item;
      }),
    );
  }

  /** Fetches the endpoint's rows and hands them to `show`; failures are shown in words. */
  async load<Row>(params: Record<string, string>, show: (rows: Row[]) => string): Promise<LoadOutcome> {
    this.controller?.abort();
    const controller = (this.controller = new AbortController());
    this.root.dataset.state = 'loading';
    let answer: ApiAnswer<{ result: Row[] }>;
    try {
      answer = await apiGet(this.base, `/api/endpoints/${encodeURIComponent(this.definition.name)}`, params, controller.signal);
    } catch {
      return 'aborted';
    }
    if (controller.signal.aborted) return 'aborted';
    if (!answer.ok) {
      this.error.textContent = errorInWords(answer.failure);
      this.error.hidden = false;
      this.root.dataset.state = 'error';
      return answer.failure.status === 401 ? 'unauthorized' : 'failed';
    }
    const summary = show(answer.body.result);
    const state = describeCacheState(cacheStateOf(answer.headers, this.definition.cache?.ttlSeconds ?? null));
    this.cacheLine.textContent = [state, summary].filter(Boolean).join(' · ');
    this.error.hidden = true;
    this.error.textContent = '';
    // What the panel shows now, for people reading the DOM and for the browser tests.
    this.root.dataset.query = queryString(params);
    this.root.dataset.state = 'ready';
    return 'ok';
  }

  /** Not loaded, and why (a parameter the panel needs has no value yet). */
  idle(reason: string): void {
    this.controller?.abort();
    this.cacheLine.textContent = reason;
    this.error.hidden = true;
    this.totals?.replaceChildren();
    delete this.root.dataset.query;
    this.root.dataset.state = 'idle';
  }

  /** The `<select>` or `<input>` of a parameter in the panel's header. */
  control<T extends HTMLSelectElement | HTMLInputElement>(param: string): T {
    return this.root.querySelector<T>(`[data-param="${param}"]`)!;
  }

  /** The declared values of one of the endpoint's parameters (tiers). */
  values(param: string): readonly string[] {
    return this.definition.params.find((p) => p.name === param)?.values ?? [];
  }

  /** What the values of an interval parameter mean (window and bucket), as the endpoint's description says. */
  intervals(param: string): IntervalMeanings {
    return this.definition.params.find((p) => p.name === param)?.intervals ?? {};
  }

  /** The endpoint described no interval the page can place in the range (a server of another version). */
  noInterval(): Promise<LoadOutcome> {
    this.idle('This endpoint describes no interval for the range.');
    return Promise.resolve('ok');
  }
}

/** Replaces a select's options; `labels` names the shown text of a value. */
export function fillSelect(select: HTMLSelectElement, values: readonly string[], selected: string, labels: (value: string) => string = (v) => v): void {
  select.replaceChildren(
    ...values.map((value) => {
      const option = document.createElement('option');
      option.value = value;
      option.textContent = labels(value);
      return option;
    }),
  );
  select.value = selected;
  select.disabled = values.length === 0;
}
