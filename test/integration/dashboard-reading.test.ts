// What the dashboard shows a reader, in a real browser (Debian's chromium) against a real
// `log-endpoints serve --dashboard`: time axes that are the range's, whole-number counts, gaps at
// empty buckets, p95 and p99 both visible, one range for every panel, window totals and error
// rates, a bucket click that opens that bucket's log entries, panels for endpoints the page has
// never seen, the query box of a sandboxable logs.all, and a layout for 1280 px and for a phone.
// Most tests use the sparse project (a handful of events at chosen instants) and a tab whose
// clock is frozen, so the server's now the page derives is exactly NOW.
import { writeFileSync } from 'node:fs';
import type { Page, Route } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  chartState,
  chartX,
  colorsAt,
  enterKey,
  expectChartDrawsRows,
  ms,
  panelShows,
  SPARSE,
  SPARSE_ENTRIES,
  startDashboard,
  WAIT,
  type Catalog,
  type DashboardHarness,
} from './support/dashboard-browser';
import { p as param } from '../../src/index';

/** `UPDATE_SCREENSHOTS=1 npm run test:integration` rewrites the screenshots of docs/dashboard.md. */
const WRITE_SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1';
const DOCS = new URL('../../docs/', import.meta.url);

const STATS = '#stats-panel';
const LATENCY = '#stats-panel [data-chart="latency"]';
const COUNTS = '#stats-panel [data-chart="counts"]';
const REQUESTS = '#usage-panel [data-chart="requests"]';
/** The colours of the latency lines (src/dashboard/page/stats-panel.ts). */
const P95 = '#fdba74';
const P99 = '#dc2626';
const AVERAGE = '#64748b';

let harness: DashboardHarness;

beforeAll(async () => {
  harness = await startDashboard();
});

afterEach(async () => {
  await harness.closeTabs();
});

afterAll(async () => {
  await harness?.stop();
});

/** A tab on the dashboard with these choices in its URL, its clock frozen, every panel drawn. */
async function openDashboard(fragment: string, options: { viewport?: { width: number; height: number }; before?: (page: Page) => Promise<void> } = {}) {
  const tab = await harness.openTab({ fixedTime: true, ...(options.viewport ? { viewport: options.viewport } : {}) });
  await options.before?.(tab.page);
  await tab.page.goto(`${harness.url}/#${fragment}`);
  await enterKey(tab.page);
  await allReady(tab.page);
  return tab;
}

async function allReady(page: Page): Promise<void> {
  for (const panel of ['stats-panel', 'usage-panel', 'logs-panel']) await page.locator(`#${panel}[data-state="ready"]`).waitFor(WAIT);
}

/** Waits until a panel's chart shows the range and returns what it drew. */
async function chartOfRange(page: Page, figure: string, xMin: string) {
  await expect.poll(async () => (await chartState(page, figure)).xMin, WAIT).toBe(Date.parse(xMin));
  return chartState(page, figure);
}

/** The figures of a panel's totals line, by their `data-total` name. */
async function totals(page: Page, panel: string): Promise<Record<string, string>> {
  const items = page.locator(`${panel} [data-role="totals"] [data-total]`);
  const entries = await items.evaluateAll((spans) => spans.map((s) => [s.getAttribute('data-total')!, s.querySelector('b')!.textContent!]));
  return Object.fromEntries(entries);
}

/** The ids of the log entries the table shows, newest first (from each entry's opened metadata). */
async function shownEntryIds(page: Page): Promise<string[]> {
  const texts = await page.locator('#logs-panel tr.metadata pre').allTextContents();
  return texts.map((t) => (JSON.parse(t) as { id: string }).id);
}

