/**
 * test/studio-replay.test.ts on the ClickHouse engine: Vector's nine feeds shipped over HTTP into
 * managed storage that ships them into a real 2-shard cluster (`storage.clickhouse`), then every
 * request of self-hosted Studio sent as its proxy sends it, each answer compared with the same
 * reference (test/support/supabase/reference.ts): Studio's BigQuery SQL answers alike on both
 * engines (docs/supabase.md, docs/clickhouse.md).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PRIVATE, supabaseOnClickHouse } from './support/supabase-on-clickhouse';
import { studioRequests } from '../support/supabase/studio-requests';
import { followUpRequests, replay } from '../support/supabase/studio-replay';
import { generateVectorEvents } from '../support/supabase/vector-events';

const NOW = new Date('2026-11-21T12:00:00Z');
const DATABASE = 'studio_replay';

const { events } = generateVectorEvents({ now: NOW });
const requests = studioRequests(NOW);
let studio: Awaited<ReturnType<typeof supabaseOnClickHouse>>;

beforeAll(async () => {
  studio = await supabaseOnClickHouse(DATABASE, events, NOW);
});

afterAll(async () => {
  await studio?.stop();
});

describe('Studio (self-hosted) against Vector-shipped feeds on the ClickHouse engine', () => {
  for (const request of requests) {
    it(request.name, async () => {
      const { problem } = await replay(studio.url, PRIVATE, request, events);
      expect(problem).toBeNull();
    });
  }

  it('answers what Studio asks next: the older page of each list, and the first row of each page opened by its id', async () => {
    const lists = [];
    for (const request of requests.filter((r) => r.spec.kind === 'list')) lists.push(await replay(studio.url, PRIVATE, request, events));
    const next = followUpRequests(lists);
    expect(next.filter((r) => r.spec.kind === 'single')).toHaveLength(2 * 11);
    const problems: string[] = [];
    for (const request of next) {
      const { problem } = await replay(studio.url, PRIVATE, request, events);
      if (problem) problems.push(problem);
    }
    expect(problems).toEqual([]);
  });
});
