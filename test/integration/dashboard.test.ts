// The dashboard in a real browser (Debian's chromium through playwright-core) against a real
// `log-endpoints serve --dashboard` process over generated logs at a fixed instant: loading,
// keys, switching, errors, refresh, base path. What the panels show a reader (axes, totals, the
// shared range, bucket clicks, user endpoints, the query box, layout) is in dashboard-reading.test.ts.
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitForStdout } from '../support/cli';
import { enterKey, expectChartDrawsRows, KEY, NOW, panelShows, startDashboard, WAIT, type Catalog, type DashboardHarness } from './support/dashboard-browser';

let harness: DashboardHarness;
let url: string;

beforeAll(async () => {
  harness = await startDashboard();
  url = harness.url;
});

afterEach(async () => {
  await harness.closeTabs();
});

afterAll(async () => {
  await harness?.stop();
});

const openTab = (options?: Parameters<DashboardHarness['openTab']>[0]) => harness.openTab(options);
const api = <T>(path: string) => harness.api<T>(path);

interface Choice {
  project: string;
  functionId: string;
  /** The shared range, and the interval each chart's endpoint is asked for with it. */
  range: string;
  statsInterval: string;
  usageIntervals: string[];
  tier: string;
}

/**
 * Every panel drew one point (chart) or one row (table) per row the API answers for the same
 * query, within the chart's window; the queries are those of the choice.
 */