describe('time axes, counts and lines', () => {
  it('a one-bucket chart keeps the range as its time axis (not years), and a chart without rows too (not 1970)', async () => {
    const { page } = await openDashboard(`project=${SPARSE}&range=1hr`);
    // The last hour before NOW in minute buckets: 11:00 to the end of the 12:00 bucket.
    const usage = await chartOfRange(page, REQUESTS, '2026-11-21T11:00:00.000Z');
    expect(usage.points).toBe(1);
    expect(usage.xMax).toBe(Date.parse('2026-11-21T12:01:00.000Z'));
    expect(usage.empty).toBeNull();

    await page.locator('#range').selectOption('5min');
    for (const figure of [LATENCY, COUNTS]) {
      const empty = await chartOfRange(page, figure, '2026-11-21T11:55:00.000Z');
      // Second buckets: the window ends with the bucket holding NOW.
      expect(empty.xMax).toBe(Date.parse('2026-11-21T12:00:01.000Z'));
      expect(empty.points).toBe(0);
      expect(empty.empty).toBe('No data in this window.');
    }
    // The test's types have no DOM: the page's getComputedStyle as far as it is used here.
    const style = (f: unknown) => (globalThis as unknown as { getComputedStyle(e: unknown, pseudo: string): { content: string } }).getComputedStyle(f, '::after').content;
    expect(await page.locator(LATENCY).evaluate(style)).toBe('"No data in this window."');
  });

  it('count axes tick whole numbers only', async () => {
    const { page } = await openDashboard(`project=${SPARSE}&range=1day`);
    // One invocation per bucket and at most two requests: a linear axis would label 0.25 steps.
    const counts = await chartOfRange(page, COUNTS, '2026-11-20T12:00:00.000Z');
    expect(counts.points).toBe(3);
    expect(counts.yTicks).toContain(1);
    expect(counts.yTicks.every(Number.isInteger)).toBe(true);
    await page.locator('#range').selectOption('1hr');
    const requests = await chartOfRange(page, REQUESTS, '2026-11-21T11:00:00.000Z');
    expect(requests.yTicks).toContain(2);
    expect(requests.yTicks.every(Number.isInteger)).toBe(true);
  });

  it('breaks lines at empty buckets, draws a lone bucket as a point, and keeps p95 visible where it equals p99', async () => {
    const { page } = await openDashboard(`project=${SPARSE}&range=1day`);
    await chartOfRange(page, LATENCY, '2026-11-20T12:00:00.000Z');
    const at = (time: string) => colorsAt(page, LATENCY, ms(time));
    // Buckets 08, 10 and 11 hold one invocation each, 09 none: nothing is drawn across 09.
    const gap = await at('2026-11-21T09:30:00Z');
    expect([P95, P99, AVERAGE].filter((c) => gap.has(c))).toEqual([]);
    // Between the neighbours 10 and 11 the lines are drawn; with one invocation, p95 = p99 = average there.
    const joined = await at('2026-11-21T11:00:00Z');
    expect(joined.has(P95), 'p95 visible beside p99').toBe(true);
    expect(joined.has(P99), 'p99 visible').toBe(true);
    // Bucket 08 has no neighbour: its values are points, both visible.
    const lone = await at('2026-11-21T08:30:00Z');
    expect(lone.has(P95) && lone.has(P99)).toBe(true);
  });
});

