import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndpoints, SUPABASE_SOURCES, supabasePreset, type Endpoints } from '../src/index';
import { createHandler } from '../src/http';
import { toNodeListener } from '../src/node';
import { EXPLORER_ORACLES } from './support/explorer-oracles';
import { askExplorer, clockQuery, explorerDataset, EXPLORER_NOW, explorerProblem } from './support/explorer-corpus';
import { EXPLORER_QUERIES } from './support/explorer-queries';
import { listen } from './support/http';
import { tempDir } from './support/log-files';
import { DAY, microsOf } from './support/supabase/instants';
import { timestampMicros } from './support/supabase/reference-rows';
import { shipLikeVector } from './support/supabase/studio-replay';
import { STORAGE_LAYOUTS, typedFileCounts } from './support/supabase/storage-layouts';
import { waitUntil } from './support/hang-guard';

/**
 * The Logs Explorer's queries as people write them (test/support/explorer-queries.ts: Supabase's
 * docs, Studio's templates and reports, public scripts), each sent to `logs.all` as self-hosted
 * Studio sends it, over Vector's nine feeds of the last day, on DuckDB. Each answer is checked
 * against the answer computed by hand from the events (test/support/explorer-oracles.ts), never
 * against the translator's own idea of it: a query that answers must answer that, a query we do
 * not support yet must stay a clean refusal naming what it refuses (and the day it answers, its
 * rows are checked), and a query BigQuery refuses too must be refused. Half of the events are
 * compacted into Parquet before the rest arrive, once in each layout (typed columns, and JSON
 * only: docs/durability.md, "Typed columns").
 */

const PUBLIC = 'logflare-public-access-token';
const PRIVATE = 'logflare-private-access-token';
const { events, tables } = explorerDataset();

for (const layout of STORAGE_LAYOUTS) {
  describe(`on DuckDB, ${layout.name}`, () => {
    const tmp = tempDir('le-explorer-corpus-');
    let ep: Endpoints;
    let server: Awaited<ReturnType<typeof listen>>;
    let files = { typed: 0, plain: 0 };

    beforeAll(async () => {
      // Small segments: the first half of the feeds is compacted into Parquet of the layout, the rest stays in memory.
      const storage = { dataDir: tmp.path('data'), maxSegmentBytes: 16 * 1024, typedColumns: layout.typedColumns };
      ep = await createEndpoints({ ...supabasePreset, storage, now: () => EXPLORER_NOW, cache: false });
      server = await listen(toNodeListener(createHandler(ep, { apiKeys: [PRIVATE], ingestKeys: [PUBLIC] })));
      const half = (all: readonly unknown[]) => Math.ceil(all.length / 2);
      await shipLikeVector(server.url, PUBLIC, events, (all) => all.slice(0, half(all)));
      await waitUntil(() => {
        const stats = ep.stats().storage!;
        return stats.compactedSegments > 0 && Object.values(stats.sources).every((s) => s.lagBytes === 0);
      });
      await shipLikeVector(server.url, PUBLIC, events, (all) => all.slice(half(all)));
      files = typedFileCounts(storage.dataDir, SUPABASE_SOURCES);
    });

    afterAll(async () => {
      await server?.close();
      await ep?.close();
      tmp.cleanup();
    });

    it('holds part of the events compacted in its layout', () => {
      expect(layout.typedColumns ? files.typed : files.plain).toBeGreaterThan(0);
      expect(layout.typedColumns ? files.plain : files.typed).toBe(0);
    });

    describe('the Logs Explorer corpus', () => {
      for (const query of EXPLORER_QUERIES) {
        it(`${query.expect}: ${query.id}`, async () => {
          const answer = await askExplorer(server.url, PRIVATE, query.sql);
          expect(explorerProblem(query, answer, tables, query.expect)).toBeNull();
        });
      }
    });

    describe("the request's clock", () => {
      it('reads CURRENT_TIMESTAMP() as the injected clock: the last hour is the hour before it', async () => {
        const { sql, rows } = clockQuery(events);
        expect(rows[0]!.n).toBeGreaterThan(0);
        expect(rows[0]!.n).toBeLessThan(events.edge_logs.length);
        expect(await askExplorer(server.url, PRIVATE, sql)).toEqual({ status: 200, body: { result: rows } });
      });
    });
  });
}

describe('the corpus itself', () => {
  it('holds at least 60 queries, each with a unique id, a source and its constructs', () => {
    expect(EXPLORER_QUERIES.length).toBeGreaterThanOrEqual(60);
    expect(new Set(EXPLORER_QUERIES.map((q) => q.id)).size).toBe(EXPLORER_QUERIES.length);
    for (const q of EXPLORER_QUERIES) {
      expect(q.source.length, q.id).toBeGreaterThan(10);
      expect(q.constructs.length, q.id).toBeGreaterThan(3);
    }
  });

  it('has an oracle for every query that answers or will, none for what BigQuery refuses, which says why', () => {
    for (const q of EXPLORER_QUERIES) {
      expect(q.id in EXPLORER_ORACLES, q.id).toBe(q.expect !== 'bigquery-refuses');
      expect(q.bigQueryRefuses !== undefined, q.id).toBe(q.expect === 'bigquery-refuses');
      expect(q.refusal !== undefined, q.id).toBe(q.expect !== 'answers');
    }
    expect(Object.keys(EXPLORER_ORACLES).filter((id) => !EXPLORER_QUERIES.some((q) => q.id === id))).toEqual([]);
  });

  it('is checked on rows: most of the queries that answer expect some', () => {
    const answering = EXPLORER_QUERIES.filter((q) => q.expect === 'answers');
    const withRows = answering.filter((q) => {
      const expected = EXPLORER_ORACLES[q.id]!(tables);
      return expected.status === 200 && expected.groups.some((g) => g.length > 0);
    });
    expect(withRows.length).toBeGreaterThanOrEqual(Math.ceil(answering.length * 0.7));
  });

  it('ships only events of the last day before the clock (no window rule decides what a query sees)', () => {
    const now = microsOf(EXPLORER_NOW);
    const times = Object.values(events).flatMap((feed) => feed.map((event) => timestampMicros(event.timestamp as string)));
    expect(times.length).toBeGreaterThan(900);
    expect(times.filter((at) => at <= now - DAY || at > now)).toEqual([]);
  });
});
