import { DrainStore, type DrainStoreOptions } from './drain-store';
import { DrainLog } from './drain-log';
import { Forwarder, type DrainStats, type ForwarderOptions } from './forwarder';

/** An instance's log drains: the kept drains and rules, and the forwarding of ingested events to them. */
export interface Drains {
  readonly store: DrainStore;
  /** Resolves once every drain has read what the log holds (a receiver that stays down keeps it waiting). */
  idle(): Promise<void>;
  /** Each drain's counters. */
  stats(): DrainStats[];
  /** Stops forwarding (what is not sent waits in the log for the next start). */
  close(): void;
}

/** Options of `openDrains`: where the drains are kept, the log they read, and how events go out. */
export type DrainsOptions = Omit<DrainStoreOptions, 'beforeCreate'> &
  Omit<ForwarderOptions, 'store' | 'log'> & {
    /** The `DrainLog` given to `createEndpoints` as `segmentKeeper`; without it (or without storage) nothing is forwarded. */
    log?: DrainLog;
  };

/**
 * The log drains of an instance (docs/supabase.md, "Log Drains"), kept in `dataDir` (in memory
 * without one). They read the write-ahead log through `log`, the `DrainLog` given to
 * `createEndpoints` as its `segmentKeeper` (it keeps each drain's cursor, and the segments a drain
 * has yet to read when compaction is done with them); the HTTP handler serves Studio's calls with
 * `createHandler(ep, { drains })`.
 *
 * @example
 * const log = new DrainLog();
 * const ep = await createEndpoints({ ...supabasePreset, storage: { dataDir }, segmentKeeper: log });
 * const drains = await openDrains({ dataDir, sources: ep.sources, log });
 */
export async function openDrains(options: DrainsOptions): Promise<Drains> {
  const log = options.log ?? new DrainLog();
  const store = await DrainStore.open({ ...options, beforeCreate: (id) => log.createCursor(id) });
  const forwarder = new Forwarder({ ...options, store, log });
  await forwarder.start();
  return {
    store,
    idle: () => forwarder.idle(),
    stats: () => forwarder.stats(),
    close: () => forwarder.close(),
  };
}
