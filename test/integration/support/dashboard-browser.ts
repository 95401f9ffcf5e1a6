// The dashboard in a real browser: Debian's chromium through playwright-core, against a real
// `log-endpoints serve --dashboard` process over generated logs at a fixed instant. Shared by the
// dashboard's browser test files.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { build } from 'tsup';
import { expect } from 'vitest';
import { generateLogs, type GeneratedLogs } from '../../../src/fixtures/generate-logs';
import { dashboardPage } from '../../../tsup.dashboard.config';
import { spawnCli, waitForStdout } from '../../support/cli';
import { tempDir } from '../../support/log-files';
import { requireBinary } from './servers';

export const NOW = '2026-11-21T12:00:00Z';
export const KEY = 'dashboard-test-key';
/** The flags that keep Chromium off the network and out of the machine's profile. */
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-quic'];
/** Far above any wait of these tests on a loaded machine: a wait that ends is a pass, not a race. */
export const WAIT = { timeout: 60_000 };

/**
 * A project with a handful of events at chosen instants (before NOW): its charts have one bucket,
 * no bucket or gaps depending on the range, and its log entries sit on bucket boundaries.
 */
export const SPARSE = 'sparseprojectref0001';
export const SPARSE_ENTRIES = [
  { id: 'e1', timestamp: '2026-11-21T09:59:59.999999Z', path: '/rest/v1/a', status: 200 },
  { id: 'e2', timestamp: '2026-11-21T10:00:00.000000Z', path: '/rest/v1/b', status: 200 },
  { id: 'e3', timestamp: '2026-11-21T10:20:00.000000Z', path: '/storage/v1/c', status: 404 },
  { id: 'e4', timestamp: '2026-11-21T10:59:59.999999Z', path: '/auth/v1/d', status: 200 },
  { id: 'e5', timestamp: '2026-11-21T11:00:00.000000Z', path: '/rest/v1/e', status: 200 },
  { id: 'e6', timestamp: '2026-11-21T11:00:59.999999Z', path: '/rest/v1/f', status: 200 },
];
/** One invocation in each of the hours 08, 10 and 11: a gap at 09, and p95 = p99 in every bucket. */
export const SPARSE_INVOCATIONS = [
  { id: 'f1', timestamp: '2026-11-21T08:30:00.000000Z', ms: 40, status: 200 },
  { id: 'f2', timestamp: '2026-11-21T10:10:00.000000Z', ms: 120, status: 500 },
  { id: 'f3', timestamp: '2026-11-21T11:10:00.000000Z', ms: 80, status: 200 },
];

/** A new tab (its own sessionStorage), recording console errors and requests leaving the server. */
export interface Tab {
  page: Page;
  consoleErrors: string[];
  foreignRequests: string[];
  dataRequests: string[];
  /** Console errors the test provokes on purpose (Chromium logs every 4xx a fetch gets). */
  expectedErrors: Set<string>;
}

export interface Catalog {
  projects: Array<{ project: string; functionIds: string[] }>;
}

/** The server, the browser and the tabs of one test file. */
export interface DashboardHarness {
  url: string;
  logs: GeneratedLogs;
  context: BrowserContext;
  /** A temporary folder of the file (removed at the end). */
  path(name: string): string;
  /** `serve` with these extra flags over the same logs; killed at the end. */
  serve(flags: string[]): Promise<string>;
  spawn(args: string[]): ReturnType<typeof spawnCli>;
  api<T>(path: string): Promise<T>;
  /**
   * `fixedTime` freezes the tab's `Date` (timers still run), so the server's clock the page
   * derives stays exactly NOW; `fakeClock` takes over the timers too.
   */
  openTab(options?: { fakeClock?: boolean; fixedTime?: boolean; server?: string; viewport?: { width: number; height: number } }): Promise<Tab>;
  /** Checks each tab of the test (no console error, no request elsewhere) and closes it. */
  closeTabs(): Promise<void>;
  stop(): Promise<void>;
}

