import { timeChart, type SeriesSpec, type TimeChart } from './charts';
import { rowsChart, type Row, type RowColumn } from './generic-rows';
import { PanelView, type Definition, type LoadOutcome, type ParamDefinition, type Scope } from './panel-view';
import { fillRowTable, rowCount } from './row-table';
import { intervalFor, intervalParam, isoMicros, rangeWindow, windowForRows, type TimeWindow } from './time-range';
import { literalPattern } from './view-state';

const PALETTE = ['#2563eb', '#f59e0b', '#10b981', '#8b5cf6', '#dc2626', '#0891b2'];

/**
 * The value the page's header gives a parameter of these well-known names (Logflare's and the
 * built-in endpoints'), so a user's endpoint that declares them follows the project, function
 * and time range like the others; undefined for any other parameter.
 */
function headerValue(param: ParamDefinition, scope: Scope): string | undefined {
  switch (param.name) {
    case 'project':
      return param.format === 'regex' ? literalPattern(scope.project) : scope.project;
    case 'function_id':
      return scope.functionId;
    case 'iso_timestamp_start':
      return isoMicros((scope.nowMs - scope.range * 1000) * 1000);
    case 'iso_timestamp_end':
      return '';
  }
  return undefined;
}
const HEADER_PARAMS = new Set(['project', 'function_id', 'iso_timestamp_start', 'iso_timestamp_end']);

/**
 * A panel for an endpoint the page has no panel of its own for (a user's endpoint), made from
 * its description alone (docs/dashboard.md, "Panels for other endpoints"): a control per parameter the header does not set, a table of its rows
 * by its columns, and a time chart when a column is a `timestamp`.
 */
export function genericPanel(definition: Definition, base: string, container: HTMLElement, onBucket: (start: number, bucket: number) => void) {
  const root = panelElement(definition);
  container.append(root);
  const view = new PanelView(root, base, definition);
  const interval = intervalParam(definition.params);
  const header = root.querySelector('header')!;
  const controls = new Map<string, HTMLSelectElement | HTMLInputElement>();
  for (const param of definition.params) {
    if (param === interval || HEADER_PARAMS.has(param.name)) continue;
    const control = controlFor(param);
    controls.set(param.name, control);
    const label = document.createElement('label');
    label.append(param.name, ' ', control);
    if (param.description) label.title = param.description;
    header.append(label);
  }
  const columns: RowColumn[] = (definition.columns ?? []).map((c) => ({ name: c.name, type: c.type }));
  const figure = root.querySelector<HTMLElement>('[data-chart="time"]')!;
  figure.hidden = !columns.some((c) => c.type === 'timestamp');
  const table = root.querySelector('table')!;
  let chart: { labels: string; drawn: TimeChart } | null = null;

  function draw(rows: Row[], scope: Scope): void {
    const drawn = rowsChart(columns, rows);
    if (!drawn) return;
    const specs: SeriesSpec[] = drawn.series.map((s, i) => ({ label: s.label, color: PALETTE[i % PALETTE.length]!, kind: s.kind }));
    const labels = JSON.stringify([specs, drawn.integers]);
    // The series follow the rows (several rows per time are summed): a new set is a new chart.
    if (chart?.labels !== labels) {
      chart?.drawn.destroy();
      figure.querySelector('figcaption')!.textContent = `${specs.map((s) => s.label).join(', ')} by ${drawn.time} (UTC)`;
      chart = { labels, drawn: timeChart(figure, specs, { yLabel: '', integers: drawn.integers, onBucket }) };
    }
    const xs = drawn.columns[0];
    const meaning = interval ? intervalFor(interval.intervals!, scope.range) : null;
    let window: TimeWindow;
    if (meaning) {
      window = windowForRows(rangeWindow(scope.nowMs, scope.range, Math.min(meaning.bucket, drawn.bucket)), xs, meaning.span > scope.range).window;
    } else if (xs.length > 0) {
      const start = Math.floor(xs[0]! / drawn.bucket) * drawn.bucket;
      window = windowForRows({ start, end: start + drawn.bucket, bucket: drawn.bucket }, xs, false).window;
    } else {
      window = rangeWindow(scope.nowMs, scope.range, 3600);
    }
    chart.drawn.update(drawn.columns, window);
  }

  return {
    root,
    controls: [...controls.values()],
    load(scope: Scope): Promise<LoadOutcome> {
      const params: Record<string, string> = {};
      for (const param of definition.params) {
        const value = param === interval ? (intervalFor(param.intervals!, scope.range)?.value ?? '') : (headerValue(param, scope) ?? controls.get(param.name)!.value.trim());
        if (value === '' && param.required) {
          view.idle(`Give “${param.name}” a value to load this endpoint.`);
          return Promise.resolve('ok');
        }
        params[param.name] = value;
      }
      return view.load<Row>(params, (rows) => {
        fillRowTable(table, columns, rows);
        draw(rows, scope);
        return rowCount(rows.length);
      });
    },
  };
}

/** The panel's markup: the same parts as the built-in panels (cache line, error, chart, table). */
function panelElement(definition: Definition): HTMLElement {
  const root = document.createElement('section');
  root.className = 'panel wide generic';
  root.dataset.endpoint = definition.name;
  root.dataset.state = 'idle';
  const header = document.createElement('header');
  const title = document.createElement('h2');
  title.textContent = definition.name;
  header.append(title);
  const description = document.createElement('p');
  description.className = 'description';
  description.textContent = definition.description ?? '';
  const line = (role: string, className: string) => {
    const p = document.createElement('p');
    p.className = className;
    p.dataset.role = role;
    return p;
  };
  const error = line('error', 'error');
  error.setAttribute('role', 'alert');
  error.hidden = true;
  const figure = document.createElement('figure');
  figure.className = 'chart';
  figure.dataset.chart = 'time';
  figure.append(document.createElement('figcaption'));
  const scroll = document.createElement('div');
  scroll.className = 'table-scroll';
  scroll.append(document.createElement('table'));
  root.append(header, description, line('cache-state', 'cache-state'), error, figure, scroll);
  return root;
}

/** A select of the declared values (a blank first when optional), or a text input; the declared default preselected. */
function controlFor(param: ParamDefinition): HTMLSelectElement | HTMLInputElement {
  const fallback = param.default === undefined ? '' : String(param.default);
  if (param.values && param.values.length > 0) {
    const select = document.createElement('select');
    const values = param.required ? param.values : ['', ...param.values];
    for (const value of values) {
      const option = document.createElement('option');
      option.value = value;
      option.textContent = value === '' ? '(not given)' : value;
      select.append(option);
    }
    select.value = values.includes(fallback) ? fallback : values[0]!;
    select.dataset.param = param.name;
    return select;
  }
  const input = document.createElement('input');
  input.value = fallback;
  input.spellcheck = false;
  input.placeholder = param.required ? 'required' : param.format === 'iso-timestamp' ? '2026-11-21T10:00:00Z' : '(not given)';
  input.dataset.param = param.name;
  return input;
}
