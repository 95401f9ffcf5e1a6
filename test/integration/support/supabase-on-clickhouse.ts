import { clickhouseEngine, clickhouseLoader } from '../../../src/clickhouse';
import { createEndpoints, supabasePreset } from '../../../src/index';
import { createHandler } from '../../../src/http';
import { toNodeListener } from '../../../src/node';
import { waitUntil } from '../../support/hang-guard';
import { listen } from '../../support/http';
import { tempDir } from '../../support/log-files';
import { shipLikeVector } from '../../support/supabase/studio-replay';
import type { VectorEvents } from '../../support/supabase/vector-sources';
import { startClickHouseCluster } from './clickhouse-cluster';

/** The keys of Supabase's docker-compose, as Vector and Studio send them. */
export const PUBLIC = 'logflare-public-access-token';
export const PRIVATE = 'logflare-private-access-token';

/**
 * `serve --supabase` on the ClickHouse engine, as a test needs it: a real 2-shard cluster with the
 * preset's tables (made on each server, as `clickhouse init` does: no ZooKeeper here), managed
 * storage shipping into it, the HTTP handler on a loopback port, and `events` sent as Vector sends
 * them; resolves once every acknowledged event is in the cluster (what Studio then reads).
 *
 * @example
 * const studio = await supabaseOnClickHouse('studio_replay', events, NOW);
 * await replay(studio.url, PRIVATE, request, events);
 * await studio.stop();
 */
export async function supabaseOnClickHouse(database: string, events: VectorEvents, now: Date): Promise<{ url: string; stop: () => Promise<void> }> {
  const cluster = await startClickHouseCluster();
  const tmp = tempDir(`le-${database}-`);
  const target = { url: cluster.url, database, cluster: cluster.name, sourceDefinitions: supabasePreset.sourceDefinitions };
  for (const shard of cluster.shards) {
    const loader = clickhouseLoader({ ...target, url: shard.url });
    await loader.init();
    await loader.close();
  }
  const ep = await createEndpoints({ ...supabasePreset, engine: clickhouseEngine(target), storage: { dataDir: tmp.path('data'), clickhouse: target }, now: () => now, cache: false });
  const server = await listen(toNodeListener(createHandler(ep, { apiKeys: [PRIVATE], ingestKeys: [PUBLIC] })));
  const shipped = await shipLikeVector(server.url, PUBLIC, events);
  await waitUntil(() => ep.stats().storage!.shippedEvents === shipped);
  return {
    url: server.url,
    stop: async () => {
      await server.close();
      await ep.close();
      await cluster.stop();
      tmp.cleanup();
    },
  };
}