export async function startDashboard(): Promise<DashboardHarness> {
  const executablePath = requireBinary('chromium');
  // serve runs the TypeScript source and finds the page in dist/dashboard: build it as `npm start` does.
  await build({ ...dashboardPage, config: false, silent: true });
  const tmp = tempDir('le-dashboard-browser-');
  const children: Array<ReturnType<typeof spawnCli>> = [];
  const logs = await generateLogs({ outDir: tmp.path('logs'), now: new Date(NOW), seed: 5, projects: 4, edgeEvents: 20_000, functionEvents: 20_000 });
  const sparse = writeSparseLogs(tmp.path.bind(tmp));
  const files = logs.byFormat.ndjson!;
  const sources = ['--edge-logs', files.edgeLogs, '--edge-logs', sparse.edge, '--function-logs', files.functionEdgeLogs, '--function-logs', sparse.functions];
  const spawn = (args: string[]) => {
    const child = spawnCli(args);
    children.push(child);
    return child;
  };
  const serve = async (flags: string[]) => {
    const child = spawn(['serve', ...sources, '--port', '0', '--now', NOW, '--dashboard', ...flags]);
    const [, url] = (await waitForStdout(child, /Listening on (http:\/\/127\.0\.0\.1:\d+)/)) as [string, string];
    await waitForStdout(child, /^Dashboard: http:\/\/127\.0\.0\.1:\d+\/\S*$/m);
    return url;
  };
  const url = await serve(['--api-key', KEY]);
  const userDataDir = mkdtempSync(join(tmpdir(), 'le-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
    deviceScaleFactor: 1,
    timezoneId: 'UTC',
    locale: 'en-US',
  });
  const tabs: Tab[] = [];
  return {
    url,
    logs,
    context,
    path: (name) => tmp.path(name),
    serve,
    spawn,
    async api<T>(path: string): Promise<T> {
      const response = await fetch(`${url}${path}`, { headers: { 'X-API-KEY': KEY } });
      expect(response.status, path).toBe(200);
      return ((await response.json()) as { result: T }).result;
    },
    async openTab(options = {}) {
      const server = options.server ?? url;
      const page = await context.newPage();
      if (options.viewport) await page.setViewportSize(options.viewport);
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
      if (options.fixedTime) await page.clock.setFixedTime(Date.now());
      tabs.push(tab);
      return tab;
    },
    async closeTabs() {
      for (const tab of tabs.splice(0)) {
        expect(
          tab.consoleErrors.filter((e) => !tab.expectedErrors.has(e)),
          'console errors',
        ).toEqual([]);
        expect(tab.foreignRequests, 'requests outside the server').toEqual([]);
        await tab.page.close();
      }
    },
    async stop() {
      await context.close();
      for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(userDataDir, { recursive: true, force: true });
      tmp.cleanup();
    },
  };
}

/** The sparse project's gateway and function logs, as the real logs would carry them. */
function writeSparseLogs(path: (name: string) => string): { edge: string; functions: string } {
  const edge = path('sparse-edge.ndjson');
  const functions = path('sparse-functions.ndjson');
  const line = (event: object) => `${JSON.stringify(event)}\n`;
  writeFileSync(
    edge,
    SPARSE_ENTRIES.map((e) => {
      const url = `https://${SPARSE}.supabase.co${e.path}`;
      return line({
        id: e.id,
        timestamp: e.timestamp,
        project: SPARSE,
        event_message: `GET | ${e.status} | ${url}`,
        metadata: { request: { method: 'GET', path: e.path, search: '', url, host: `${SPARSE}.supabase.co` }, response: { status_code: e.status } },
      });
    }).join(''),
  );
  writeFileSync(
    functions,
    SPARSE_INVOCATIONS.map((f) =>
      line({
        id: f.id,
        timestamp: f.timestamp,
        event_message: `GET | ${f.status} | https://${SPARSE}.supabase.co/functions/v1/hello`,
        metadata: { project_ref: SPARSE, function_id: 'hello', execution_time_ms: f.ms, request: { method: 'GET', pathname: '/hello' }, response: { status_code: f.status } },
      }),
    ).join(''),
  );
  return { edge, functions };
}

export async function enterKey(page: Page, key: string = KEY): Promise<void> {
  await page.locator('#key').fill(key);
  await page.locator('#key').press('Enter');
}

/**
 * Waits until a panel shows rows for a query with these parameters (an empty value: absent),
 * then returns that query and the API's rows for exactly it.
 */
