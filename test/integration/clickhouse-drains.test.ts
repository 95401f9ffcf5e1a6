/**
 * Log drains on `clickhouse serve --supabase --data-dir`: the shipper, not compaction, deletes the
 * write-ahead segments there, so the segments a drain has not passed must be kept for it the same
 * way (docs/durability.md, "Segments kept for log drains"). A receiver that is down while the
 * events are shipped to a real 2-shard cluster, and a kill -9 of the server, still get every event
 * to the receiver, and ClickHouse holds each event once.
 */
import { existsSync, readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickhouseLoader } from '../../src/clickhouse';
import { KEPT_DIR } from '../../src/drains/drain-log';
import { supabasePreset } from '../../src/index';
import { drainReceiver } from '../support/drain-receiver';
import { serveWithDrains } from '../support/drains-serve';
import { waitUntil } from '../support/hang-guard';
import { tempDir } from '../support/log-files';
import { startClickHouseCluster, type ClickHouseCluster } from './support/clickhouse-cluster';

const DATABASE = 'drains';
const tmp = tempDir('le-ch-drains-');
let cluster: ClickHouseCluster;

beforeAll(async () => {
  cluster = await startClickHouseCluster();
  // The preset's tables on each server, as `clickhouse init --supabase` makes them (no ZooKeeper here).
  for (const shard of cluster.shards) {
    const loader = clickhouseLoader({ url: shard.url, database: DATABASE, cluster: cluster.name, sourceDefinitions: supabasePreset.sourceDefinitions });
    await loader.init();
    await loader.close();
  }
});

afterAll(async () => {
  await cluster?.stop();
  tmp.cleanup();
});

/** The GoTrue events ClickHouse holds: how many rows, and how many distinct ids. */
async function inClickHouse(): Promise<{ rows: number; ids: number }> {
  const query = `SELECT count(), uniqExact(id) FROM ${DATABASE}.auth_logs FORMAT TSV`;
  const text = await (await fetch(`${cluster.url}/?query=${encodeURIComponent(query)}`)).text();
  const [rows, ids] = text.trim().split('\t').map(Number);
  return { rows: rows!, ids: ids! };
}

describe('log drains with the ClickHouse shipper', () => {
  it('events shipped and deleted from the data dir while the receiver is down reach it after a kill -9; ClickHouse holds each once', async () => {
    const sink = await drainReceiver();
    let up = false;
    const failed = new Set<number>();
    sink.answer((i) => {
      if (!up) failed.add(i);
      return up ? 200 : 503;
    });
    const taken = () => sink.received.flatMap((r, i) => (failed.has(i) ? [] : (JSON.parse(r.body.toString('utf8')) as { id: string }[]).map((e) => e.id)));
    const command = ['clickhouse', 'serve', '--url', cluster.url, '--database', DATABASE, '--cluster', cluster.name];
    // Small segments, closed after 50 ms: the shipper takes one every few requests.
    const args = ['--wal-segment-bytes', '4096', '--wal-segment-age-ms', '50'];
    let server = await serveWithDrains(tmp.dir, args, {}, command);
    try {
      await server.drain('webhook', { url: `${sink.url}/hook`, http: 'http1', gzip: false, headers: {} }, 'hook');

      // The receiver is down: every event is shipped to ClickHouse, its segments deleted from the
      // write-ahead log but kept for the drain.
      await server.ingest('e', 0, 300);
      await waitUntil(async () => (await inClickHouse()).rows === 300);
      await waitUntil(() => existsSync(tmp.path('authLogs', KEPT_DIR)) && readdirSync(tmp.path('authLogs', KEPT_DIR)).length > 0);
      expect(failed.size).toBeGreaterThan(0);
      await server.kill();

      up = true;
      server = await serveWithDrains(tmp.dir, args, {}, command);
      await sink.until(() => taken().includes('e299'));
      await server.ingest('e', 300, 10);
      await sink.until(() => taken().includes('e309'));

      const ids = Array.from({ length: 310 }, (_, k) => `e${k}`);
      // At least once, in order of ingest.
      expect([...new Set(taken())]).toEqual(ids);
      // Kept segments go once the drain has passed them.
      await waitUntil(() => !existsSync(tmp.path('authLogs', KEPT_DIR)) || readdirSync(tmp.path('authLogs', KEPT_DIR)).length === 0);
      await waitUntil(async () => (await inClickHouse()).rows === 310);
      expect(await inClickHouse()).toEqual({ rows: 310, ids: 310 });
    } finally {
      await server.kill();
      await sink.close();
    }
  });
});
