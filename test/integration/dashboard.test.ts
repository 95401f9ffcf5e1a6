// The dashboard in a real browser (Debian's chromium through playwright-core) against a real
// `log-endpoints serve --dashboard` process over generated logs at a fixed instant.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { build } from 'tsup';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateLogs, type GeneratedLogs } from '../../src/fixtures/generate-logs';
import { dashboardPage } from '../../tsup.dashboard.config';
import { spawnCli, waitForStdout } from '../support/cli';
import { tempDir } from '../support/log-files';
import { requireBinary } from './support/servers';

const NOW = '2026-11-21T12:00:00Z';
const KEY = 'dashboard-test-key';
/** `UPDATE_SCREENSHOTS=1 npm run test:integration` rewrites the README's screenshots in docs/. */
const WRITE_SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1';
const DOCS = new URL('../../docs/', import.meta.url);
/** The flags that keep Chromium off the network and out of the machine's profile. */
const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--no-first-run', '--disable-sync', '--disable-quic',
];

const tmp = tempDir('le-dashboard-browser-');
const children: Array<ReturnType<typeof spawnCli>> = [];
let logs: GeneratedLogs;
let url: string;
let context: BrowserContext;
let userDataDir: string;

interface Catalog {
  projects: Array<{ project: string; functionIds: string[] }>;
}

async function api<T>(path: string): Promise<T> {
  const response = await fetch(`${url}${path}`, { headers: { 'X-API-KEY': KEY } });
  expect(response.status, path).toBe(200);
  return ((await response.json()) as { result: T }).result;
}

/** A new tab (its own sessionStorage), recording console errors and requests leaving the server. */
interface Tab {
  page: Page;
  consoleErrors: string[];
  foreignRequests: string[];
  dataRequests: string[];
  /** Console errors the test provokes on purpose (Chromium logs every 4xx a fetch gets). */
  expectedErrors: Set<string>;
}
const tabs: Tab[] = [];

async function openTab(options: { fakeClock?: boolean; server?: string } = {}): Promise<Tab> {
  const server = options.server ?? url;
  const page = await context.newPage();
  const tab: Tab = { page, consoleErrors: [], foreignRequests: [], dataRequests: [], expectedErrors: new Set() };
  page.on('console', (message) => {
    if (message.type() === 'error') tab.consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => tab.consoleErrors.push(`page error: ${error.message}`));
  page.on('request', (request) => {
    const target = request.url();
    if (!target.startsWith(`${server}/`) && !target.startsWith('data:')) tab.foreignRequests.push(target);
    if (target.startsWith(`${server}/api/`)) tab.dataRequests.push(target.slice(server.length));
  });
  if (options.fakeClock) await page.clock.install();
  tabs.push(tab);
  return tab;
}

async function enterKey(page: Page, key: string): Promise<void> {
  await page.locator('#key').fill(key);
  await page.locator('#key').press('Enter');
}

/** The query string the page sends for these parameters (empty ones left out), in its order. */
function query(params: Record<string, string>): string {
  return new URLSearchParams(Object.entries(params).filter(([, v]) => v !== '')).toString();
}

/** Waits until a panel shows rows for exactly these parameters, then returns the API's rows for them. */
async function panelShows(page: Page, panel: string, endpoint: string, params: Record<string, string>): Promise<unknown[]> {
  const q = query(params);
  await page.locator(`#${panel}[data-state="ready"]`).and(page.locator(`[data-query="${q}"]`)).waitFor();
  return api<unknown[]>(`/api/endpoints/${endpoint}?${q}`);
}

interface Choice {
  project: string;
  functionId: string;
  statsInterval: string;
  usageInterval: string;
  tier: string;
}

/** Every panel drew one point (chart) or one row (table) per row of the API for the same parameters. */
async function expectPanelsMatchApi(page: Page, choice: Choice): Promise<Record<string, number>> {
  const stats = await panelShows(page, 'stats-panel', 'functions.invocation-stats', { project: choice.project, function_id: choice.functionId, interval: choice.statsInterval });
  const usage = await panelShows(page, 'usage-panel', 'usage.api-counts', { project: choice.project, interval: choice.usageInterval });
  const entries = await panelShows(page, 'logs-panel', 'logs.all', { project: choice.project, project_tier: choice.tier });
  const attribute = (selector: string, name: string) => page.locator(selector).getAttribute(name);
  expect(await attribute('#stats-panel [data-chart="latency"]', 'data-points')).toBe(String(stats.length));
  expect(await attribute('#stats-panel [data-chart="counts"]', 'data-points')).toBe(String(stats.length));
  expect(await attribute('#usage-panel [data-chart="requests"]', 'data-points')).toBe(String(usage.length));
  expect(await attribute('#logs-panel table', 'data-rows')).toBe(String(entries.length));
  expect(await page.locator('#logs-panel tr.entry').count()).toBe(entries.length);
  // uPlot drew into a canvas in each chart.
  expect(await page.locator('#panels figure canvas').count()).toBe(3);
  return { stats: stats.length, usage: usage.length, logs: entries.length };
}

beforeAll(async () => {
  const executablePath = requireBinary('chromium');
  // serve runs the TypeScript source and finds the page in dist/dashboard: build it as `npm start` does.
  await build({ ...dashboardPage, config: false, silent: true });
  logs = await generateLogs({ outDir: tmp.path('logs'), now: new Date(NOW), seed: 5, projects: 4, edgeEvents: 20_000, functionEvents: 20_000 });
  const files = logs.byFormat.ndjson!;
  const child = spawnCli(['serve', '--edge-logs', files.edgeLogs, '--function-logs', files.functionEdgeLogs, '--port', '0', '--now', NOW, '--api-key', KEY, '--dashboard']);
  children.push(child);
  [, url] = (await waitForStdout(child, /Listening on (http:\/\/127\.0\.0\.1:\d+)/)) as [string, string];
  await waitForStdout(child, /^Dashboard: http:\/\/127\.0\.0\.1:\d+\/$/m);
  userDataDir = mkdtempSync(join(tmpdir(), 'le-chromium-'));
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
    deviceScaleFactor: 1,
    timezoneId: 'UTC',
    locale: 'en-US',
  });
});

