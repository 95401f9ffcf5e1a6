import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndpoints, SUPABASE_SOURCES, supabasePreset, type Endpoints } from '../src/index';
import { createHandler } from '../src/http';
import { toNodeListener } from '../src/node';
import { waitUntil } from './support/hang-guard';
import { listen } from './support/http';
import { tempDir } from './support/log-files';
import { studioRequests } from './support/supabase/studio-requests';
import { followUpRequests, replay, shipLikeVector } from './support/supabase/studio-replay';
import { generateVectorEvents } from './support/supabase/vector-events';
import { STORAGE_LAYOUTS, typedFileCounts } from './support/supabase/storage-layouts';

/**
 * Self-hosted Supabase, end to end (docs/supabase.md): Vector's nine feeds shipped over HTTP as its
 * http sinks send them, then every request Studio's Logs pages, Logs Explorer and home page make
 * (test/support/supabase/studio-requests.ts), sent as Studio's server-side proxy sends them, each
 * answer compared with the independent reference (test/support/supabase/reference.ts, itself
 * checked by test/studio-reference.test.ts): 200 and the rows in Logflare's wire format, or, for
 * a table self-hosted does not have, a 400 whose message Studio's proxy shows in its 500.
 *
 * On managed storage with part of the events compacted into Parquet and the newest still in the
 * write-ahead log and in memory, the way a running instance holds them; once for each Parquet
 * layout (typed columns, and JSON only: docs/durability.md, "Typed columns").
 */

const NOW = new Date('2026-11-21T12:00:00Z');
/** Vector's token (`LOGFLARE_PUBLIC_ACCESS_TOKEN`) and Studio's (`LOGFLARE_PRIVATE_ACCESS_TOKEN`). */
const PUBLIC = 'logflare-public-access-token';
const PRIVATE = 'logflare-private-access-token';

const { events } = generateVectorEvents({ now: NOW });
const requests = studioRequests(NOW);

for (const layout of STORAGE_LAYOUTS) {
  describe(`Studio (self-hosted) against Vector-shipped feeds on managed storage, ${layout.name}`, () => {
    const tmp = tempDir('le-studio-replay-');
    let ep: Endpoints;
    let server: Awaited<ReturnType<typeof listen>>;
    let held = { compactedSegments: 0, walBytes: 0, files: { typed: 0, plain: 0 } };

    beforeAll(async () => {
      // Small segments, so the first half of the feeds closes several and the compactor takes them.
      const storage = { dataDir: tmp.path('data'), maxSegmentBytes: 32 * 1024, typedColumns: layout.typedColumns };
      ep = await createEndpoints({ ...supabasePreset, storage, now: () => NOW, cache: false });
      server = await listen(toNodeListener(createHandler(ep, { apiKeys: [PRIVATE], ingestKeys: [PUBLIC] })));
      const half = (all: readonly unknown[]) => Math.ceil(all.length / 2);
      await shipLikeVector(server.url, PUBLIC, events, (all) => all.slice(0, half(all)));
      // Until a source with typed fields has a Parquet file: the first sources compacted may be ones without.
      await waitUntil(() => {
        const files = typedFileCounts(storage.dataDir, SUPABASE_SOURCES);
        return files.typed + files.plain > 0;
      });
      await shipLikeVector(server.url, PUBLIC, events, (all) => all.slice(half(all)));
      const stats = ep.stats().storage!;
      held = { compactedSegments: stats.compactedSegments, walBytes: stats.walBytes, files: typedFileCounts(storage.dataDir, SUPABASE_SOURCES) };
    });

    afterAll(async () => {
      await server?.close();
      await ep?.close();
      tmp.cleanup();
    });

    it('holds part of the events compacted, in its layout, and part in the write-ahead log when Studio asks', () => {
      expect(held.compactedSegments).toBeGreaterThan(0);
      expect(held.walBytes).toBeGreaterThan(0);
      expect(layout.typedColumns ? held.files.typed : held.files.plain).toBeGreaterThan(0);
      expect(layout.typedColumns ? held.files.plain : held.files.typed).toBe(0);
    });

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
}
