// The dashboard page: asks for the key once, then draws the three endpoints for a project.
import 'uplot/dist/uPlot.min.css';
import './dashboard.css';
import { apiGet, apiKey } from './api';
import { genericPanel } from './generic-panel';
import { logsPanel } from './logs-panel';
import { fillSelect, PanelView, type Definition, type LoadOutcome, type Scope } from './panel-view';
import { statsPanel } from './stats-panel';
import { clockOffset, intervalParam, rangeChoices, rangeSeconds } from './time-range';
import { usagePanel } from './usage-panel';
import { formatViewState, parseViewState, pick, type ViewState } from './view-state';
import { errorInWords } from './words';

/** The endpoints with a panel of their own; any other gets a panel made from its description. */
const BUILT_IN = ['functions.invocation-stats', 'usage.api-counts', 'logs.all'];
/** How far back the catalog looks (its default); its `since` tells the server's clock. */
const CATALOG_DAYS = 7;

interface CatalogProject {
  project: string;
  requests: number;
  invocations: number;
  functionIds: string[];
}

const base = document.body.dataset.base ?? '';
/** `none` when the server was started without keys (`auth: false`, `--no-auth`): nothing to ask. */
const keyNeeded = document.body.dataset.auth !== 'none';
const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const notice = byId<HTMLParagraphElement>('notice');
const keyForm = byId<HTMLFormElement>('key-form');
const keyInput = byId<HTMLInputElement>('key');
const keyMessage = byId<HTMLParagraphElement>('key-message');
const panels = byId<HTMLElement>('panels');
const projectSelect = byId<HTMLSelectElement>('project');
const functionSelect = byId<HTMLSelectElement>('function');
const rangeSelect = byId<HTMLSelectElement>('range');
const refreshSelect = byId<HTMLSelectElement>('refresh');
const refreshNow = byId<HTMLButtonElement>('refresh-now');

let dashboard: ReturnType<typeof createDashboard> | null = null;
let projects: CatalogProject[] = [];
let timer: ReturnType<typeof setTimeout> | undefined;
let generation = 0;
let refreshWhenVisible = false;
/** The server's clock minus this browser's (milliseconds), from the catalog. */
let offsetMs = 0;

function showNotice(text: string, kind: 'info' | 'error' = 'info'): void {
  notice.textContent = text;
  notice.className = `notice ${kind}`;
  notice.hidden = false;
}

/** Shows the key form (first visit, a 401, or "Change key"); data requests stop until a key is given. */
function askForKey(message: string): void {
  generation++;
  clearTimeout(timer);
  apiKey.forget();
  panels.hidden = true;
  notice.hidden = true;
  keyMessage.textContent = message;
  keyMessage.hidden = message === '';
  keyForm.hidden = false;
  keyInput.value = '';
  keyInput.focus();
  document.body.dataset.view = 'key';
}

keyForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const key = keyInput.value.trim();
  if (key === '') return;
  apiKey.set(key);
  keyForm.hidden = true;
  void start();
});
byId<HTMLButtonElement>('change-key').addEventListener('click', () => askForKey(''));

/** Loads the definitions (intervals, tiers, cache lifetimes) and the catalog (projects), then the panels. */
async function start(): Promise<void> {
  const started = ++generation;
  document.body.dataset.view = 'loading';
  showNotice('Loading the projects and endpoint definitions…');
  const [definitions, catalog] = await Promise.all([
    apiGet<{ result: Definition[] }>(base, '/api/endpoints'),
    apiGet<{ result: { since: string; projects: CatalogProject[] } }>(base, '/api/catalog', { days: String(CATALOG_DAYS) }),
  ]);
  if (started !== generation) return;
  for (const answer of [definitions, catalog]) {
    if (answer.ok) continue;
    if (answer.failure.status === 401) return askForKey(errorInWords(answer.failure));
    showNotice(`${errorInWords(answer.failure)} Use “Refresh now” to try again.`, 'error');
    refreshNow.disabled = false;
    document.body.dataset.view = 'error';
    return;
  }
  if (!definitions.ok || !catalog.ok) return;
  offsetMs = clockOffset(catalog.body.result.since, CATALOG_DAYS, Date.now());
  dashboard ??= createDashboard(definitions.body.result);
  projects = catalog.body.result.projects;
  refreshNow.disabled = false;
  if (projects.length === 0) {
    showNotice('No project has events in the last 7 days of these logs, so there is nothing to draw yet.', 'info');
    document.body.dataset.view = 'empty';
    return;
  }
  dashboard.showProjects(parseViewState(location.hash));
  notice.hidden = true;
  panels.hidden = false;
  document.body.dataset.view = 'dashboard';
  await refreshAll();
}

