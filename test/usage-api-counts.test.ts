import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidParameterError, type Endpoints } from '../src/index';
import { edgeEvent, endpointsAt, shiftMicros, tempDir, writeLines } from './support/log-files';

const NOW = '2026-11-21T12:30:00.000000Z';
// interval -> window start (now - window), first bucket that start falls in
const WINDOWS: Record<string, [string, string]> = {
  hourly: ['2026-11-21T11:30:00.000000Z', '2026-11-21T11:00:00.000000Z'],
  daily: ['2026-11-14T12:30:00.000000Z', '2026-11-14T00:00:00.000000Z'],
  minutely: ['2026-11-21T11:30:00.000000Z', '2026-11-21T11:30:00.000000Z'],
  // Supabase Studio's and the Management API's values.
  '15min': ['2026-11-21T12:15:00.000000Z', '2026-11-21T12:15:00.000000Z'],
  '30min': ['2026-11-21T12:00:00.000000Z', '2026-11-21T12:00:00.000000Z'],
  '1hr': ['2026-11-21T11:30:00.000000Z', '2026-11-21T11:30:00.000000Z'],
  '3hr': ['2026-11-21T09:30:00.000000Z', '2026-11-21T09:00:00.000000Z'],
  '1day': ['2026-11-20T12:30:00.000000Z', '2026-11-20T12:00:00.000000Z'],
  '3day': ['2026-11-18T12:30:00.000000Z', '2026-11-18T12:00:00.000000Z'],
  '7day': ['2026-11-14T12:30:00.000000Z', '2026-11-14T00:00:00.000000Z'],
};