describe('one range, totals, and a bucket’s log entries', () => {
  it('shows window totals and error rates in each panel', async () => {
    const { page } = await openDashboard(`project=${SPARSE}&range=1day`);
    await chartOfRange(page, COUNTS, '2026-11-20T12:00:00.000Z');
    // Three invocations, the one of 10:10 failed (500); six requests, one 404.
    expect(await totals(page, STATS)).toEqual({ invocations: '3', errors: '1', 'error-rate': '33.3 %' });
    expect(await totals(page, '#usage-panel')).toEqual({ requests: '6', rest: '4', storage: '1', auth: '1', realtime: '0' });
    expect(await totals(page, '#logs-panel')).toEqual({ entries: '6', errors: '1', 'error-rate': '16.7 %' });
    expect(await page.locator(`${STATS} [data-total="errors"]`).getAttribute('class')).toBe('bad');
  });

  it('totals are those of the API’s rows in the window, for a busy project too', async () => {
    const catalog = await harness.api<Catalog>('/api/catalog');
    const busiest = catalog.projects[0]!.project;
    const { page } = await openDashboard(`project=${busiest}&range=1day`);
    const stats = await panelShows(harness, page, 'stats-panel', 'functions.invocation-stats', { project: busiest, interval: '1day' });
    const rows = stats.rows as Array<{ timestamp: string; count: number; error_count: number }>;
    const invocations = rows.reduce((n, r) => n + r.count, 0);
    const errors = rows.reduce((n, r) => n + r.error_count, 0);
    expect(await expectChartDrawsRows(page, COUNTS, rows)).toBe(rows.length);
    expect(await totals(page, STATS)).toEqual({
      invocations: invocations.toLocaleString('en-US'),
      errors: errors.toLocaleString('en-US'),
      'error-rate': `${Number(((100 * errors) / invocations).toFixed(1)).toLocaleString('en-US')} %`,
    });
    const logs = await panelShows(harness, page, 'logs-panel', 'logs.all', { project: busiest });
    const failed = (logs.rows as Array<{ metadata: { response?: { status_code?: number } } }>).filter((r) => (r.metadata.response?.status_code ?? 0) >= 400).length;
    expect(await totals(page, '#logs-panel')).toMatchObject({ entries: String(logs.rows.length), errors: String(failed) });
  });

  it('one range for every panel: the same x axis on each chart, and the log entries of the same span', async () => {
    const catalog = await harness.api<Catalog>('/api/catalog');
    const busiest = catalog.projects[0]!.project;
    const { page } = await openDashboard(`project=${busiest}&range=1day`);
    for (const [range, start, logsStart] of [
      ['1hr', '2026-11-21T11:00:00.000Z', '2026-11-21T11:00:00.000000Z'],
      ['7day', '2026-11-14T00:00:00.000Z', '2026-11-14T12:00:00.000000Z'],
    ] as const) {
      await page.locator('#range').selectOption(range);
      // The same start everywhere; the requests chart may run further right, as usage.api-counts also counts events stamped after now.
      const [latency, counts, requests] = await Promise.all([LATENCY, COUNTS, REQUESTS].map((figure) => chartOfRange(page, figure, start)));
      expect(latency!.xMax).toBe(counts!.xMax);
      expect(requests!.xMax).toBeGreaterThanOrEqual(counts!.xMax);
      await panelShows(harness, page, 'logs-panel', 'logs.all', { project: busiest, iso_timestamp_start: logsStart });
      expect(new URL(page.url()).hash).toContain(`range=${range}`);
    }
  });

  it('a click on a chart bucket opens the log entries of that bucket, its first and last microsecond included', async () => {
    const { page } = await openDashboard(`project=${SPARSE}&range=1day`);
    await chartOfRange(page, COUNTS, '2026-11-20T12:00:00.000Z');
    // The hour bucket 10:00 of the invocation counts.
    const hour = await chartX(page, COUNTS, ms('2026-11-21T10:30:00Z'));
    await page.mouse.click(hour.x, (hour.top + hour.bottom) / 2);
    const bucket = { project: SPARSE, iso_timestamp_start: '2026-11-21T09:59:59.999999Z', iso_timestamp_end: '2026-11-21T10:59:59.999999Z' };
    const { rows } = await panelShows(harness, page, 'logs-panel', 'logs.all', bucket);
    // 10:00:00.000000 and 10:59:59.999999 are in; 09:59:59.999999 and 11:00:00.000000 are not.
    expect((rows as Array<{ id: string }>).map((r) => r.id)).toEqual(['e4', 'e3', 'e2']);
    expect(await shownEntryIds(page)).toEqual(['e4', 'e3', 'e2']);
    expect(await page.locator('#logs-panel [data-role="bucket"]').textContent()).toBe('Entries of the bucket 2026-11-21 10:00 (UTC), from a click in a chart.');
    expect(await totals(page, '#logs-panel')).toEqual({ entries: '3', errors: '1', 'error-rate': '33.3 %' });
    expect(new URL(page.url()).hash).toContain('after=2026-11-21T09%3A59%3A59.999999Z&until=2026-11-21T10%3A59%3A59.999999Z');

    // A minute bucket of the requests chart: the same rule at the minute's edges.
    await page.locator('#range').selectOption('1hr');
    await chartOfRange(page, REQUESTS, '2026-11-21T11:00:00.000Z');
    const minute = await chartX(page, REQUESTS, ms('2026-11-21T11:00:30Z'));
    await page.mouse.click(minute.x, (minute.top + minute.bottom) / 2);
    await panelShows(harness, page, 'logs-panel', 'logs.all', { project: SPARSE, iso_timestamp_start: '2026-11-21T10:59:59.999999Z', iso_timestamp_end: '2026-11-21T11:00:59.999999Z' });
    expect(await shownEntryIds(page)).toEqual(['e6', 'e5']);

    // Back to the range: the entries of the last hour again (after its start, NOW less an hour).
    await page.locator('#logs-panel [data-role="clear"]').click();
    await panelShows(harness, page, 'logs-panel', 'logs.all', { project: SPARSE, iso_timestamp_start: '2026-11-21T11:00:00.000000Z', iso_timestamp_end: '' });
    expect(await shownEntryIds(page)).toEqual(['e6']);
    expect(await page.locator('#logs-panel [data-role="bucket"]').isHidden()).toBe(true);
    expect(SPARSE_ENTRIES.map((e) => e.id)).toContain('e6');
  });
});