/** The panels, created once: their charts keep their canvases across reloads. */
function createDashboard(definitions: readonly Definition[]) {
  const definition = (name: string) => definitions.find((d) => d.name === name) ?? { name, cache: null, params: [] };
  const statsView = new PanelView(byId('stats-panel'), base, definition('functions.invocation-stats'));
  const usageView = new PanelView(byId('usage-panel'), base, definition('usage.api-counts'));
  const logsView = new PanelView(byId('logs-panel'), base, definition('logs.all'));
  const openBucket = (start: number, bucket: number) => {
    logs.showBucket(start, bucket);
    remember();
    void loaders.logs().then((outcome) => handleOutcomes([outcome]));
    logsView.root.scrollIntoView({ block: 'nearest' });
  };
  const stats = statsPanel(statsView, openBucket);
  const usage = usagePanel(usageView, openBucket);
  const logs = logsPanel(logsView);
  const extras = definitions.filter((d) => !BUILT_IN.includes(d.name)).map((d) => genericPanel(d, base, panels, openBucket));
  const wanted = parseViewState(location.hash);
  // One range for every panel: those some endpoint's interval list offers.
  const ranges = rangeChoices(definitions.map((d) => intervalParam(d.params)?.intervals ?? {}));
  fillSelect(
    rangeSelect,
    ranges.map((r) => r.name),
    pick(
      ranges.map((r) => r.name),
      wanted.range,
      '1day',
    ),
    (name) => ranges.find((r) => r.name === name)!.label,
  );
  fillSelect(logs.tier, logsView.values('project_tier'), pick(logsView.values('project_tier'), wanted.tier, 'PRO'));
  logs.after.value = wanted.after ?? '';
  logs.until.value = wanted.until ?? '';

  const state = (): ViewState => ({
    project: projectSelect.value,
    functionId: functionSelect.value,
    range: rangeSelect.value,
    tier: logs.tier.value,
    after: logs.after.value.trim(),
    until: logs.until.value.trim(),
  });
  const remember = () => history.replaceState(null, '', formatViewState(state()));
  /** What every panel shows; the server's now is taken once, so one refresh draws one window. */
  const scope = (): Scope => ({ project: projectSelect.value, functionId: functionSelect.value, range: rangeSeconds(rangeSelect.value), nowMs: Date.now() + offsetMs });
  const loaders = {
    stats: (s = scope()) => stats.load(s),
    usage: (s = scope()) => usage.load(s),
    logs: (s = scope()) => logs.load(s, logs.tier.value),
    extras: (s = scope()): Promise<LoadOutcome> => Promise.all(extras.map((e) => e.load(s))).then((outcomes) => (outcomes.includes('unauthorized') ? 'unauthorized' : 'ok')),
  };
  /** A change of one control reloads the panels it concerns and remembers the choice in the URL. */
  const reloadOn = (element: HTMLElement, event: string, panels: Array<keyof typeof loaders>, before?: () => void) =>
    element.addEventListener(event, (e) => {
      if (event === 'submit') e.preventDefault();
      before?.();
      remember();
      const s = scope();
      void Promise.all(panels.map((p) => loaders[p](s))).then(handleOutcomes);
    });
  reloadOn(rangeSelect, 'change', ['stats', 'usage', 'logs', 'extras']);
  reloadOn(logs.tier, 'change', ['logs']);
  reloadOn(logs.apply, 'click', ['logs']);
  reloadOn(logs.clear, 'click', ['logs'], () => {
    logs.after.value = '';
    logs.until.value = '';
  });
  reloadOn(logs.sqlForm, 'submit', ['logs'], () => logs.useSql(logs.sqlText()));
  reloadOn(logs.sqlClear, 'click', ['logs'], () => logs.useSql(''));
  for (const input of [logs.after, logs.until]) {
    input.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') logs.apply.click();
    });
  }
  extras.forEach((extra, i) => {
    for (const control of extra.controls) {
      control.addEventListener('change', () => void extras[i]!.load(scope()).then((o) => handleOutcomes([o])));
    }
  });
  reloadOn(functionSelect, 'change', ['stats', 'extras']);
  projectSelect.addEventListener('change', () => {
    showFunctions(undefined);
  });
  reloadOn(projectSelect, 'change', ['stats', 'usage', 'logs', 'extras']);

  function showFunctions(wantedFunction: string | undefined): void {
    const ids = projects.find((p) => p.project === projectSelect.value)?.functionIds ?? [];
    fillSelect(functionSelect, ['', ...ids], pick(['', ...ids], wantedFunction, ''), (id) => (id === '' ? `all (${ids.length})` : id));
  }

  return {
    showProjects(view: Partial<ViewState>): void {
      const names = projects.map((p) => p.project);
      fillSelect(projectSelect, names, pick(names, view.project ?? projectSelect.value, names[0]!), (name) => {
        const p = projects.find((x) => x.project === name)!;
        return `${name} (${compact(p.requests)} requests)`;
      });
      showFunctions(view.functionId ?? functionSelect.value);
    },
    loadAll: (): Promise<LoadOutcome[]> => {
      const s = scope();
      return Promise.all([loaders.stats(s), loaders.usage(s), loaders.logs(s), loaders.extras(s)]);
    },
  };
}

