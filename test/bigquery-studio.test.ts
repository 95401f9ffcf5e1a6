import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BigQueryHarness, type TestEvent } from './support/bigquery-harness';
import { allStudioQueries, studioChartQuery, studioCountQuery, studioListQuery, studioSingleLogQuery, studioWhere, STUDIO_FILTERS, STUDIO_TEMPLATES } from './support/studio-queries';

// Every query self-hosted Studio sends to logs.all translates, passes the sandbox and runs; the
// logs pages' answers are what the events say.

const edge = (id: string, minute: number, path: string | null, status: number | null, method = 'GET'): TestEvent => ({
  id,
  timestamp: `2026-11-20T10:${String(minute).padStart(2, '0')}:00Z`,
  event_message: `${method} | ${status} | ${path}`,
  ...(path === null
    ? {}
    : {
        metadata: {
          request: { path, method, search: '', headers: { x_real_ip: '10.0.0.9' }, cf: { country: 'NZ' } },
          response: { status_code: status, origin_time: status === 500 ? 2000 : 5, headers: { cf_cache_status: 'MISS' } },
        },
      }),
});
const EDGE = [
  edge('e1', 1, '/rest/v1/todos', 200),
  edge('e2', 1, '/rest/v1/todos', 500),
  edge('e3', 2, '/storage/v1/object/pic', 404),
  edge('e4', 3, '/auth/v1/token', 200, 'POST'),
  edge('e5', 3, null, null),
];
const AUTH: TestEvent[] = [
  { id: 'a1', timestamp: '2026-11-20T10:00:00Z', event_message: '{"level":"info"}', metadata: { level: 'info', status: 200, path: '/token', msg: 'ok' } },
  { id: 'a2', timestamp: '2026-11-20T10:00:10Z', event_message: '{"level":"info"}', metadata: { level: 'info', status: 422, path: '/signup' } },
  { id: 'a3', timestamp: '2026-11-20T10:01:00Z', event_message: '{"level":"error"}', metadata: { level: 'error', path: '/admin/users' } },
];
const POSTGRES: TestEvent[] = [
  { id: 'p1', timestamp: '2026-11-20T10:00:00Z', event_message: 'cron job 1 starting', metadata: { parsed: { error_severity: 'LOG', application_name: 'pg_cron', user_name: 'postgres' } } },
  { id: 'p2', timestamp: '2026-11-20T10:00:05Z', event_message: 'relation does not exist', metadata: { parsed: { error_severity: 'ERROR', user_name: 'anon' } } },
];