/** The definitions the server lists, plus these: what the page would get from a server with user endpoints. */
async function serveDefinitions(page: Page, change: (definitions: Array<Record<string, unknown>>) => void): Promise<void> {
  await page.route(
    (u) => u.pathname === '/api/endpoints',
    async (route) => {
      const response = await route.fetch();
      const body = (await response.json()) as { result: Array<Record<string, unknown>> };
      change(body.result);
      await route.fulfill({ response, json: body });
    },
  );
}

/** Answers one endpoint's queries with `answer(params)`; records each query. */
async function stubEndpoint(page: Page, name: string, answer: (params: URLSearchParams) => { status: number; json: unknown } | null): Promise<URLSearchParams[]> {
  const seen: URLSearchParams[] = [];
  await page.route(
    (u) => u.pathname === `/api/endpoints/${name}`,
    async (route: Route) => {
      const params = new URL(route.request().url()).searchParams;
      const stub = answer(params);
      if (stub === null) return route.fallback();
      seen.push(params);
      await route.fulfill({ status: stub.status, json: stub.json, headers: { 'X-Cache': 'BYPASS', 'Server-Timing': 'engine;dur=1.5', 'Cache-Control': 'no-store' } });
    },
  );
  return seen;
}

const BY_ROUTE = {
  name: 'errors.by-route',
  id: '8b0e6c52-0d2a-4f0c-9d43-0c3c6a1f2b11',
  description: 'Requests and errors per route and bucket.',
  maxRows: 1000,
  cache: null,
  sandboxed: false,
  params: [
    { name: 'project', required: true, description: 'Project ref.', format: 'text' },
    // As a server describes a one-of of intervals: with what each value means (the page knows no table of its own).
    { name: 'interval', required: true, description: 'Window.', format: 'one-of', values: ['1hr', '1day', '7day'], intervals: param.oneOf(['1hr', '1day', '7day']).spec.intervals },
    { name: 'min_status', required: false, description: 'Lowest status counted as an error.', format: 'text', values: ['400', '500'] },
  ],
  columns: [
    { name: 'timestamp', type: 'timestamp', description: 'Bucket start.' },
    { name: 'route', type: 'text', description: 'Route.' },
    { name: 'requests', type: 'integer', description: 'Requests.' },
    { name: 'errors', type: 'integer', description: 'Errors.' },
  ],
};
const SLOW = {
  name: 'slow.queries',
  id: '0f3a2d1e-5b6c-4d7e-8f90-a1b2c3d4e5f6',
  description: 'The slowest statements of a table.',
  maxRows: 100,
  cache: { ttlSeconds: 60, warmingSeconds: 0 },
  sandboxed: false,
  params: [
    { name: 'project', required: true, description: 'Project ref, a pattern.', format: 'regex' },
    { name: 'table', required: true, description: 'Table name.', format: 'text' },
  ],
  columns: [
    { name: 'query', type: 'text', description: 'Statement.' },
    { name: 'calls', type: 'integer', description: 'Calls.' },
    { name: 'mean_ms', type: 'float', description: 'Mean time.' },
    { name: 'plan', type: 'json', description: 'Plan.' },
  ],
};

