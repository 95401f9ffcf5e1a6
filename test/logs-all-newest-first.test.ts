import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newestFirstMerge } from '../src/engine/duckdb/newest-first';
import type { Endpoints } from '../src/index';
import { edgeEvent, tempDir, wholeAndByDay } from './support/log-files';

const NOW = '2026-11-21T12:00:00Z';

/**
 * logs.all over a compacted dataset reads one UTC day at a time, newest first, and stops once no
 * older day can hold one of the 100 newest rows. Its answers must be those of the same events read
 * whole: every tier, bounds in the past, ties across a day's edge, sparse and dense projects.
 */
describe('logs.all, newest day first over a dataset, answers as if every day were read', () => {
  const tmp = tempDir('le-newest-first-');
  let whole: Endpoints;
  let byDay: Endpoints;

  beforeAll(async () => {
    const events: object[] = [];
    const base = Date.parse(NOW);
    for (let i = 0; i < 3000; i++) {
      // 95 days back; 'dense' gets most events, 'sparse' one every few days, 'edge' sits on day boundaries.
      const project = i % 50 === 0 ? 'sparse' : i % 7 === 0 ? 'edge' : 'dense';
      const t =
        project === 'edge'
          ? Math.floor((base - (i % 95) * 86_400_000) / 86_400_000) * 86_400_000 - (i % 3) // at or just before midnight
          : base - ((i * 2_741_000) % (95 * 86_400_000));
      events.push(edgeEvent({ id: `id-${String(i % 997).padStart(4, '0')}-${i}`, project, timestamp: new Date(t).toISOString().replace('Z', `${String(i % 1000).padStart(3, '0')}Z`) }));
    }
    // Ties: the same instant, ids out of order.
    for (const id of ['tie-b', 'tie-a', 'tie-c']) events.push(edgeEvent({ id, project: 'dense', timestamp: '2026-11-20T00:00:00.000000Z' }));
    ({ whole, byDay } = await wholeAndByDay(tmp, events, NOW));
  });
  afterAll(async () => {
    await whole.close();
    await byDay.close();
    tmp.cleanup();
  });

  it('for every project, tier and bound', async () => {
    let compared = 0;
    for (const project of ['dense', 'sparse', 'edge', 'nobody']) {
      for (const project_tier of ['FREE', 'PRO', 'PAYG', 'ENTERPRISE']) {
        for (const bounds of [
          {},
          { iso_timestamp_end: '2026-11-20T00:00:00Z' },
          { iso_timestamp_end: '2026-10-01T00:00:00Z' },
          { iso_timestamp_start: '2026-11-19T23:59:59.999Z' },
          { iso_timestamp_start: '2026-09-01T00:00:00Z', iso_timestamp_end: '2026-09-15T12:00:00Z' },
        ]) {
          const params = { project, project_tier, ...bounds };
          expect(await byDay.logsAll(params), JSON.stringify(params)).toEqual(await whole.logsAll(params));
          compared++;
        }
      }
    }
    expect(compared).toBe(80);
    // The comparisons hit full pages too.
    expect(await byDay.logsAll({ project: 'dense', project_tier: 'PAYG' })).toHaveLength(100);
  });

  it("merges two newest-first lists in the query's order (ids as UTF-8 bytes, null ids last)", () => {
    const row = (timestamp: bigint, id: string | null) => ({ timestamp, id });
    const a = [row(5n, 'b'), row(3n, null)];
    const b = [row(5n, 'a'), row(5n, 'z'), row(5n, 'é'), row(4n, 'x')]; // é is 0xC3 0xA9: after z
    expect(newestFirstMerge(a, b, 10)).toEqual([row(5n, 'a'), row(5n, 'b'), row(5n, 'z'), row(5n, 'é'), row(4n, 'x'), row(3n, null)]);
    expect(newestFirstMerge(a, b, 2)).toEqual([row(5n, 'a'), row(5n, 'b')]);
  });
});
