import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidParameterError, type Endpoints } from '../src/index';
import { endpointsAt, functionEvent, shiftMicros, tempDir, writeLines } from './support/log-files';

const NOW = '2026-11-21T10:15:02.500000Z';

// interval -> [first bucket start, end of the last bucket (exclusive)] at NOW
const WINDOWS: Record<string, [string, string, string]> = {
  '5min': ['2026-11-21T10:10:02.000000Z', '2026-11-21T10:15:03.000000Z', '2026-11-21T10:15:02.000000Z'],
  '15min': ['2026-11-21T10:00:00.000000Z', '2026-11-21T10:16:00.000000Z', '2026-11-21T10:15:00.000000Z'],
  '1hr': ['2026-11-21T09:15:00.000000Z', '2026-11-21T10:16:00.000000Z', '2026-11-21T10:15:00.000000Z'],
  '1day': ['2026-11-20T10:00:00.000000Z', '2026-11-21T11:00:00.000000Z', '2026-11-21T10:00:00.000000Z'],
  '7day': ['2026-11-14T00:00:00.000000Z', '2026-11-22T00:00:00.000000Z', '2026-11-21T00:00:00.000000Z'],
};

describe('functions.invocation-stats', () => {
  const tmp = tempDir();
  let ep: Endpoints;
  let setNow: (iso: string) => void;

  beforeAll(async () => {
    const events: object[] = [];
    // Boundary probes, one project per interval so they do not mix: just outside and just inside both ends.
    for (const [interval, [first, end]] of Object.entries(WINDOWS)) {
      const project = `win-${interval}`;
      events.push(
        functionEvent({ project, timestamp: shiftMicros(first, -1), ms: 1 }),
        functionEvent({ project, timestamp: first, ms: 2 }),
        functionEvent({ project, timestamp: shiftMicros(end, -1), ms: 3 }),
        functionEvent({ project, timestamp: end, ms: 4 }),
      );
    }
    // Statistics: two buckets of 1hr (minute unit), two functions, errors at 399/400/500, a missing time and status.
    events.push(
      functionEvent({ project: 'stats', functionId: 'fa', timestamp: '2026-11-21T10:01:10Z', ms: 10, status: 200 }),
      functionEvent({ project: 'stats', functionId: 'fa', timestamp: '2026-11-21T10:01:20Z', ms: 30, status: 399 }),
      functionEvent({ project: 'stats', functionId: 'fb', timestamp: '2026-11-21T10:01:59.999999Z', ms: 50, status: 400 }),
      functionEvent({ project: 'stats', functionId: 'fb', timestamp: '2026-11-21T10:01:30Z', ms: null, status: 500 }),
      functionEvent({ project: 'stats', functionId: 'fa', timestamp: '2026-11-21T10:03:00Z', ms: 7.5, status: null }),
      // A later-minute event written before earlier ones: order comes from the query, not the file.
      functionEvent({ project: 'stats', functionId: 'fa', timestamp: '2026-11-21T10:00:00Z', ms: 1, status: 200 }),
      functionEvent({ project: 'other', functionId: 'fa', timestamp: '2026-11-21T10:01:10Z', ms: 999 }),
    );
    // Percentiles: 100 values 1..100 ms in one bucket.
    for (let i = 100; i >= 1; i--) events.push(functionEvent({ project: 'pct', timestamp: '2026-11-21T10:05:00Z', ms: i }));
    // Both timestamp forms in one file: integer microseconds and ISO with an offset.
    events.push(
      functionEvent({ project: 'forms', timestamp: 1795255500000000, ms: 5 }), // 2026-11-21T10:05:00Z
      functionEvent({ project: 'forms', timestamp: '2026-11-21T12:05:00.000001+02:00', ms: 6 }),
    );
    writeLines(tmp.path('fn', 'a.ndjson'), events);
    ({ ep, setNow } = await endpointsAt({ functionEdgeLogs: tmp.path('fn', '*.ndjson') }, NOW));
  });
  afterAll(async () => {
    await ep.close();
    tmp.cleanup();
  });

  for (const [interval, [first, , lastBucket]] of Object.entries(WINDOWS)) {
    it(`${interval}: includes [first bucket, last bucket + 1 unit) and nothing outside`, async () => {
      setNow(NOW);
      const rows = await ep.functionsInvocationStats({ project: `win-${interval}`, interval });
      expect(rows.map((r) => [r.timestamp, r.min_execution_time, r.count])).toEqual([
        [first, 2, 1],
        [lastBucket, 3, 1],
      ]);
    });
  }

  it('any other interval value behaves like 1day', async () => {
    setNow(NOW);
    const oneDay = await ep.functionsInvocationStats({ project: 'win-1day', interval: '1day' });
    for (const other of ['2day', '1DAY', 'hourly']) {
      expect(await ep.functionsInvocationStats({ project: 'win-1day', interval: other })).toEqual(oneDay);
    }
  });

  it('computes min, max, avg, count and error_count (status >= 400) per bucket, ordered by time', async () => {
    setNow(NOW);
    const rows = await ep.functionsInvocationStats({ project: 'stats', interval: '1hr' });
    expect(rows.map((r) => r.timestamp)).toEqual(['2026-11-21T10:00:00.000000Z', '2026-11-21T10:01:00.000000Z', '2026-11-21T10:03:00.000000Z']);
    expect(rows[1]).toMatchObject({ min_execution_time: 10, max_execution_time: 50, avg_execution_time: 30, count: 4, error_count: 2 });
    // A missing status code is not an error; a missing execution time still counts.
    expect(rows[2]).toMatchObject({ min_execution_time: 7.5, count: 1, error_count: 0 });
    expect(typeof rows[1]!.count).toBe('number');
  });

  it('function_id absent or empty means all functions; given means only that one', async () => {
    setNow(NOW);
    const all = await ep.functionsInvocationStats({ project: 'stats', interval: '1hr' });
    expect(await ep.functionsInvocationStats({ project: 'stats', interval: '1hr', function_id: '' })).toEqual(all);
    const fb = await ep.functionsInvocationStats({ project: 'stats', interval: '1hr', function_id: 'fb' });
    expect(fb).toEqual([expect.objectContaining({ timestamp: '2026-11-21T10:01:00.000000Z', count: 2, error_count: 2, min_execution_time: 50 })]);
    expect(await ep.functionsInvocationStats({ project: 'stats', interval: '1hr', function_id: 'nope' })).toEqual([]);
  });

  it('only counts the given project', async () => {
    setNow(NOW);
    const rows = await ep.functionsInvocationStats({ project: 'stats', interval: '1hr' });
    expect(rows.every((r) => (r.max_execution_time ?? 0) < 999)).toBe(true);
    expect(await ep.functionsInvocationStats({ project: 'nobody', interval: '1hr' })).toEqual([]);
  });

  it('p95 and p99 lie within the accuracy bound of docs/semantics.md, "functions.invocation-stats"', async () => {
    setNow(NOW);
    const [row] = await ep.functionsInvocationStats({ project: 'pct', interval: '1hr' });
    // n = 100, values 1..100: p95 in [v94, v96], p99 in [v98, v100]
    expect(row!.p95_execution_time).toBeGreaterThanOrEqual(94);
    expect(row!.p95_execution_time).toBeLessThanOrEqual(96);
    expect(row!.p99_execution_time).toBeGreaterThanOrEqual(98);
    expect(row!.p99_execution_time).toBeLessThanOrEqual(100);
    expect(row).toMatchObject({ min_execution_time: 1, max_execution_time: 100, avg_execution_time: 50.5, count: 100 });
  });

  it('reads integer-microsecond and offset ISO timestamps alike', async () => {
    setNow(NOW);
    const [row] = await ep.functionsInvocationStats({ project: 'forms', interval: '1hr' });
    expect(row).toMatchObject({ timestamp: '2026-11-21T10:05:00.000000Z', count: 2, min_execution_time: 5, max_execution_time: 6 });
  });

  it('windows follow the clock', async () => {
    setNow('2026-11-21T11:30:00Z');
    expect(await ep.functionsInvocationStats({ project: 'stats', interval: '1hr' })).toEqual([]);
    setNow(NOW);
  });

  it('rejects a missing or empty project or interval, naming it', async () => {
    setNow(NOW);
    for (const params of [{ interval: '1hr' }, { project: '', interval: '1hr' }, { project: 'stats' }, { project: 'stats', interval: '' }]) {
      const error = await ep.query('functions.invocation-stats' as string, params).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidParameterError);
      expect((error as InvalidParameterError).param).toBe('project' in params && params.project ? 'interval' : 'project');
    }
  });

  it('fillEmptyBuckets adds the empty buckets of the series with count 0 and null statistics', async () => {
    const filled = await endpointsAt({ functionEdgeLogs: tmp.path('fn', '*.ndjson') }, NOW, { fillEmptyBuckets: true });
    try {
      const rows = await filled.ep.functionsInvocationStats({ project: 'stats', interval: '1hr' });
      expect(rows).toHaveLength(61); // 09:15 .. 10:15, one per minute
      expect(rows[0]).toEqual({
        timestamp: '2026-11-21T09:15:00.000000Z',
        min_execution_time: null,
        max_execution_time: null,
        avg_execution_time: null,
        p95_execution_time: null,
        p99_execution_time: null,
        count: 0,
        error_count: 0,
      });
      expect(rows.find((r) => r.timestamp === '2026-11-21T10:01:00.000000Z')).toMatchObject({ count: 4 });
    } finally {
      await filled.ep.close();
    }
  });
});
