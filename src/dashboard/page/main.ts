// The dashboard page: asks for the key once, then draws the three endpoints for a project.
import 'uplot/dist/uPlot.min.css';
import './dashboard.css';
import { apiGet, apiKey } from './api';
import { logsPanel } from './logs-panel';
import { fillSelect, PanelView, type Definition, type LoadOutcome } from './panel-view';
import { statsPanel } from './stats-panel';
import { usagePanel } from './usage-panel';
import { formatViewState, parseViewState, pick, type ViewState } from './view-state';
import { errorInWords } from './words';

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
const refreshSelect = byId<HTMLSelectElement>('refresh');
const refreshNow = byId<HTMLButtonElement>('refresh-now');

let dashboard: ReturnType<typeof createDashboard> | null = null;
let projects: CatalogProject[] = [];
let timer: ReturnType<typeof setTimeout> | undefined;
let generation = 0;
let refreshWhenVisible = false;

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
    apiGet<{ result: { projects: CatalogProject[] } }>(base, '/api/catalog'),
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
  const stats = statsPanel(statsView);
  const usage = usagePanel(usageView);
  const logs = logsPanel(logsView);
  const wanted = parseViewState(location.hash);
  fillSelect(stats.interval, statsView.values('interval'), pick(statsView.values('interval'), wanted.statsInterval, '1day'));
  fillSelect(usage.interval, usageView.values('interval'), pick(usageView.values('interval'), wanted.usageInterval, 'daily'));
  fillSelect(logs.tier, logsView.values('project_tier'), pick(logsView.values('project_tier'), wanted.tier, 'PRO'));
  logs.after.value = wanted.after ?? '';
  logs.until.value = wanted.until ?? '';

  const state = (): ViewState => ({
    project: projectSelect.value,
    functionId: functionSelect.value,
    statsInterval: stats.interval.value,
    usageInterval: usage.interval.value,
    tier: logs.tier.value,
    after: logs.after.value.trim(),
    until: logs.until.value.trim(),
  });
  const loaders = {
    stats: () => stats.load(projectSelect.value, functionSelect.value, stats.interval.value),
    usage: () => usage.load(projectSelect.value, usage.interval.value),
    logs: () => logs.load(projectSelect.value, logs.tier.value, logs.after.value, logs.until.value),
  };
  /** A change of one control reloads the panels it concerns and remembers the choice in the URL. */
  const reloadOn = (element: HTMLElement, event: string, panels: Array<keyof typeof loaders>) =>
    element.addEventListener(event, () => {
      history.replaceState(null, '', formatViewState(state()));
      void Promise.all(panels.map((p) => loaders[p]())).then(handleOutcomes);
    });
  reloadOn(stats.interval, 'change', ['stats']);
  reloadOn(usage.interval, 'change', ['usage']);
  reloadOn(logs.tier, 'change', ['logs']);
  reloadOn(logs.apply, 'click', ['logs']);
  for (const input of [logs.after, logs.until]) {
    input.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') logs.apply.click();
    });
  }
  reloadOn(functionSelect, 'change', ['stats']);
  projectSelect.addEventListener('change', () => {
    showFunctions(undefined);
  });
  reloadOn(projectSelect, 'change', ['stats', 'usage', 'logs']);

  function showFunctions(wantedFunction: string | undefined): void {
    const ids = projects.find((p) => p.project === projectSelect.value)?.functionIds ?? [];
    fillSelect(functionSelect, ['', ...ids], pick(['', ...ids], wantedFunction, ''), (id) => (id === '' ? `all functions (${ids.length})` : id));
  }

  return {
    showProjects(view: Partial<ViewState>): void {
      const names = projects.map((p) => p.project);
      fillSelect(projectSelect, names, pick(names, view.project ?? projectSelect.value, names[0]!), (name) => {
        const p = projects.find((x) => x.project === name)!;
        return `${name} (${p.requests.toLocaleString('en-US')} requests, ${p.invocations.toLocaleString('en-US')} invocations)`;
      });
      showFunctions(view.functionId ?? functionSelect.value);
    },
    loadAll: (): Promise<LoadOutcome[]> => Promise.all([loaders.stats(), loaders.usage(), loaders.logs()]),
  };
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