afterEach(async () => {
  for (const tab of tabs.splice(0)) {
    expect(tab.consoleErrors.filter((e) => !tab.expectedErrors.has(e)), 'console errors').toEqual([]);
    expect(tab.foreignRequests, 'requests outside the server').toEqual([]);
    await tab.page.close();
  }
});

afterAll(async () => {
  await context?.close();
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
  tmp.cleanup();
});

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
    const counts = await expectPanelsMatchApi(page, { project: busiest, functionId: '', statsInterval: '1day', usageInterval: 'daily', tier: 'PRO' });
    expect(counts.stats).toBeGreaterThan(10);
    expect(counts.usage).toBeGreaterThan(3);
    expect(counts.logs).toBe(100);
    expect(await page.locator('#project').inputValue()).toBe(busiest);
    // The lists come from the catalog and the definitions.
    expect(await page.locator('#project option').evaluateAll((os) => os.map((o) => o.getAttribute('value')))).toEqual(catalog.projects.map((p) => p.project));
    expect(await page.locator('#stats-panel select option').allTextContents()).toEqual(['5min', '15min', '1hr', '1day', '7day']);
    expect(await page.locator('#usage-panel select option').allTextContents()).toEqual(['hourly', 'daily', 'minutely']);
    expect(await page.locator('#function option').count()).toBe(catalog.projects[0]!.functionIds.length + 1);
    // Each panel says how its rows were obtained (computed now, or from the server's cache) and the engine time.
    expect(await page.locator('#stats-panel .cache-state').textContent()).toMatch(
      // The lifetime runs from the start of the computation: a slow engine leaves a few seconds less than 15 min.
      /^cache (MISS: computed now|HIT · computed \d+ s ago) · fresh for (15 min|14 min \d+ s) · engine \d+\.\d ms · [\d,]+ invocations in \d+ buckets$/,
    );
    expect(await page.locator('#logs-panel .cache-state').textContent()).toMatch(/^not cached \(BYPASS\) · engine \d+\.\d ms · the newest 100 entries$/);
    await page.locator('#refresh-now').click();
    await expect.poll(() => page.locator('#usage-panel .cache-state').textContent()).toMatch(/^cache HIT · computed \d+ s ago · fresh for (15 min|14 min \d+ s) · engine \d+\.\d ms/);
    for (const panel of ['stats-panel', 'usage-panel', 'logs-panel']) await page.locator(`#${panel}[data-state="ready"]`).waitFor();

    // The README's pictures: each panel, the log table with its newest entry opened, cut to stay small.
    await page.setViewportSize({ width: 1280, height: 1600 });
    await page.locator('#logs-panel .toggle').first().click();
    await page.mouse.move(0, 0);
    await page.evaluate('document.activeElement.blur()');
    for (const [panel, file, maxHeight] of [['stats-panel', 'dashboard-invocations.png', 1600], ['usage-panel', 'dashboard-usage.png', 1600], ['logs-panel', 'dashboard-logs.png', 420]] as const) {
      const box = (await page.locator(`#${panel}`).boundingBox())!;
      const png = await page.screenshot({ clip: { ...box, height: Math.min(box.height, maxHeight) }, animations: 'disabled', caret: 'hide' });
      expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
      if (WRITE_SCREENSHOTS) writeFileSync(new URL(file, DOCS), png);
    }
  });

  it('switches interval, function and project: each panel redraws with the API’s rows for the new choice', async () => {
    const { page } = await openTab();
    await page.goto(`${url}/`);
    await enterKey(page, KEY);
    const catalog = await api<Catalog>('/api/catalog');
    const [first, second] = catalog.projects;
    const choice: Choice = { project: first!.project, functionId: '', statsInterval: '1day', usageInterval: 'daily', tier: 'PRO' };
    const before = await expectPanelsMatchApi(page, choice);

    await page.locator('#stats-panel select').selectOption('7day');
    await page.locator('#usage-panel select').selectOption('hourly');
    await page.locator('#logs-panel select').selectOption('FREE');
    Object.assign(choice, { statsInterval: '7day', usageInterval: 'hourly', tier: 'FREE' });
    const intervals = await expectPanelsMatchApi(page, choice);
    expect(intervals.stats).not.toBe(before.stats);
    expect(intervals.usage).not.toBe(before.usage);

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
    expect(new URL(page.url()).hash).toBe(`#project=${second!.project}&function_id=${functionId}&stats_interval=7day&usage_interval=hourly&tier=FREE`);
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
    const rows = await panelShows(page, 'logs-panel', 'logs.all', { project, project_tier: 'PRO', iso_timestamp_start: '2026-11-21T11:00:00Z' });
    expect(await error.isHidden()).toBe(true);
    expect(await page.locator('#logs-panel tr.entry').count()).toBe(rows.length);
  });

  it('opens a log entry’s metadata, which stays open across refreshes', async () => {
    const { page } = await openTab();
    await page.goto(`${url}/`);
    await enterKey(page, KEY);
    await page.locator('#logs-panel[data-state="ready"]').waitFor();
    const project = await page.locator('#project').inputValue();
    const rows = (await panelShows(page, 'logs-panel', 'logs.all', { project, project_tier: 'PRO' })) as Array<{ id: string; metadata: unknown }>;
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
    const files = logs.byFormat.ndjson!;
    const open = spawnCli(['serve', '--edge-logs', files.edgeLogs, '--function-logs', files.functionEdgeLogs, '--port', '0', '--now', NOW, '--no-auth', '--dashboard', '--base-path', '/logs']);
    children.push(open);
    const [, page] = (await waitForStdout(open, /^Dashboard: (http:\/\/127\.0\.0\.1:\d+\/logs\/)$/m)) as [string, string];
    const tab = await openTab({ server: new URL(page).origin });
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
    open.kill('SIGTERM');
  });

  it('npm start (demo) prints the dashboard URL first, and the page is there', async () => {
    const demo = spawnCli(['demo', '--port', '0', '--out', tmp.path('demo'), '--events', '500', '--now', NOW, '--api-key', 'demo-key']);
    children.push(demo);
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