describe('endpoints the page has never seen, and the query box', () => {
  it('lists user endpoints as panels made from their description: parameters, a table of the columns, a time chart', async () => {
    let byRoute: URLSearchParams[] = [];
    let slow: URLSearchParams[] = [];
    const { page } = await openDashboard(`project=${SPARSE}&range=1day`, {
      before: async (p) => {
        await serveDefinitions(p, (definitions) => definitions.push(BY_ROUTE, SLOW));
        byRoute = await stubEndpoint(p, 'errors.by-route', () => ({
          status: 200,
          json: {
            result: [
              { timestamp: '2026-11-21T10:00:00.000000Z', route: '/rest/v1/a', requests: 5, errors: 1 },
              { timestamp: '2026-11-21T10:00:00.000000Z', route: '/rest/v1/b', requests: 3, errors: 0 },
              { timestamp: '2026-11-21T11:00:00.000000Z', route: '/rest/v1/a', requests: 2, errors: 2 },
            ],
          },
        }));
        slow = await stubEndpoint(p, 'slow.queries', () => ({ status: 200, json: { result: [{ query: 'select * from users', calls: 1200, mean_ms: 12.3456, plan: { node: 'Seq Scan' } }] } }));
      },
    });
    const panel = page.locator('[data-endpoint="errors.by-route"]');
    await panel.and(page.locator('[data-state="ready"]')).waitFor(WAIT);
    expect(await panel.locator('h2').textContent()).toBe('errors.by-route');
    expect(await panel.locator('.description').textContent()).toBe('Requests and errors per route and bucket.');
    // The header's project and range drive the well-known parameters; the others get controls.
    expect(byRoute.at(-1)!.toString()).toBe(`project=${SPARSE}&interval=1day`);
    const table = panel.locator('.table-scroll table');
    expect(await table.locator('th').allTextContents()).toEqual(['timestamp', 'route', 'requests', 'errors']);
    expect(await table.locator('tbody tr').count()).toBe(3);
    expect(await table.locator('tbody tr').first().locator('td').allTextContents()).toEqual(['2026-11-21 10:00:00.000', '/rest/v1/a', '5', '1']);
    // Two rows share 10:00: the integer columns are summed per time, one point each.
    const figure = '[data-endpoint="errors.by-route"] [data-chart="time"]';
    expect(await page.locator(figure).isVisible()).toBe(true);
    expect(await page.locator(`${figure} figcaption`).textContent()).toBe('requests (sum), errors (sum) by timestamp (UTC)');
    expect((await chartState(page, figure)).points).toBe(2);
    expect(await page.locator(`${figure} canvas`).count()).toBe(1);

    await panel.locator('select[data-param="min_status"]').selectOption('500');
    await expect.poll(() => byRoute.at(-1)?.get('min_status'), WAIT).toBe('500');
    await page.locator('#range').selectOption('7day');
    await expect.poll(() => byRoute.at(-1)?.get('interval'), WAIT).toBe('7day');

    // A required parameter without a value: the panel says so and asks nothing.
    const other = page.locator('[data-endpoint="slow.queries"]');
    expect(await other.getAttribute('data-state')).toBe('idle');
    expect(await other.locator('[data-role="cache-state"]').textContent()).toBe('Give “table” a value to load this endpoint.');
    expect(slow).toEqual([]);
    // No timestamp column: a table only.
    expect(await other.locator('[data-chart="time"]').isHidden()).toBe(true);
    await other.locator('input[data-param="table"]').fill('users');
    await other.locator('input[data-param="table"]').press('Tab');
    await other.and(page.locator('[data-state="ready"]')).waitFor(WAIT);
    // A pattern parameter gets the project as a pattern matching itself.
    expect(slow.at(-1)!.toString()).toBe(`project=${SPARSE}&table=users`);
    expect(await other.locator('.table-scroll tbody td').allTextContents()).toEqual(['select * from users', '1,200', '12.346', '{"node":"Seq Scan"}']);
    expect(await other.locator('[data-role="cache-state"]').textContent()).toBe('not cached (BYPASS) · engine 1.5 ms · 1 row');
  });

  it('shows a query box only for a sandboxable logs.all; sends the SELECT with the usual parameters, its 400 invalid_sql in words', async () => {
    const plain = await openDashboard(`project=${SPARSE}&range=1day`);
    expect(await plain.page.locator('#logs-panel [data-role="sql-form"]').isHidden()).toBe(true);

    let sent: URLSearchParams[] = [];
    const tab = await openDashboard(`project=${SPARSE}&range=1day`, {
      before: async (p) => {
        await serveDefinitions(p, (definitions) => {
          const logs = definitions.find((d) => d.name === 'logs.all')!;
          logs.sandboxed = true;
        });
        sent = await stubEndpoint(p, 'logs.all', (params) => {
          const sql = params.get('sql');
          if (sql === null) return null;
          if (/drop/i.test(sql)) return { status: 400, json: { error: { code: 'invalid_sql', message: 'Only a SELECT is allowed (rule: one-select).' } } };
          return {
            status: 200,
            json: {
              result: [
                { status: 200, requests: 5 },
                { status: 404, requests: 1 },
              ],
            },
          };
        });
      },
    });
    const { page } = tab;
    tab.expectedErrors.add('Failed to load resource: the server responded with a status of 400 (Bad Request)');
    const form = page.locator('#logs-panel [data-role="sql-form"]');
    expect(await form.isVisible()).toBe(true);

    await form.locator('textarea').fill('drop table edge_logs');
    await form.locator('button[type="submit"]').click();
    const error = page.locator('#logs-panel [data-role="error"]');
    await error.waitFor(WAIT);
    expect(await error.textContent()).toBe('The server refused your query (400 invalid_sql): Only a SELECT is allowed (rule: one-select).');
    expect(Object.fromEntries(sent[0]!)).toEqual({
      project: SPARSE,
      project_tier: 'PRO',
      iso_timestamp_start: '2026-11-20T12:00:00.000000Z',
      sql: 'drop table edge_logs',
    });

    await form.locator('textarea').fill('select status, count(*) as requests from edge_logs group by status');
    await form.locator('button[type="submit"]').click();
    const rows = page.locator('#logs-panel table[data-role="sql-rows"]');
    await rows.and(page.locator('[data-rows="2"]')).waitFor(WAIT);
    expect(await error.isHidden()).toBe(true);
    expect(await rows.locator('th').allTextContents()).toEqual(['status', 'requests']);
    expect(await rows.locator('tbody td').allTextContents()).toEqual(['200', '5', '404', '1']);
    expect(await page.locator('#logs-panel table[data-role="entries"]').isHidden()).toBe(true);

    await form.locator('[data-role="sql-clear"]').click();
    await panelShows(harness, page, 'logs-panel', 'logs.all', { project: SPARSE, sql: '' });
    expect(await page.locator('#logs-panel table[data-role="entries"]').isVisible()).toBe(true);
    expect(await page.locator('#logs-panel tr.entry').count()).toBe(6);
  });
});

