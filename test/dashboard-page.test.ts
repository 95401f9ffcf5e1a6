// The page's logic that needs no browser: errors in words, cache state, chart columns, URL state.
import { describe, expect, it } from 'vitest';
import { cacheStateOf, describeCacheState, duration } from '../src/dashboard/page/cache-state';
import { apiCountsColumns, invocationStatsColumns, onBucketGrid, statusOf, unixSeconds } from '../src/dashboard/page/series';
import { formatViewState, literalPattern, parseViewState, pick } from '../src/dashboard/page/view-state';
import { errorInWords } from '../src/dashboard/page/words';

describe('errors in words', () => {
  it('asks for the key again on 401', () => {
    expect(errorInWords({ status: 401, code: 'unauthorized', message: 'A valid API key is required.' })).toBe(
      'The server did not accept the API key (401 unauthorized). Enter a valid key.',
    );
  });

  it('names the refused parameter of a 400', () => {
    expect(errorInWords({ status: 400, code: 'invalid_parameter', param: 'iso_timestamp_start', message: 'Parameter "iso_timestamp_start" must be an ISO 8601 timestamp.' })).toBe(
      'The server refused the parameter “iso_timestamp_start” (400 invalid_parameter): Parameter "iso_timestamp_start" must be an ISO 8601 timestamp.',
    );
    expect(errorInWords({ status: 400, code: 'bad_request', message: 'The URL path has malformed percent-encoding.' })).toBe(
      'The server refused the request (400 bad_request): The URL path has malformed percent-encoding.',
    );
  });

  it('says what a 5xx, a 404 and an unreachable server mean', () => {
    expect(errorInWords({ status: 503, code: 'overloaded', retryAfterSeconds: 2 })).toBe('The server is busy (503 overloaded); the next refresh tries again (it asks to wait 2 s).');
    expect(errorInWords({ status: 503, code: 'closed' })).toBe('The server is shutting down (503 closed). Reload the page once it is back.');
    expect(errorInWords({ status: 504, code: 'timeout', message: 'The query ran past 30000 ms.' })).toBe('The query took longer than the server allows (504 timeout). The query ran past 30000 ms.');
    expect(errorInWords({ status: 500, code: 'query_failed', message: 'The query failed.', requestId: 'r-1' })).toBe(
      "The query failed on the server (500 query_failed). The query failed. The server's log has the details (request r-1).",
    );
    expect(errorInWords({ status: 404, code: 'not_found', message: 'No endpoint named x.' })).toBe('Not found (404 not_found): No endpoint named x.');
    expect(errorInWords({ status: 0, network: 'Failed to fetch' })).toBe('The server could not be reached (Failed to fetch). Is it still running?');
    expect(errorInWords({ status: 418 })).toBe('Unexpected answer from the server (418).');
  });
});

describe('cache state', () => {
  it('reads X-Cache, max-age and Server-Timing; the age is the lifetime minus max-age', () => {
    const hit = cacheStateOf({ xCache: 'HIT', cacheControl: 'private, max-age=775', serverTiming: 'engine;dur=12.3' }, 900);
    expect(hit).toEqual({ cache: 'HIT', ageSeconds: 125, freshSeconds: 775, engineMs: 12.3 });
    expect(describeCacheState(hit)).toBe('cache HIT · computed 2 min 5 s ago · fresh for 12 min 55 s · engine 12.3 ms');

    const miss = cacheStateOf({ xCache: 'MISS', cacheControl: 'private, max-age=900', serverTiming: 'engine;dur=240.0' }, 900);
    expect(describeCacheState(miss)).toBe('cache MISS: computed now · fresh for 15 min · engine 240.0 ms');

    const bypass = cacheStateOf({ xCache: 'BYPASS', cacheControl: 'no-store', serverTiming: 'engine;dur=4.5' }, null);
    expect(bypass).toEqual({ cache: 'BYPASS', ageSeconds: null, freshSeconds: null, engineMs: 4.5 });
    expect(describeCacheState(bypass)).toBe('not cached (BYPASS) · engine 4.5 ms');
  });

  it('takes the engine entry among other Server-Timing metrics, and survives missing headers', () => {
    expect(cacheStateOf({ xCache: null, cacheControl: null, serverTiming: 'db;dur=1, engine;desc="duckdb";dur=7.25' }, 900).engineMs).toBe(7.25);
    expect(cacheStateOf({ xCache: null, cacheControl: null, serverTiming: null }, 900)).toEqual({ cache: null, ageSeconds: null, freshSeconds: null, engineMs: null });
    expect(describeCacheState(cacheStateOf({ xCache: null, cacheControl: null, serverTiming: null }, 900))).toBe('');
  });

  it('writes durations the way people read them', () => {
    expect([0, 45, 60, 125, 900, 3600, 3780].map(duration)).toEqual(['0 s', '45 s', '1 min', '2 min 5 s', '15 min', '1 h', '1 h 3 min']);
  });
});

