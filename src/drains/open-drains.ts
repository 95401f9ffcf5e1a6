import { DrainStore, type DrainStoreOptions } from './drain-store';

/** An instance's log drains: the kept drains and their rules. */
export interface Drains {
  readonly store: DrainStore;
}

/** Options of `openDrains`: where the drains are kept. */
export type DrainsOptions = DrainStoreOptions;

/**
 * The log drains of an instance (docs/supabase.md, "Log Drains"), kept in `dataDir` (in memory
 * without one); the HTTP handler serves Studio's calls with `createHandler(ep, { drains })`.
 *
 * @example
 * const drains = await openDrains({ dataDir, sources: ep.sources });
 */
export async function openDrains(options: DrainsOptions): Promise<Drains> {
  return { store: await DrainStore.open(options) };
}
