import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEndpoints } from '../src/index';
import { census, CENSUS_NOW, censusEvents } from './support/census';
import { spawnCli, waitForStdout } from './support/cli';
import { tempDir } from './support/log-files';
import { waitUntil } from './support/hang-guard';

const tmp = tempDir('le-managed-store-');
const children: ReturnType<typeof spawnCli>[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  tmp.cleanup();
});

/** Managed storage with segments that close every few batches, so compaction runs all the time. */
const open = (dataDir: string) => createEndpoints({ storage: { dataDir, maxSegmentBytes: 8 * 1024 }, now: () => new Date(CENSUS_NOW), cache: false });

describe('managed storage (docs/ingest.md): read your writes, each event once, however compaction interleaves', () => {
  it('every acknowledged event is read by the next query exactly once while the background compactor runs', async () => {
    const dataDir = tmp.path('inproc');
    const ep = await open(dataDir);
    const acked: string[] = [];
    try {
      for (let batch = 0; batch < 30; batch++) {
        const events = censusEvents(`b${batch}`, 20);
        await ep.ingest('cloudflare.logs.prod', events);
        acked.push(...events.map((e) => e.id as string));
        // The next query sees every acknowledged event, once, wherever it is by now.
        expect(await census(ep)).toEqual({ total: acked.length, ids: [...acked].sort() });
      }
      expect(ep.stats().storage).toMatchObject({ compactionFailures: 0 });
      expect(ep.stats().storage!.compactedSegments).toBeGreaterThan(0);
    } finally {
      await ep.close();
    }
    // Reopened: recovery, then compaction of what was left, and the same answer.
    const again = await open(dataDir);
    try {
      expect(await census(again)).toEqual({ total: acked.length, ids: [...acked].sort() });
    } finally {
      await again.close();
    }
    expect(readdirSync(join(dataDir, 'edgeLogs', 'parquet')).some((f) => f.startsWith('date='))).toBe(true);
  });
});

/**
 * `serve --data-dir` killed with SIGKILL inside its own background compaction (at each failpoint of
 * compaction and of the merge of small files), then restarted: every acknowledged event exactly once.
 */
describe('serve --data-dir killed inside background compaction', () => {
  const KEY = 'k';
  const start = (dataDir: string, env: Record<string, string> = {}) => {
    const child = spawnCli(['serve', '--data-dir', dataDir, '--api-key', KEY, '--port', '0', '--now', CENSUS_NOW, '--no-cache', '--wal-segment-bytes', '8192'], env);
    children.push(child);
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    return { child, exited, url: waitForStdout(child, /Listening on (http:\/\/\S+) /).then((m) => m[1]!) };
  };

  for (const point of ['compact:written', 'compact:publish:1', 'compact:before-commit', 'compact:after-commit', 'compact:delete:1', 'merge:after-commit']) {
    it(`killed at ${point}`, async () => {
      const dataDir = tmp.path(point.replaceAll(':', '-'));
      const server = start(dataDir, { LOG_ENDPOINTS_FAILPOINT: point });
      const url = await server.url;
      const acked: string[] = [];
      let killed = false;
      void server.exited.then(() => (killed = true));
      const commits = () => {
        try {
          return readdirSync(join(dataDir, 'edgeLogs', 'parquet', '_compact')).filter((n) => n.endsWith('.json')).length;
        } catch {
          return 0;
        }
      };
      // Rounds of a few batches (a segment or more), each waiting for the compaction they cause, until
      // the server kills itself at the failpoint (the merge needs eight compactions of one day).
      for (let round = 0; !killed && round < 30; round++) {
        const before = commits();
        for (let b = 0; b < 3 && !killed; b++) {
          const batch = round * 3 + b;
          const events = censusEvents(`k${batch}`, 8, batch * 8).map((e) => ({ ...e, id: `k-${batch}-${e.id as string}` }));
          try {
            const response = await fetch(`${url}/api/logs?source_name=cloudflare.logs.prod`, {
              method: 'POST',
              headers: { 'X-API-KEY': KEY, 'Content-Type': 'application/json' },
              body: JSON.stringify(events),
            });
            await response.arrayBuffer();
            if (response.status === 200) acked.push(...events.map((e) => e.id));
          } catch {
            // The server died under this request: not acknowledged.
          }
        }
        await waitUntil(() => killed || commits() > before);
      }
      expect(await server.exited).toBe('SIGKILL');
      const ep = await open(dataDir);
      try {
        const { total, ids } = await census(ep);
        const ackedSet = new Set(acked);
        // Every acknowledged event once; an event of the request cut by the kill at most once.
        expect(ids.filter((id) => ackedSet.has(id)).length).toBe(acked.length);
        expect(new Set(ids).size).toBe(ids.length);
        expect(total).toBe(ids.length);
        await ep.close();
      } catch (error) {
        await ep.close();
        throw error;
      }
    });
  }
});

describe('managed storage retention (docs/ingest.md)', () => {
  it('by default deletes the days older than 90, the longest tier window, and keeps the rest', async () => {
    const dataDir = tmp.path('retention');
    const day = 86_400_000;
    const at = (daysAgo: number) => new Date(Date.parse(CENSUS_NOW) - daysAgo * day).toISOString();
    const [old, kept] = censusEvents('r', 2);
    const first = await createEndpoints({ storage: { dataDir }, now: () => new Date(CENSUS_NOW), cache: false });
    await first.ingest('cloudflare.logs.prod', [
      { ...old, timestamp: at(92) },
      { ...kept, timestamp: at(88) },
    ]);
    await first.close();
    // The next start compacts what the last one left and applies retention; close waits for it.
    const second = await createEndpoints({ storage: { dataDir }, now: () => new Date(CENSUS_NOW), cache: false });
    await second.close();
    const days = readdirSync(join(dataDir, 'edgeLogs', 'parquet')).filter((f) => f.startsWith('date='));
    expect(days).toEqual([`date=${at(88).slice(0, 10)}`]);
  });
});