describe('chart columns', () => {
  const stats = [
    { timestamp: '2026-11-21T10:00:00.000000Z', avg_execution_time: 20, p95_execution_time: 30, p99_execution_time: 31, count: 3, error_count: 1 },
    { timestamp: '2026-11-21T11:00:00.000000Z', avg_execution_time: null, p95_execution_time: null, p99_execution_time: null, count: 2, error_count: 0 },
  ];

  it('one point per row, x in Unix seconds, statistics null where the bucket had no execution time', () => {
    const { latency, counts } = invocationStatsColumns(stats);
    const x = [Date.UTC(2026, 10, 21, 10) / 1000, Date.UTC(2026, 10, 21, 11) / 1000];
    expect(latency).toEqual([x, [20, null], [30, null], [31, null]]);
    expect(counts).toEqual([x, [3, 2], [1, 0]]);
  });

  it('stacks api-counts bottom up (REST, storage, auth, realtime), top of the stack drawn first', () => {
    const { stacked, raw, labels } = apiCountsColumns([
      { timestamp: '2026-11-21T00:00:00.000000Z', total_rest_requests: 5, total_storage_requests: 1, total_auth_requests: 2, total_realtime_requests: 3 },
    ]);
    expect(labels).toEqual(['realtime', 'auth', 'storage', 'REST']);
    expect(stacked).toEqual([[Date.UTC(2026, 10, 21) / 1000], [11], [8], [6], [5]]);
    expect(raw).toEqual([[Date.UTC(2026, 10, 21) / 1000], [3], [2], [1], [5]]);
    expect(apiCountsColumns([]).stacked).toEqual([[], [], [], [], []]);
  });

  it('parses six fractional digits to the millisecond', () => {
    expect(unixSeconds('2026-11-21T10:00:00.123456Z')).toBe(Date.UTC(2026, 10, 21, 10, 0, 0, 123) / 1000);
    expect(unixSeconds('2026-11-21T10:00:00Z')).toBe(Date.UTC(2026, 10, 21, 10) / 1000);
  });

  it('spreads rows over the whole bucket grid of the window, null where a bucket is empty, points in the middle of their bucket', () => {
    const hour = 3600;
    const at = (h: number) => Date.UTC(2026, 10, 21, h) / 1000;
    // Buckets 08, 10 and 11 of a window 08..12: 09 is empty, so a line breaks there; a row before the window is left out.
    const grid = onBucketGrid([[at(6), at(8), at(10), at(11)], [9, 1, 2, 3], [0, 0, 1, 0]], { start: at(8), end: at(12), bucket: hour });
    expect(grid).toEqual([
      [at(8) + 1800, at(9) + 1800, at(10) + 1800, at(11) + 1800],
      [1, null, 2, 3],
      [0, null, 1, 0],
    ]);
    expect(onBucketGrid([[]], { start: at(8), end: at(10), bucket: hour })).toEqual([[at(8) + 1800, at(9) + 1800]]);
  });

  it('does not spread over more buckets than a chart can draw: the rows of the window stay, in their bucket’s middle', () => {
    const grid = onBucketGrid([[0, 10, 20_000], [1, 2, 3]], { start: 0, end: 10_000, bucket: 1 });
    expect(grid).toEqual([[0.5, 10.5], [1, 2]]);
  });

  it('reads a gateway entry’s status from metadata.response.status_code', () => {
    expect(statusOf({ response: { status_code: 404 } })).toBe(404);
    expect([null, {}, { response: null }, { response: { status_code: '200' } }].map(statusOf)).toEqual([null, null, null, null]);
  });
});

describe('the URL fragment', () => {
  const state = { project: 'abc', functionId: '', range: '1hr', tier: 'PRO', after: '2026-11-21T10:00:00Z', until: '' };

  it('keeps the choices across a reload, leaving empty ones out', () => {
    const fragment = formatViewState(state);
    expect(fragment).toBe('#project=abc&range=1hr&tier=PRO&after=2026-11-21T10%3A00%3A00Z');
    expect(parseViewState(fragment)).toEqual({ project: 'abc', range: '1hr', tier: 'PRO', after: '2026-11-21T10:00:00Z' });
    expect(parseViewState('')).toEqual({});
  });

  it('only picks values the lists offer', () => {
    expect(pick(['1hr', '1day'], '1hr', '1day')).toBe('1hr');
    expect(pick(['1hr', '1day'], 'bogus', '1day')).toBe('1day');
    expect(pick(['a', 'b'], undefined, 'z')).toBe('a');
    expect(pick([], undefined, 'z')).toBe('');
  });

  it('turns a project ref into a pattern that matches only itself', () => {
    expect(literalPattern('abc')).toBe('abc');
    expect(literalPattern('a.b*c')).toBe('a\\.b\\*c');
    expect(new RegExp(literalPattern('a.(b)+[c]|d\\')).test('a.(b)+[c]|d\\')).toBe(true);
  });
});