/** `980`, `9.5k`, `1.2M`: the picker's options stay short. */
function compact(n: number): string {
  return n.toLocaleString('en-US', { notation: 'compact', maximumFractionDigits: 1 });
}

/** A 401 anywhere means the key is wrong (or was revoked): ask again, with the reason. */
function handleOutcomes(outcomes: LoadOutcome[]): boolean {
  if (!outcomes.includes('unauthorized')) return true;
  askForKey('The server did not accept the API key (401 unauthorized). Enter a valid key.');
  return false;
}

/** Reloads every panel, then waits for the refresh interval (one timer; a newer refresh replaces it). */
async function refreshAll(): Promise<void> {
  if (!dashboard) return;
  clearTimeout(timer);
  const current = ++generation;
  const outcomes = await dashboard.loadAll();
  if (current !== generation) return;
  if (handleOutcomes(outcomes)) schedule();
}

function schedule(): void {
  clearTimeout(timer);
  const seconds = Number(refreshSelect.value);
  if (!(seconds > 0)) return;
  timer = setTimeout(() => {
    // A hidden tab does not query; it refreshes as soon as it is shown again.
    if (document.visibilityState === 'hidden') refreshWhenVisible = true;
    else void refreshAll();
  }, seconds * 1000);
}

document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible' && refreshWhenVisible) {
    refreshWhenVisible = false;
    void refreshAll();
  }
});
refreshSelect.addEventListener('change', schedule);
refreshNow.addEventListener('click', () => {
  if (dashboard && document.body.dataset.view === 'dashboard') void refreshAll();
  else void start();
});

if (!keyNeeded) byId<HTMLButtonElement>('change-key').hidden = true;
if (apiKey.get() || !keyNeeded) void start();
else askForKey('');
