// The page's logic that needs no browser: errors in words, cache state, chart columns, URL state.
import { describe, expect, it } from 'vitest';
import { cacheStateOf, describeCacheState, duration } from '../src/dashboard/page/cache-state';
import { apiCountsColumns, invocationStatsColumns, onBucketGrid, statusOf, unixSeconds } from '../src/dashboard/page/series';
import { formatCell, inferColumns, rowsChart } from '../src/dashboard/page/generic-rows';
import { bucketBounds, bucketLabel, clockOffset, intervalFor, intervalParam, isoMicros, rangeChoices, rangeSeconds, rangeWindow, windowForRows } from '../src/dashboard/page/time-range';
import { entryTotals, invocationTotals, percent, requestTotals } from '../src/dashboard/page/totals';
import { formatViewState, literalPattern, parseViewState, pick } from '../src/dashboard/page/view-state';
import { errorInWords } from '../src/dashboard/page/words';
import { functionsInvocationStats, p } from '../src/index';

describe('errors in words', () => {
  it('asks for the key again on 401', () => {
    expect(errorInWords({ status: 401, code: 'unauthorized', message: 'A valid API key is required.' })).toBe('The server did not accept the API key (401 unauthorized). Enter a valid key.');
  });

  it('names the refused parameter of a 400', () => {
    expect(errorInWords({ status: 400, code: 'invalid_parameter', param: 'iso_timestamp_start', message: 'Parameter "iso_timestamp_start" must be an ISO 8601 timestamp.' })).toBe(
      'The server refused the parameter “iso_timestamp_start” (400 invalid_parameter): Parameter "iso_timestamp_start" must be an ISO 8601 timestamp.',
    );
    expect(errorInWords({ status: 400, code: 'invalid_sql', message: 'Only a SELECT is allowed.' })).toBe('The server refused your query (400 invalid_sql): Only a SELECT is allowed.');
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
    const grid = onBucketGrid(
      [
        [at(6), at(8), at(10), at(11)],
        [9, 1, 2, 3],
        [0, 0, 1, 0],
      ],
      { start: at(8), end: at(12), bucket: hour },
    );
    expect(grid).toEqual([
      [at(8) + 1800, at(9) + 1800, at(10) + 1800, at(11) + 1800],
      [1, null, 2, 3],
      [0, null, 1, 0],
    ]);
    expect(onBucketGrid([[]], { start: at(8), end: at(10), bucket: hour })).toEqual([[at(8) + 1800, at(9) + 1800]]);
  });

  it('does not spread over more buckets than a chart can draw: the rows of the window stay, in their bucket’s middle', () => {
    const grid = onBucketGrid(
      [
        [0, 10, 20_000],
        [1, 2, 3],
      ],
      { start: 0, end: 10_000, bucket: 1 },
    );
    expect(grid).toEqual([
      [0.5, 10.5],
      [1, 2],
    ]);
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

/**
 * What a server describes for a one-of parameter of these values (`intervals` in GET /api/endpoints):
 * the page's only source of what an interval means.
 */
const described = (values: readonly string[]) => p.oneOf(values).spec.intervals ?? {};
const STATS_INTERVALS = functionsInvocationStats.params.find((s) => s.name === 'interval')!.intervals!;
const USAGE_INTERVALS = described(['hourly', 'daily', 'minutely']);
const STUDIO_INTERVALS = described(['15min', '30min', '1hr', '3hr', '1day', '3day', '7day']);
const at = (iso: string) => Date.parse(iso) / 1000;

describe('the shared time range', () => {
  it("reads what each interval means from the endpoint's description, not from a table of its own", () => {
    expect(STATS_INTERVALS).toEqual({
      '5min': { span: 300, bucket: 1 },
      '15min': { span: 900, bucket: 60 },
      '1hr': { span: 3600, bucket: 60 },
      '1day': { span: 86_400, bucket: 3600 },
      '7day': { span: 604_800, bucket: 86_400 },
    });
    // A value the server does not describe is not placed, whatever its name says.
    expect(intervalFor({ '1hr': { span: 7200, bucket: 600 } }, 7200)).toEqual({ value: '1hr', span: 7200, bucket: 600 });
  });

  it('finds the parameter that picks a window: the one whose description carries interval meanings', () => {
    expect(intervalParam([{ name: 'project' }, { name: 'interval', values: Object.keys(STATS_INTERVALS), intervals: STATS_INTERVALS }])?.name).toBe('interval');
    expect(intervalParam([{ name: 'project_tier', values: ['FREE', 'PRO'] }])).toBeNull();
    expect(intervalParam([{ name: 'window', values: ['1hr', 'fortnight'], intervals: described(['1hr', 'fortnight']) }])).toBeNull();
  });

  it('offers the ranges some endpoint can show, shortest first', () => {
    expect(rangeChoices([STATS_INTERVALS, USAGE_INTERVALS]).map((r) => r.name)).toEqual(['5min', '15min', '1hr', '1day', '7day']);
    expect(rangeChoices([USAGE_INTERVALS, STUDIO_INTERVALS]).map((r) => r.name)).toEqual(['15min', '30min', '1hr', '3hr', '1day', '3day', '7day']);
    expect(rangeChoices([{}])).toEqual([]);
    expect(rangeChoices([described(['1day'])])).toEqual([{ name: '1day', label: 'last day' }]);
    expect([rangeSeconds('1hr'), rangeSeconds('7day'), rangeSeconds('nonsense')]).toEqual([3600, 604_800, 86_400]);
  });

  it('asks each endpoint for the interval of exactly that window, the finest buckets first', () => {
    expect(intervalFor(STATS_INTERVALS, 3600)).toEqual({ value: '1hr', span: 3600, bucket: 60 });
    expect(intervalFor(USAGE_INTERVALS, 3600)).toEqual({ value: 'minutely', span: 3600, bucket: 60 });
    expect(intervalFor({ ...USAGE_INTERVALS, ...STUDIO_INTERVALS }, 86_400)).toEqual({ value: '1day', span: 86_400, bucket: 3600 });
    expect(intervalFor(USAGE_INTERVALS, 604_800)?.value).toBe('daily');
  });

  it('without that window, the shortest one covering the range, else the longest there is', () => {
    // usage.api-counts before Studio's intervals has no one-day window: seven days, cut to the range by the panel.
    expect(intervalFor(USAGE_INTERVALS, 86_400)).toEqual({ value: 'daily', span: 604_800, bucket: 86_400 });
    expect(intervalFor(USAGE_INTERVALS, 300)?.value).toBe('minutely');
    expect(intervalFor(described(['5min', '15min']), 86_400)?.value).toBe('15min');
    expect(intervalFor(described(['FREE']), 3600)).toBeNull();
  });

  it('draws whole buckets, from the one holding now - range to the one holding now', () => {
    const now = Date.parse('2026-11-21T12:34:56.789Z');
    expect(rangeWindow(now, 86_400, 3600)).toEqual({ start: at('2026-11-20T12:00:00Z'), end: at('2026-11-21T13:00:00Z'), bucket: 3600 });
    expect(rangeWindow(now, 300, 1)).toEqual({ start: at('2026-11-21T12:29:56Z'), end: at('2026-11-21T12:34:57Z'), bucket: 1 });
    expect(rangeWindow(now, 604_800, 86_400)).toEqual({ start: at('2026-11-14T00:00:00Z'), end: at('2026-11-22T00:00:00Z'), bucket: 86_400 });
  });

  it('grows the window to hold every row, or keeps only the range’s buckets when the interval covers more', () => {
    const window = { start: at('2026-11-21T11:00:00Z'), end: at('2026-11-21T12:01:00Z'), bucket: 60 };
    const late = at('2026-11-21T12:14:30Z');
    const grown = windowForRows(window, [at('2026-11-21T11:30:00Z'), late], false);
    expect(grown.window).toEqual({ ...window, end: at('2026-11-21T12:15:00Z') });
    expect(grown.inside(at('2026-11-01T00:00:00Z'))).toBe(true);
    const clipped = windowForRows(window, [at('2026-11-21T10:00:00Z')], true);
    expect(clipped.window).toEqual(window);
    expect([clipped.inside(at('2026-11-21T10:59:00Z')), clipped.inside(window.start), clipped.inside(window.end)]).toEqual([false, true, false]);
  });

  it('takes the server’s clock from the catalog: its since is the server’s now less the days', () => {
    expect(clockOffset('2026-11-14T12:00:00.000000Z', 7, Date.parse('2026-11-23T18:00:00Z'))).toBe(Date.parse('2026-11-21T12:00:00Z') - Date.parse('2026-11-23T18:00:00Z'));
    expect(clockOffset('not a time', 7, 1000)).toBe(0);
  });

  it('selects exactly one bucket of logs.all: the exclusive start a microsecond before it, the inclusive end its last microsecond', () => {
    expect(bucketBounds(at('2026-11-21T10:00:00Z'), 3600)).toEqual({ after: '2026-11-21T09:59:59.999999Z', until: '2026-11-21T10:59:59.999999Z' });
    expect(bucketBounds(at('2026-11-21T10:00:05Z'), 1)).toEqual({ after: '2026-11-21T10:00:04.999999Z', until: '2026-11-21T10:00:05.999999Z' });
    expect(isoMicros(Date.parse('2026-11-21T10:00:00.123Z') * 1000 + 456)).toBe('2026-11-21T10:00:00.123456Z');
    expect(isoMicros(0)).toBe('1970-01-01T00:00:00.000000Z');
  });

  it('names a bucket by its start, as precisely as its width needs', () => {
    const start = at('2026-11-21T10:00:05Z');
    expect([bucketLabel(start, 1), bucketLabel(start - 5, 60), bucketLabel(start - 5, 3600), bucketLabel(at('2026-11-21T00:00:00Z'), 86_400)]).toEqual([
      '2026-11-21 10:00:05',
      '2026-11-21 10:00',
      '2026-11-21 10:00',
      '2026-11-21',
    ]);
  });
});

describe('window totals', () => {
  it('writes shares the way people read them', () => {
    expect([percent(1, 3), percent(0, 5), percent(5, 5), percent(1, 2000), percent(0, 0), percent(1, 8)]).toEqual(['33.3 %', '0 %', '100 %', '< 0.1 %', '–', '12.5 %']);
  });

  it('sums invocations and errors, and the error rate among them; red only when there are errors', () => {
    const rows = [
      { timestamp: 't', avg_execution_time: 1, p95_execution_time: 1, p99_execution_time: 1, count: 1200, error_count: 30 },
      { timestamp: 't', avg_execution_time: 1, p95_execution_time: 1, p99_execution_time: 1, count: 800, error_count: 20 },
    ];
    expect(invocationTotals(rows)).toEqual([
      { key: 'invocations', label: 'invocations', value: '2,000' },
      { key: 'errors', label: 'errors', value: '50', bad: true },
      { key: 'error-rate', label: 'error rate', value: '2.5 %', bad: true },
    ]);
    expect(invocationTotals([{ ...rows[0]!, count: 1, error_count: 0 }]).map((t) => [t.label, t.value, t.bad ?? false])).toEqual([
      ['invocation', '1', false],
      ['errors', '0', false],
      ['error rate', '0 %', false],
    ]);
  });

  it('sums requests by product (the rows hold no status), and the errors among the log entries shown', () => {
    const counts = { timestamp: 't', total_rest_requests: 4, total_storage_requests: 1, total_auth_requests: 1, total_realtime_requests: 0 };
    expect(requestTotals([counts, counts]).map((t) => [t.key, t.value])).toEqual([
      ['requests', '12'],
      ['rest', '8'],
      ['storage', '2'],
      ['auth', '2'],
      ['realtime', '0'],
    ]);
    const entry = (status: number | null) => ({ id: 'x', timestamp: 't', event_message: null, metadata: status === null ? null : { response: { status_code: status } } });
    expect(entryTotals([entry(200), entry(404), entry(500), entry(null)]).map((t) => t.value)).toEqual(['4', '2', '50 %']);
  });
});

describe('rows of an endpoint the page knows only by its description', () => {
  it('formats cells by column type', () => {
    expect(formatCell('timestamp', '2026-11-21T10:00:00.123456Z')).toBe('2026-11-21 10:00:00.123');
    expect(formatCell('integer', 1234567)).toBe('1,234,567');
    expect(formatCell('float', 12.34567)).toBe('12.346');
    expect(formatCell('json', { a: [1] })).toBe('{"a":[1]}');
    expect(formatCell('text', null)).toBe('–');
    expect(formatCell('text', 'x'.repeat(400))).toBe(`${'x'.repeat(300)}…`);
  });

  it('types the columns of a caller’s own SELECT by their values, in order of appearance', () => {
    expect(
      inferColumns([
        { t: '2026-11-21T10:00:00Z', n: 1, f: 1.5, o: { a: 1 } },
        { s: 'x', n: null, f: 2 },
      ]),
    ).toEqual([
      { name: 't', type: 'timestamp' },
      { name: 'n', type: 'integer' },
      { name: 'f', type: 'float' },
      { name: 'o', type: 'json' },
      { name: 's', type: 'text' },
    ]);
    expect(inferColumns([])).toEqual([]);
  });

  it('charts numeric columns over the timestamp column, one point per distinct time, sorted', () => {
    const columns = [
      { name: 'ts', type: 'timestamp' },
      { name: 'calls', type: 'integer' },
      { name: 'mean_ms', type: 'float' },
    ];
    const chart = rowsChart(columns, [
      { ts: '2026-11-21T11:00:00Z', calls: 2, mean_ms: 3.5 },
      { ts: '2026-11-21T10:00:00Z', calls: 5, mean_ms: 1.5 },
    ]);
    expect(chart).toEqual({
      time: 'ts',
      series: [
        { label: 'calls', kind: 'line' },
        { label: 'mean_ms', kind: 'line' },
      ],
      columns: [
        [at('2026-11-21T10:00:00Z'), at('2026-11-21T11:00:00Z')],
        [5, 2],
        [1.5, 3.5],
      ],
      bucket: 3600,
      integers: false,
    });
    expect(rowsChart([{ name: 'calls', type: 'integer' }], [{ calls: 1 }])).toBeNull();
  });

  it('sums the integer columns of rows that share a time and leaves the float ones out', () => {
    const columns = [
      { name: 'ts', type: 'timestamp' },
      { name: 'route', type: 'text' },
      { name: 'requests', type: 'integer' },
      { name: 'p50', type: 'float' },
    ];
    const chart = rowsChart(columns, [
      { ts: '2026-11-21T10:00:00Z', route: 'a', requests: 5, p50: 1 },
      { ts: '2026-11-21T10:00:00Z', route: 'b', requests: 3, p50: 2 },
    ])!;
    expect(chart.series).toEqual([{ label: 'requests (sum)', kind: 'line' }]);
    expect(chart.columns).toEqual([[at('2026-11-21T10:00:00Z')], [8]]);
    expect(chart.integers).toBe(true);
  });

  it('counts rows per bucket when no column can be summed, the bucket as fine as keeps 120 of them at most', () => {
    const chart = rowsChart(
      [
        { name: 'ts', type: 'timestamp' },
        { name: 'msg', type: 'text' },
      ],
      [{ ts: '2026-11-21T10:00:01Z' }, { ts: '2026-11-21T10:00:59Z' }, { ts: '2026-11-21T10:30:00Z' }, { ts: 'not a time' }],
    )!;
    expect(chart.bucket).toBe(60);
    expect(chart.series).toEqual([{ label: 'rows', kind: 'bars' }]);
    expect(chart.columns).toEqual([
      [at('2026-11-21T10:00:00Z'), at('2026-11-21T10:30:00Z')],
      [2, 1],
    ]);
  });
});