export async function panelShows(harness: DashboardHarness, page: Page, panel: string, endpoint: string, expected: Record<string, string>): Promise<{ query: URLSearchParams; rows: unknown[] }> {
  const root = page.locator(panel.startsWith('[') ? panel : `#${panel}`);
  let query = '';
  await expect
    .poll(async () => {
      if ((await root.getAttribute('data-state')) !== 'ready') return false;
      query = (await root.getAttribute('data-query')) ?? '';
      const params = new URLSearchParams(query);
      return Object.entries(expected).every(([name, value]) => (params.get(name) ?? '') === value);
    }, WAIT)
    .toBe(true);
  return { query: new URLSearchParams(query), rows: await harness.api<unknown[]>(`/api/endpoints/${endpoint}?${query}`) };
}

/** `2026-11-21T10:00:00.000000Z` (any fractional digits) as Unix milliseconds. */
export function ms(timestamp: string): number {
  return Date.parse(timestamp.replace(/(\.\d{3})\d*Z$/, '$1Z'));
}

/** What a chart says it drew: its x scale (ms), its rows and the y values it labelled. */
export async function chartState(page: Page, figure: string): Promise<{ xMin: number; xMax: number; points: number; yTicks: number[]; empty: string | null }> {
  const locator = page.locator(figure);
  const attribute = async (name: string) => (await locator.getAttribute(name)) ?? '';
  return {
    xMin: Date.parse(await attribute('data-x-min')),
    xMax: Date.parse(await attribute('data-x-max')),
    points: Number(await attribute('data-points')),
    yTicks: (await attribute('data-y-ticks')).split(',').filter(Boolean).map(Number),
    empty: await locator.getAttribute('data-empty'),
  };
}

/** The rows of an answer whose bucket lies in the chart's x range: the ones it draws. */
export async function expectChartDrawsRows(page: Page, figure: string, rows: unknown[]): Promise<number> {
  const chart = await chartState(page, figure);
  const inside = (rows as Array<{ timestamp: string }>).filter((r) => ms(r.timestamp) >= chart.xMin && ms(r.timestamp) < chart.xMax);
  expect(chart.points, figure).toBe(inside.length);
  return inside.length;
}

/** Client x of an instant on a chart: its plotting area spans its x scale. */
export async function chartX(page: Page, figure: string, atMs: number): Promise<{ x: number; top: number; bottom: number }> {
  const chart = await chartState(page, figure);
  const area = (await page.locator(`${figure} .u-over`).boundingBox())!;
  return { x: area.x + ((atMs - chart.xMin) / (chart.xMax - chart.xMin)) * area.width, top: area.y, bottom: area.y + area.height };
}

/**
 * The colours drawn in a chart's canvas in a column three pixels wide at an instant, top to
 * bottom of the plotting area, as `#rrggbb` (read back from the canvas itself). Only opaque
 * pixels count: the grid is drawn translucent, and so are a line's anti-aliased edges.
 */
export async function colorsAt(page: Page, figure: string, atMs: number): Promise<Set<string>> {
  const { x, top, bottom } = await chartX(page, figure, atMs);
  const colors = await page.locator(`${figure} canvas`).evaluate(
    (element, area: { x: number; top: number; bottom: number }) => {
      // The test's types have no DOM: the canvas as far as this function uses it.
      const canvas = element as unknown as {
        width: number;
        getBoundingClientRect(): { left: number; top: number; width: number };
        getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } };
      };
      const box = canvas.getBoundingClientRect();
      const scale = canvas.width / box.width;
      const left = Math.round((area.x - box.left) * scale) - 1;
      const y = Math.round((area.top - box.top) * scale);
      const data = canvas.getContext('2d')!.getImageData(left, y, 3, Math.round((area.bottom - area.top) * scale)).data;
      const found: string[] = [];
      for (let i = 0; i < data.length; i += 4) if (data[i + 3]! >= 250) found.push(`#${[data[i]!, data[i + 1]!, data[i + 2]!].map((c) => c.toString(16).padStart(2, '0')).join('')}`);
      return found;
    },
    { x, top, bottom },
  );
  return new Set(colors);
}