describe('usage.api-counts', () => {
  const tmp = tempDir();
  let ep: Endpoints;
  let setNow: (iso: string) => void;

  beforeAll(async () => {
    const events: object[] = [];
    for (const [interval, [start]] of Object.entries(WINDOWS)) {
      const project = `win${interval}`;
      events.push(
        edgeEvent({ project, timestamp: shiftMicros(start, -1), path: '/rest/v1/a' }),
        edgeEvent({ project, timestamp: start, path: '/storage/v1/a' }),
        // No upper bound: a request stamped after now still counts.
        edgeEvent({ project, timestamp: '2026-11-21T12:45:10Z', path: '/auth/v1/a' }),
      );
    }
    events.push(
      edgeEvent({ project: 'cls', timestamp: '2026-11-21T12:10:00Z', path: '/rest/v1/todos' }),
      edgeEvent({ project: 'cls', timestamp: '2026-11-21T12:11:00Z', path: '/storage/v1/object/x' }),
      edgeEvent({ project: 'cls', timestamp: '2026-11-21T12:12:00Z', path: '/auth/v1/token' }),
      edgeEvent({ project: 'cls', timestamp: '2026-11-21T12:13:00Z', path: '/realtime/v1/websocket' }),
      // Several classes in one path: counted in each.
      edgeEvent({ project: 'cls', timestamp: '2026-11-21T12:14:00Z', path: '/rest/v1/rpc/storage/auth/realtime' }),
      // No class: the bucket still appears (all counts 0) because a request of the project matched.
      edgeEvent({ project: 'cls', timestamp: '2026-11-21T10:00:00Z', path: '/functions/v1/hello' }),
      // A missing request path counts in no class.
      { ...edgeEvent({ project: 'cls', timestamp: '2026-11-21T10:00:01Z' }), metadata: { request: { url: 'https://cls.supabase.co/x' } } },
      edgeEvent({ project: 'other', timestamp: '2026-11-21T12:10:00Z', path: '/rest/v1/todos' }),
      edgeEvent({ project: 'cls2', timestamp: '2026-11-21T12:10:00Z', path: '/rest/v1/todos' }),
    );
    // 1100 distinct future minutes: the 1000-row cap keeps the first 1000 in time order.
    for (let i = 0; i < 1100; i++) {
      events.push(edgeEvent({ project: 'cap', timestamp: new Date(Date.parse(NOW) + i * 60_000).toISOString(), path: '/rest/v1/x' }));
    }
    writeLines(tmp.path('edge.ndjson'), events);
    ({ ep, setNow } = await endpointsAt({ edgeLogs: tmp.path('edge.ndjson') }, NOW));
  });
  afterAll(async () => {
    await ep.close();
    tmp.cleanup();
  });

  for (const [interval, [, firstBucket]] of Object.entries(WINDOWS)) {
    it(`${interval}: counts from the window start (inclusive) with no upper bound`, async () => {
      setNow(NOW);
      const rows = await ep.usageApiCounts({ project: `win${interval}\\.`, interval: interval as 'hourly' });
      const total = rows.reduce((n, r) => n + r.total_rest_requests + r.total_storage_requests + r.total_auth_requests, 0);
      expect(total).toBe(2);
      expect(rows[0]).toMatchObject({ timestamp: firstBucket, total_rest_requests: 0, total_storage_requests: 1 });
      expect(rows.at(-1)!.total_auth_requests).toBe(1);
    });
  }

  it('buckets by hour, day and minute', async () => {
    setNow(NOW);
    const minutely = await ep.usageApiCounts({ project: 'cls', interval: 'minutely' });
    expect(minutely.map((r) => r.timestamp)).toEqual([10, 11, 12, 13, 14].map((m) => `2026-11-21T12:${m}:00.000000Z`));
    const hourly = await ep.usageApiCounts({ project: 'cls', interval: 'hourly' });
    expect(hourly.map((r) => r.timestamp)).toEqual(['2026-11-21T12:00:00.000000Z']);
    const daily = await ep.usageApiCounts({ project: 'cls', interval: 'daily' });
    expect(daily.map((r) => r.timestamp)).toEqual(['2026-11-21T00:00:00.000000Z']);
  });

  it('classifies by path; a path with several classes counts in each; other paths count in none', async () => {
    setNow(NOW);
    const [day] = await ep.usageApiCounts({ project: '^https://cls\\.', interval: 'daily' });
    expect(day).toEqual({
      timestamp: '2026-11-21T00:00:00.000000Z',
      total_rest_requests: 2,
      total_storage_requests: 2,
      total_auth_requests: 2,
      total_realtime_requests: 2,
    });
    setNow('2026-11-21T10:30:00Z');
    const hourly = await ep.usageApiCounts({ project: '^https://cls\\.', interval: 'hourly' });
    expect(hourly[0]).toEqual({
      timestamp: '2026-11-21T10:00:00.000000Z',
      total_rest_requests: 0,
      total_storage_requests: 0,
      total_auth_requests: 0,
      total_realtime_requests: 0,
    });
  });

  it('project is a regular expression searched in the request URL', async () => {
    setNow(NOW);
    const sum = async (project: string) => (await ep.usageApiCounts({ project, interval: 'daily' })).reduce((n, r) => n + r.total_rest_requests, 0);
    expect(await sum('cls')).toBe(3); // cls and cls2 both contain "cls"
    expect(await sum('^https://cls\\.')).toBe(2);
    expect(await sum('https://(cls|other)\\.supabase')).toBe(3);
    expect(await sum('no-such-host')).toBe(0);
    // A quote is data, never SQL.
    expect(await sum("cls' OR '1'='1")).toBe(0);
  });

  it('an invalid pattern is invalid_parameter, not a server error', async () => {
    setNow(NOW);
    for (const bad of ['(', '[a-', '(?<!x)y']) {
      const error = await ep.usageApiCounts({ project: bad, interval: 'daily' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidParameterError);
      expect(error).toMatchObject({ param: 'project', status: 400 });
    }
  });

  it('an interval other than the allowed ones is invalid_parameter listing them all', async () => {
    setNow(NOW);
    for (const bad of ['weekly', 'Daily', '2day', '1DAY', '60min']) {
      const error = await ep.query('usage.api-counts' as string, { project: 'cls', interval: bad }).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'invalid_parameter', param: 'interval' });
      expect((error as Error).message).toContain('hourly, daily, minutely, 15min, 30min, 1hr, 3hr, 1day, 3day, 7day');
    }
  });

  it('returns at most 1000 rows, the earliest buckets', async () => {
    setNow(NOW);
    const rows = await ep.usageApiCounts({ project: '^https://cap\\.', interval: 'minutely' });
    expect(rows).toHaveLength(1000);
    expect(rows[0]!.timestamp).toBe('2026-11-21T12:30:00.000000Z');
    expect(rows[999]!.timestamp).toBe(new Date(Date.parse(NOW) + 999 * 60_000).toISOString().replace('Z', '000Z'));
  });
});
