import { apiGet, queryString, type ApiAnswer } from './api';
import { cacheStateOf, describeCacheState } from './cache-state';
import { errorInWords } from './words';

/** The part of `GET {base}/api/endpoints` the page uses. */
export interface Definition {
  name: string;
  cache: { ttlSeconds: number } | null;
  params: ReadonlyArray<{ name: string; values?: readonly string[] }>;
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

  constructor(
    readonly root: HTMLElement,
    private readonly base: string,
    private readonly definition: Definition,
  ) {
    this.cacheLine = root.querySelector<HTMLElement>('[data-role="cache-state"]')!;
    this.error = root.querySelector<HTMLElement>('[data-role="error"]')!;
  }

  /** Fetches the endpoint's rows and hands them to `show`; failures are shown in words. */
  async load<Row>(params: Record<string, string>, show: (rows: Row[]) => string): Promise<LoadOutcome> {
    this.controller?.abort();
    const controller = (this.controller = new AbortController());
    this.root.dataset.state = 'loading';
    let answer: ApiAnswer<{ result: Row[] }>;
    try {
      answer = await apiGet(this.base, `/api/endpoints/${this.definition.name}`, params, controller.signal);
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

  /** The `<select>` or `<input>` of a parameter in the panel's header. */
  control<T extends HTMLSelectElement | HTMLInputElement>(param: string): T {
    return this.root.querySelector<T>(`[data-param="${param}"]`)!;
  }

  /** The declared values of one of the endpoint's parameters (intervals, tiers). */
  values(param: string): readonly string[] {
    return this.definition.params.find((p) => p.name === param)?.values ?? [];
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