async function expectPanelsMatchApi(page: Page, choice: Choice): Promise<Record<string, number>> {
  const stats = await panelShows(harness, page, 'stats-panel', 'functions.invocation-stats', { project: choice.project, function_id: choice.functionId, interval: choice.statsInterval });
  const usage = await panelShows(harness, page, 'usage-panel', 'usage.api-counts', { project: choice.project });
  expect(choice.usageIntervals).toContain(usage.query.get('interval'));
  const entries = await panelShows(harness, page, 'logs-panel', 'logs.all', { project: choice.project, project_tier: choice.tier });
  // The log entries are those of the range: after its start (the server's now less the range).
  expect(entries.query.get('iso_timestamp_start')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  const latency = await expectChartDrawsRows(page, '#stats-panel [data-chart="latency"]', stats.rows);
  expect(await expectChartDrawsRows(page, '#stats-panel [data-chart="counts"]', stats.rows)).toBe(latency);
  const usageRows = await expectChartDrawsRows(page, '#usage-panel [data-chart="requests"]', usage.rows);
  expect(await page.locator('#logs-panel table[data-role="entries"]').getAttribute('data-rows')).toBe(String(entries.rows.length));
  expect(await page.locator('#logs-panel tr.entry').count()).toBe(entries.rows.length);
  // uPlot drew into a canvas in each chart.
  expect(await page.locator('#panels figure canvas').count()).toBe(3);
  return { stats: latency, usage: usageRows, logs: entries.rows.length };
}

describe('the dashboard in Chromium', () => {
  it('loads without a key and asks for one; no data request is made before it is given', async () => {
    const { page, dataRequests } = await openTab();
    const response = await page.goto(`${url}/`);
    expect(response!.status()).toBe(200);
    expect(response!.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.locator('#key-form').waitFor();
    expect(await page.locator('#panels').isHidden()).toBe(true);
    expect(await page.locator('body').getAttribute('data-view')).toBe('key');
    expect(dataRequests).toEqual([]);
  });

  it('draws each panel with one point per row of the API, for the busiest project by default', async () => {
    const tab = await openTab();
    const { page } = tab;
    await page.goto(`${url}/dashboard`);
    await enterKey(page, KEY);
    const catalog = await api<Catalog>('/api/catalog');
    const busiest = catalog.projects[0]!.project;
    // The default range is the last day: hour buckets of invocation-stats.
    const counts = await expectPanelsMatchApi(page, { project: busiest, functionId: '', range: '1day', statsInterval: '1day', usageIntervals: ['1day', 'daily'], tier: 'PRO' });
    expect(counts.stats).toBeGreaterThan(10);
    expect(counts.usage).toBeGreaterThan(0);
    expect(counts.logs).toBe(100);
    expect(await page.locator('#project').inputValue()).toBe(busiest);
    expect(await page.locator('#range').inputValue()).toBe('1day');
    // The lists come from the catalog and the definitions: a range for each window an endpoint's intervals offer.
    expect(await page.locator('#project option').evaluateAll((os) => os.map((o) => o.getAttribute('value')))).toEqual(catalog.projects.map((p) => p.project));
    expect(await page.locator('#range option').evaluateAll((os) => os.map((o) => o.getAttribute('value')))).toEqual(expect.arrayContaining(['5min', '15min', '1hr', '1day', '7day']));
    expect(await page.locator('#function option').count()).toBe(catalog.projects[0]!.functionIds.length + 1);
    // Each panel says how its rows were obtained (computed now, or from the server's cache), the engine time and the interval asked for.
    expect(await page.locator('#stats-panel .cache-state').textContent()).toMatch(
      // The lifetime runs from the start of the computation: a slow engine leaves a few seconds less than 15 min.
      /^cache (MISS: computed now|HIT · computed \d+ s ago) · fresh for (15 min|14 min \d+ s) · engine \d+\.\d ms · interval 1day$/,
    );
    expect(await page.locator('#logs-panel .cache-state').textContent()).toMatch(/^not cached \(BYPASS\) · engine \d+\.\d ms · the newest 100 entries$/);
    await page.locator('#refresh-now').click();
    await expect.poll(() => page.locator('#usage-panel .cache-state').textContent(), WAIT).toMatch(/^cache HIT · computed \d+ s ago · fresh for (15 min|14 min \d+ s) · engine \d+\.\d ms/);
  });

  it('switches range, function and project: each panel redraws with the API’s rows for the new choice', async () => {
    const { page } = await openTab();
    await page.goto(`${url}/`);
    await enterKey(page, KEY);
    const catalog = await api<Catalog>('/api/catalog');
    const [first, second] = catalog.projects;
    const choice: Choice = { project: first!.project, functionId: '', range: '1day', statsInterval: '1day', usageIntervals: ['1day', 'daily'], tier: 'PRO' };
    const before = await expectPanelsMatchApi(page, choice);

    await page.locator('#range').selectOption('7day');
    await page.locator('#logs-panel select').selectOption('FREE');
    Object.assign(choice, { range: '7day', statsInterval: '7day', usageIntervals: ['7day', 'daily'], tier: 'FREE' });
    const range = await expectPanelsMatchApi(page, choice);
    expect(range.stats).not.toBe(before.stats);

    await page.locator('#project').selectOption(second!.project);
    choice.project = second!.project;
    const project = await expectPanelsMatchApi(page, choice);
    expect(project.stats).toBeGreaterThan(0);
    expect(await page.locator('#function option').count()).toBe(second!.functionIds.length + 1);

    const functionId = second!.functionIds[0]!;
    await page.locator('#function').selectOption(functionId);
    choice.functionId = functionId;
    await expectPanelsMatchApi(page, choice);

    // The choice is in the URL: a reload shows the same.
    expect(new URL(page.url()).hash).toBe(`#project=${second!.project}&function_id=${functionId}&range=7day&tier=FREE`);
    await page.reload();
    await expectPanelsMatchApi(page, choice);
  });

  it('shows a 401 in words and asks for the key again; the right key then opens the dashboard', async () => {
    const tab = await openTab();
    const { page } = tab;
    tab.expectedErrors.add('Failed to load resource: the server responded with a status of 401 (Unauthorized)');
    await page.goto(`${url}/`);
    await enterKey(page, 'not-the-key');
    await page.locator('#key-message', { hasText: 'The server did not accept the API key (401 unauthorized). Enter a valid key.' }).waitFor();
    expect(await page.locator('#key-form').isVisible()).toBe(true);
    expect(await page.evaluate('sessionStorage.length')).toBe(0);

    await enterKey(page, KEY);
    await page.locator('#logs-panel[data-state="ready"]').waitFor();
    expect(await page.evaluate("sessionStorage.getItem('log-endpoints.api-key')")).toBe(KEY);

    // A key that stops working mid-session (rotated away): the panels' 401 asks again.
    await page.evaluate("sessionStorage.setItem('log-endpoints.api-key', 'revoked')");
    await page.locator('#refresh-now').click();
    await page.locator('#key-message', { hasText: '(401 unauthorized)' }).waitFor();
    expect(await page.locator('#panels').isHidden()).toBe(true);
    expect(tab.consoleErrors.length).toBeGreaterThan(0);
  });

  it('shows a 400 in words, naming the refused parameter, and recovers when the value is fixed', async () => {
    const tab = await openTab();
    const { page } = tab;
    tab.expectedErrors.add('Failed to load resource: the server responded with a status of 400 (Bad Request)');
    await page.goto(`${url}/`);
    await enterKey(page, KEY);
    await page.locator('#logs-panel[data-state="ready"]').waitFor();
    const project = await page.locator('#project').inputValue();

    await page.locator('[data-param="iso_timestamp_start"]').fill('yesterday');
    await page.locator('#logs-panel [data-role="apply"]').click();
    const error = page.locator('#logs-panel [data-role="error"]');
    await error.waitFor();
    expect(await error.textContent()).toMatch(/^The server refused the parameter “iso_timestamp_start” \(400 invalid_parameter\): .+/);
    expect(await page.locator('#logs-panel').getAttribute('data-state')).toBe('error');
    // The other panels are untouched and the key is kept.
    expect(await page.locator('#stats-panel').getAttribute('data-state')).toBe('ready');
    expect(await page.locator('#key-form').isHidden()).toBe(true);

    await page.locator('[data-param="iso_timestamp_start"]').fill('2026-11-21T11:00:00Z');
    await page.locator('[data-param="iso_timestamp_start"]').press('Enter');
    const { rows } = await panelShows(harness, page, 'logs-panel', 'logs.all', { project, project_tier: 'PRO', iso_timestamp_start: '2026-11-21T11:00:00Z' });
    expect(await error.isHidden()).toBe(true);
    expect(await page.locator('#logs-panel tr.entry').count()).toBe(rows.length);
  });

  it('opens a log entry’s metadata, which stays open across refreshes', async () => {
    const { page } = await openTab();
    await page.goto(`${url}/`);
    await enterKey(page, KEY);
    await page.locator('#logs-panel[data-state="ready"]').waitFor();
    const project = await page.locator('#project').inputValue();
    const rows = (await panelShows(harness, page, 'logs-panel', 'logs.all', { project, project_tier: 'PRO' })).rows as Array<{ id: string; metadata: unknown }>;
    const metadata = page.locator('#logs-panel tr.metadata').first();
    expect(await metadata.isHidden()).toBe(true);
    await page.locator('#logs-panel .toggle').first().click();
    expect(await metadata.isVisible()).toBe(true);
    expect(JSON.parse((await metadata.textContent())!)).toEqual({ id: rows[0]!.id, metadata: rows[0]!.metadata });

    // A refresh redraws the table; the opened entry stays open.
    const refreshed = page.waitForResponse((r) => r.url().includes('/api/endpoints/logs.all?'));
    await page.locator('#refresh-now').click();
    await refreshed;
    await page.locator('#logs-panel[data-state="ready"]').waitFor();
    expect(await page.locator('#logs-panel tr.metadata').first().isVisible()).toBe(true);
    expect(await page.locator('#logs-panel tr.metadata:visible').count()).toBe(1);
  });

  it('refreshes every panel on the chosen interval, and not at all when refresh is off', async () => {
    const tab = await openTab({ fakeClock: true });
    const { page } = tab;
    await page.goto(`${url}/`);
    await enterKey(page, KEY);
    await page.locator('#logs-panel[data-state="ready"]').waitFor();
    await page.locator('#stats-panel[data-state="ready"]').waitFor();
    await page.locator('#usage-panel[data-state="ready"]').waitFor();
    const count = (endpoint: string) => tab.dataRequests.filter((r) => r.startsWith(`/api/endpoints/${endpoint}?`)).length;
    expect([count('functions.invocation-stats'), count('usage.api-counts'), count('logs.all')]).toEqual([1, 1, 1]);

    await page.clock.runFor(29_000);
    expect(count('logs.all')).toBe(1);
    const refreshed = Promise.all(['functions.invocation-stats', 'usage.api-counts', 'logs.all'].map((e) => page.waitForRequest((r) => r.url().includes(`/api/endpoints/${e}?`))));
    await page.clock.runFor(1_000);
    await refreshed;
    await page.locator('#logs-panel[data-state="ready"]').waitFor();
    expect(count('logs.all')).toBe(2);

    await page.locator('#refresh').selectOption('0');
    await page.clock.runFor(10 * 60_000);
    expect([count('functions.invocation-stats'), count('usage.api-counts'), count('logs.all')]).toEqual([2, 2, 2]);
  });

  it('under a base path and without keys (--no-auth): no key form, every request under the base path', async () => {
    const server = await harness.serve(['--no-auth', '--base-path', '/logs']);
    const page = `${server}/logs/`;
    const tab = await openTab({ server });
    await tab.page.goto(page);
    await tab.page.locator('#logs-panel[data-state="ready"]').waitFor();
    await tab.page.locator('#stats-panel[data-state="ready"]').waitFor();
    await tab.page.locator('#usage-panel[data-state="ready"]').waitFor();
    expect(await tab.page.locator('#key-form').isHidden()).toBe(true);
    expect(await tab.page.locator('#change-key').isHidden()).toBe(true);
    const paths: string[] = [];
    tab.page.on('request', (r) => paths.push(new URL(r.url()).pathname));
    await tab.page.reload();
    await tab.page.locator('#logs-panel[data-state="ready"]').waitFor();
    expect(paths.length).toBeGreaterThan(5);
    for (const path of paths) expect(path).toMatch(/^\/logs\//);
  });

  it('npm start (demo) prints the dashboard URL first, and the page is there', async () => {
    const demo = harness.spawn(['demo', '--port', '0', '--out', harness.path('demo'), '--events', '500', '--now', NOW, '--api-key', 'demo-key']);
    await waitForStdout(demo, /Ctrl\+C stops/);
    const firstLine = demo.output.stdout.split('\n')[0]!;
    const dashboardUrl = /^Dashboard: (http:\/\/127\.0\.0\.1:\d+\/) {2}\(API key: demo-key\)$/.exec(firstLine)?.[1];
    expect(dashboardUrl, firstLine).toBeDefined();
    const page = await fetch(dashboardUrl!);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<title>log-endpoints dashboard</title>');
    const exited = new Promise((resolve) => demo.on('exit', resolve));
    demo.kill('SIGINT');
    expect(await exited).toBe(0);
  });
});
