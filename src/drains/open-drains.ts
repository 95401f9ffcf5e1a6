import type { SourceName } from '../sources/source-descriptor';
import { DrainStore, type DrainStoreOptions } from './drain-store';
import { Forwarder, type DrainStats, type ForwarderOptions } from './forwarder';

/** An instance's log drains: the kept drains and rules, and the forwarding of ingested events to them. */
export interface Drains {
  readonly store: DrainStore;
  /** Give it to `createEndpoints` as `onIngested`: a durable batch, kept for forwarding. */
  readonly offer: (source: SourceName, lines: Uint8Array) => void;
  /** Resolves once every offered event is sent or dropped. */
  idle(): Promise<void>;
  /** Each drain's counters. */
  stats(): DrainStats[];
  /** Stops forwarding (what waits in memory is dropped). */
  close(): void;
}

/** Options of `openDrains`: where the drains are kept and how events go out. */
export type DrainsOptions = DrainStoreOptions & Omit<ForwarderOptions, 'store'>;

/**
 * The log drains of an instance (docs/supabase.md, "Log Drains"), kept in `dataDir` (in memory
 * without one). Events reach them through `offer`, which `createEndpoints` calls as its
 * `onIngested` once a batch is durable; the HTTP handler serves Studio's calls with
 * `createHandler(ep, { drains })`.
 *
 * @example
 * let drains: Drains | undefined;
 * const ep = await createEndpoints({ ...supabasePreset, storage: { dataDir }, onIngested: (s, l) => drains?.offer(s, l) });
 * drains = await openDrains({ dataDir, sources: ep.sources });
 */
export async function openDrains(options: DrainsOptions): Promise<Drains> {
  const store = await DrainStore.open(options);
  const forwarder = new Forwarder({ ...options, store });
  return {
    store,
    offer: (source, lines) => forwarder.offer(source, lines),
    idle: () => forwarder.idle(),
    stats: () => forwarder.stats(),
    close: () => forwarder.close(),
  };
}
