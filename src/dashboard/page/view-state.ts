// Pure (no DOM): unit-tested in `npm test`.

/** What the page shows, kept in the URL's fragment so a reload or a shared link shows the same. */
export interface ViewState {
  project: string;
  /** Empty: all functions. */
  functionId: string;
  /** The time range every panel shows (`1day`). */
  range: string;
  tier: string;
  after: string;
  until: string;
}

const FIELDS: ReadonlyArray<[keyof ViewState, string]> = [
  ['project', 'project'],
  ['functionId', 'function_id'],
  ['range', 'range'],
  ['tier', 'tier'],
  ['after', 'after'],
  ['until', 'until'],
];

/** `#project=abc&range=1hr` -> the fields it names (the others stay as they are). */
export function parseViewState(fragment: string): Partial<ViewState> {
  const params = new URLSearchParams(fragment.replace(/^#/, ''));
  const state: Partial<ViewState> = {};
  for (const [field, name] of FIELDS) {
    const value = params.get(name);
    if (value !== null) state[field] = value;
  }
  return state;
}

/** The fragment of a state; empty fields are left out. */
export function formatViewState(state: ViewState): string {
  const params = new URLSearchParams();
  for (const [field, name] of FIELDS) if (state[field] !== '') params.set(name, state[field]);
  return `#${params.toString()}`;
}

/** A value from `wanted` when the list offers it, else the preferred default, else the first. */
export function pick(options: readonly string[], wanted: string | undefined, preferred: string): string {
  if (wanted !== undefined && options.includes(wanted)) return wanted;
  if (options.includes(preferred)) return preferred;
  return options[0] ?? '';
}

/** A project ref as an RE2 pattern matching itself (usage.api-counts takes a pattern). */
export function literalPattern(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
}