describe('layout', () => {
  it('keeps the header on one line at 1280 px; at phone width the charts shrink to the screen and grow back', async () => {
    const catalog = await harness.api<Catalog>('/api/catalog');
    const busiest = catalog.projects[0]!;
    // The longest texts the header holds: the busiest project and a function id (a UUID).
    const { page } = await openDashboard(`project=${busiest.project}&function_id=${busiest.functionIds[0]}&range=1day`);
    const middles = await page.locator('header.bar > *:not([hidden])').evaluateAll((items) => items.map((i) => i.getBoundingClientRect()).map((r) => r.top + r.height / 2));
    expect(middles.length).toBe(7);
    expect(Math.max(...middles) - Math.min(...middles)).toBeLessThanOrEqual(3);
    expect((await page.locator('header.bar').boundingBox())!.height).toBeLessThan(60);
    const wide = await canvasWidths(page);

    await page.setViewportSize({ width: 390, height: 844 });
    await expect.poll(async () => Math.max(...(await canvasWidths(page))), WAIT).toBeLessThanOrEqual(390 - 32);
    // Nothing wider than the screen: no sideways scrolling.
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBe(390);
    for (const box of await page.locator('#panels canvas').evaluateAll((cs) => cs.map((c) => c.getBoundingClientRect().right))) expect(box).toBeLessThanOrEqual(390);

    await page.setViewportSize({ width: 1280, height: 900 });
    await expect.poll(async () => canvasWidths(page), WAIT).toEqual(wide);
  });

  it('takes the screenshots of the docs at 1280 px and at phone width', async () => {
    const catalog = await harness.api<Catalog>('/api/catalog');
    const busiest = catalog.projects[0]!.project;
    const { page } = await openDashboard(`project=${busiest}&range=1day`, { viewport: { width: 1280, height: 1400 } });
    await chartOfRange(page, COUNTS, '2026-11-20T12:00:00.000Z');
    // The log entries of one bucket.
    const bucket = await chartX(page, COUNTS, ms('2026-11-21T09:30:00Z'));
    await page.mouse.click(bucket.x, (bucket.top + bucket.bottom) / 2);
    await panelShows(harness, page, 'logs-panel', 'logs.all', { project: busiest, iso_timestamp_start: '2026-11-21T08:59:59.999999Z' });
    await page.mouse.move(0, 0);
    await page.evaluate('document.activeElement.blur()');
    const shots: Array<[string, { x: number; y: number; width: number; height: number }]> = [];
    for (const [panel, file, maxHeight] of [
      ['stats-panel', 'dashboard-invocations.png', 1000],
      ['usage-panel', 'dashboard-usage.png', 1000],
      ['logs-panel', 'dashboard-logs.png', 320],
    ] as const) {
      const box = (await page.locator(`#${panel}`).boundingBox())!;
      shots.push([file, { ...box, height: Math.min(box.height, maxHeight) }]);
    }
    for (const [file, clip] of shots) await shoot(page, file, clip);

    await page.setViewportSize({ width: 390, height: 1400 });
    await expect.poll(async () => Math.max(...(await canvasWidths(page))), WAIT).toBeLessThanOrEqual(390 - 32);
    await page.evaluate('window.scrollTo(0, 0)');
    await shoot(page, 'dashboard-phone.png', { x: 0, y: 0, width: 390, height: 1100 });
  });
});

async function canvasWidths(page: Page): Promise<number[]> {
  return page.locator('#panels canvas').evaluateAll((cs) => cs.map((c) => Math.round(c.getBoundingClientRect().width)));
}

async function shoot(page: Page, file: string, clip: { x: number; y: number; width: number; height: number }): Promise<void> {
  const png = await page.screenshot({ clip, animations: 'disabled', caret: 'hide' });
  expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  if (WRITE_SCREENSHOTS) writeFileSync(new URL(file, DOCS), png);
}