describe("Supabase Studio's queries (self-hosted) on DuckDB", () => {
  const h = new BigQueryHarness();
  beforeAll(() => h.open({ edge_logs: EDGE, auth_logs: AUTH, postgres_logs: POSTGRES }));
  afterAll(() => h.close());

  it('translates, checks and runs every template, list, count, chart and single-log query', async () => {
    const all = allStudioQueries();
    expect(all.length).toBeGreaterThan(150);
    const failed: string[] = [];
    for (const { name, sql } of all) await h.rows(sql).catch((error: Error) => failed.push(`${name}: ${error.message}`));
    expect(failed).toEqual([]);
  });

  it('the API logs page: list, count and chart agree with the events (a row without metadata is counted, as Studio shows it today)', async () => {
    const list = await h.rows(studioListQuery('edge_logs', ''));
    // Newest first (e4 and e5 share their instant, e1 and e2 theirs).
    expect(list.map((r) => r.timestamp)).toEqual(['10:03', '10:03', '10:02', '10:01', '10:01'].map((t) => `2026-11-20T${t}:00Z`));
    expect(list.find((r) => r.id === 'e3')).toEqual({
      id: 'e3',
      timestamp: '2026-11-20T10:02:00Z',
      event_message: 'GET | 404 | /storage/v1/object/pic',
      method: 'GET',
      path: '/storage/v1/object/pic',
      search: '',
      status_code: 404,
    });
    expect(list.find((r) => r.id === 'e5')).toMatchObject({ method: null, path: null, status_code: null });
    expect(Object.keys(list[0]!)).toEqual(['id', 'timestamp', 'event_message', 'method', 'path', 'search', 'status_code']);
    expect(await h.rows(studioCountQuery('edge_logs', ''))).toEqual([{ count: 5 }]);
    expect(await h.rows(studioCountQuery('edge_logs', studioWhere(['response.status_code between 500 and 599'])))).toEqual([{ count: 1 }]);
    expect(await h.rows(studioCountQuery('edge_logs', studioWhere(["request.method = 'GET'", "request.path like '/rest/%' or request.path like '/graphql/%'"])))).toEqual([{ count: 2 }]);
    expect(await h.rows(studioChartQuery('edge_logs', '', 'minute', '2026-11-20T04:00:00.000Z'))).toEqual([
      { timestamp: '2026-11-20T10:01:00Z', ok_count: 1, error_count: 1, warning_count: 0 },
      { timestamp: '2026-11-20T10:02:00Z', ok_count: 0, error_count: 0, warning_count: 1 },
      { timestamp: '2026-11-20T10:03:00Z', ok_count: 1, error_count: 0, warning_count: 0 },
    ]);
  });

  it('the auth page: severity from level and status (IFNULL, SAFE_CAST), status ranges, endpoint regexes', async () => {
    const count = async (filter: string) => (await h.rows(studioCountQuery('auth_logs', studioWhere([filter]))))[0]!.count;
    const [, error, warning, info] = STUDIO_FILTERS.auth_logs!;
    expect([await count(error!), await count(warning!), await count(info!)]).toEqual([1, 1, 1]);
    expect(await count('cast(metadata.status as int64) between 400 and 499')).toBe(1);
    expect(await count('REGEXP_CONTAINS(metadata.path, "/admin")')).toBe(1);
    expect(await h.rows(studioChartQuery('auth_logs', '', 'hour', '2026-11-20T00:00:00.000Z'))).toEqual([{ timestamp: '2026-11-20T10:00:00Z', ok_count: 1, error_count: 1, warning_count: 1 }]);
  });

  it('the database page, pg_cron, the single log and the templates answer from the events', async () => {
    expect((await h.rows(studioListQuery('postgres_logs', studioWhere(["parsed.error_severity in ('ERROR', 'FATAL', 'PANIC')"])))).map((r) => r.id)).toEqual(['p2']);
    expect(await h.rows(studioSingleLogQuery('edge_logs', 'e3'))).toEqual([
      { id: 'e3', timestamp: '2026-11-20T10:02:00Z', event_message: 'GET | 404 | /storage/v1/object/pic', metadata: EDGE[2]!.metadata },
    ]);
    const top = await h.rows(STUDIO_TEMPLATES['Top Paths']!);
    expect(top[0]).toEqual({ path: '/rest/v1/todos', params: '', c: 2 });
    expect(
      top
        .slice(1)
        .map((r) => r.path)
        .sort(),
    ).toEqual(['/auth/v1/token', '/storage/v1/object/pic', null].sort());
    expect(await h.rows(STUDIO_TEMPLATES['Slow Response Time']!)).toEqual([{ timestamp: '2026-11-20T10:01:00Z', event_message: 'GET | 500 | /rest/v1/todos', origin_time: 2000 }]);
    expect(await h.rows(STUDIO_TEMPLATES['Error Count by User']!)).toEqual([{ count: 1, user_name: 'anon', error_severity: 'ERROR' }]);
    expect(await h.rows(STUDIO_TEMPLATES['Storage Top Cache Misses']!)).toEqual([{ path: '/storage/v1/object/pic', search: '', count: 1 }]);
    expect(await h.rows(STUDIO_TEMPLATES['Requests by Geography']!)).toEqual([
      { country: 'NZ', count: 4 },
      { country: null, count: 1 },
    ]);
    expect(await h.rows(STUDIO_TEMPLATES['Storage Egress Requests']!)).toEqual([{ http_verb: 'GET', filepath: '/storage/v1/object/pic', cached: false, num_requests: 1 }]);
    expect(
      await h.rows(
        "SELECT count(*) as count FROM postgres_logs cross join unnest(metadata) as m\n  cross join unnest(m.parsed) as parsed where ( parsed.application_name = 'pg_cron' or event_message::text LIKE '%cron job%' )",
      ),
    ).toEqual([{ count: 1 }]);
  });
});
