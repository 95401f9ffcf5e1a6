/**
 * test/studio-replay.test.ts on the ClickHouse engine: Vector's nine feeds shipped over HTTP into
 * managed storage that ships them into a real 2-shard cluster (`storage.clickhouse`), then every
 * request of self-hosted Studio sent as its proxy sends it, each answer compared with the same
 * reference (test/support/supabase/reference.ts): Studio's BigQuery SQL answers alike on both
 * engines (docs/supabase.md, docs/clickhouse.md).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickhouseEngine, clickhouseLoader } from '../../src/clickhouse';
import { createEndpoints, supabasePreset, type Endpoints } from '../../src/index';
import { createHandler } from '../../src/http';
import { toNodeListener } from '../../src/node';
import { waitUntil } from '../support/hang-guard';
import { listen } from '../support/http';
import { tempDir } from '../support/log-files';
import { studioRequests } from '../support/supabase/studio-requests';
import { followUpRequests, replay, shipLikeVector } from '../support/supabase/studio-replay';
import { generateVectorEvents } from '../support/supabase/vector-events';
import { startClickHouseCluster, type ClickHouseCluster } from './support/clickhouse-cluster';

const NOW = new Date('2026-11-21T12:00:00Z');
const PUBLIC = 'logflare-public-access-token';
const PRIVATE = 'logflare-private-access-token';
const DATABASE = 'studio_replay';

const { events } = generateVectorEvents({ now: NOW });
const requests = studioRequests(NOW);
const tmp = tempDir('le-studio-ch-');
let cluster: ClickHouseCluster;
let ep: Endpoints;
let server: Awaited<ReturnType<typeof listen>>;

beforeAll(async () => {
  cluster = await startClickHouseCluster();
  // The engine, the loader and the shipper map the preset's nine sources to their tables.
  const target = { url: cluster.url, database: DATABASE, cluster: cluster.name, sourceDefinitions: supabasePreset.sourceDefinitions };
  // No ZooKeeper here: the tables are made on each server, as `clickhouse init` does.
  for (const shard of cluster.shards) {
    const loader = clickhouseLoader({ ...target, url: shard.url });
    await loader.init();
    await loader.close();
  }
  ep = await createEndpoints({ ...supabasePreset, engine: clickhouseEngine(target), storage: { dataDir: tmp.path('data'), clickhouse: target }, now: () => NOW, cache: false });
  server = await listen(toNodeListener(createHandler(ep, { apiKeys: [PRIVATE], ingestKeys: [PUBLIC] })));
  const shipped = await shipLikeVector(server.url, PUBLIC, events);
  // Studio reads the cluster: wait until every acknowledged event is in it.
  await waitUntil(() => ep.stats().storage!.shippedEvents === shipped);
});

afterAll(async () => {
  await server?.close();
  await ep?.close();
  await cluster?.stop();
  tmp.cleanup();
});

describe('Studio (self-hosted) against Vector-shipped feeds on the ClickHouse engine', () => {
  for (const request of requests) {
    it(request.name, async () => {
      const { problem } = await replay(server.url, PRIVATE, request, events);
      expect(problem).toBeNull();
    });
  }

  it('answers what Studio asks next: the older page of each list, and the first row of each page opened by its id', async () => {
    const lists = [];
    for (const request of requests.filter((r) => r.spec.kind === 'list')) lists.push(await replay(server.url, PRIVATE, request, events));
    const next = followUpRequests(lists);
    expect(next.filter((r) => r.spec.kind === 'single')).toHaveLength(2 * 11);
    const problems: string[] = [];
    for (const request of next) {
      const { problem } = await replay(server.url, PRIVATE, request, events);
      if (problem) problems.push(problem);
    }
    expect(problems).toEqual([]);
  });
});
