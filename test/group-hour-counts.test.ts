import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compactLogs } from '../src/compaction/compact';
import { backfillRollups } from '../src/compaction/backfill-rollups';
import { edgeLogs } from '../src/sources/edge-logs';
import { appendCommit, readDatasetStateStable, type DataFile } from '../src/dataset/dataset-log';
import { datasetDir } from '../src/managed/managed-inputs';
import { createEndpoints, defineSource, InvalidOptionError, SUPABASE_SOURCES, type Endpoints } from '../src/index';
import { EXPLORER_TEMPLATES } from './support/supabase/studio-templates';
import { edgeEvent, endpointsAt, tempDir, writeLines } from './support/log-files';
import { withParquetReads } from './support/parquet-reads';

const NOW = '2026-11-22T12:00:00Z';
const DAYS = ['2026-11-19', '2026-11-20', '2026-11-21'];
const PAIRS = 'edge_logs_typed_pairs';
const OPTIONS = { sourceDefinitions: SUPABASE_SOURCES, sandboxable: ['logs.all'], tierWindow: false, sqlDialect: 'bigquery' } as const;
const template = (label: string) => EXPLORER_TEMPLATES.find((t) => t.label === label)!.sql;
const TOP_PATHS = template('Top Paths');
const ERRORS_BY_USER = template('Error Count by User');

// The query string as a string, a number (the same digits: another JSON value), absent, and null;
// a few paths: a field whose type varies, and values counted together.
const SEARCHES: unknown[] = ['?select=*', 7, undefined, null, '7', { a: 1 }];
const PATHS = ['/rest/v1/todos', '/auth/v1/user', '/rest/v1/rpc/hello', '/storage/v1/object'];

/** 97 events of 'p' a day (one every 14 min 50 s from 00:07) and 5 of 'q'. */
function edgeDay(day: string): Array<Record<string, unknown>> {
  const event = (project: string, timestamp: string, i: number) => {
    // Values that hold for a few events in a row: a pair's groups fewer than half the events (else none are kept).
    const e = edgeEvent({ project, timestamp, path: PATHS[Math.floor(i / 13) % PATHS.length], extra: { response: { status_code: i % 7 === 0 ? 500 : 200, origin_time: i } } });
    const search = SEARCHES[Math.floor(i / 7) % SEARCHES.length];
    const metadata = e.metadata as { request: Record<string, unknown> };
    if (search !== undefined) metadata.request.search = search;
    return e;
  };
  return [
    ...Array.from({ length: 97 }, (_, i) => event('p', new Date(Date.parse(`${day}T00:07:00Z`) + i * 890_000).toISOString(), i)),
    ...Array.from({ length: 5 }, (_, i) => event('q', `${day}T0${i + 2}:30:00Z`, i)),
  ];
}

/** A Postgres log line of Vector's shape, its user and severity varying (a user as a number too). */
function postgresDay(day: string): Array<Record<string, unknown>> {
  const severities = ['LOG', 'ERROR', 'FATAL', 'PANIC', 'WARNING', 'ERROR'];
  const users: unknown[] = ['postgres', 'authenticator', 'supabase_admin', 42, null, 'postgres'];
  return Array.from({ length: 120 }, (_, i) => {
    const parsed: Record<string, unknown> = { error_severity: severities[Math.floor(i / 5) % severities.length], application_name: 'psql' };
    if (Math.floor(i / 11) % 5 !== 3) parsed.user_name = users[Math.floor(i / 9) % users.length];
    return {
      id: `pg-${day}-${i}`,
      timestamp: new Date(Date.parse(`${day}T00:03:00Z`) + i * 719_000).toISOString(),
      event_message: `line ${i}`,
      project: i % 10 === 0 ? 'q' : 'p',
      metadata: { host: 'db', parsed },
    };
  });
}

type Params = { project: string; iso_timestamp_start?: string; iso_timestamp_end?: string };

let reads: string[][] = [];
async function ask(ep: Endpoints, sql: string, params: Params = { project: 'p' }): Promise<Array<Record<string, unknown>>> {
  const asked = await withParquetReads(() => ep.query('logs.all', params, { sql }));
  reads = asked.reads;
  return asked.result.result as Array<Record<string, unknown>>;
}
/** Whether the statement's read took a day's data file's rows (the last set made ready; the first is the whole read's). */
const readsDataOf = (day: string) => (reads.at(-1) ?? []).some((path) => path.includes(`/date=${day}/`) && !path.includes('/_heads/'));
/** Rows in one order: a top-N's ties may come in any. */
const sorted = (rows: Array<Record<string, unknown>>) => rows.map((r) => JSON.stringify(r)).sort();

// docs/definitions.md, "Typed fields": a count grouped by a pair of declared typed fields the
// source keeps together in its hour counts (`typedPairs`: the Explorer's Top Paths and Error Count
// by User) reads its window's whole hours of compacted files from them, the rest from the rows;
// its answers are those of the events read whole.
describe('a count grouped by a declared pair, from the hour counts', () => {
  const tmp = tempDir('le-group-hour-counts-');
  let compacted: Endpoints;
  let whole: Endpoints;

  beforeAll(async () => {
    writeLines(tmp.path('ndjson', 'edge.ndjson'), DAYS.flatMap(edgeDay));
    writeLines(tmp.path('ndjson', 'postgres.ndjson'), DAYS.flatMap(postgresDay));
    await compactLogs({ source: 'edgeLogs', sourceDefinitions: SUPABASE_SOURCES, inputs: tmp.path('ndjson', 'edge.ndjson'), outDir: tmp.path('edge') });
    await compactLogs({ source: 'postgresLogs', sourceDefinitions: SUPABASE_SOURCES, inputs: tmp.path('ndjson', 'postgres.ndjson'), outDir: tmp.path('postgres') });
    compacted = (await endpointsAt({ edgeLogs: tmp.path('edge'), postgresLogs: tmp.path('postgres') }, NOW, OPTIONS)).ep;
    whole = (await endpointsAt({ edgeLogs: tmp.path('ndjson', 'edge.ndjson'), postgresLogs: tmp.path('ndjson', 'postgres.ndjson') }, NOW, OPTIONS)).ep;
  });
  afterAll(async () => {
    await compacted.close();
    await whole.close();
    tmp.cleanup();
  });

  it("answers Studio's Top Paths and Error Count by User as the events read whole do, the middle day from the hour counts alone", async () => {
    for (const sql of [TOP_PATHS, ERRORS_BY_USER]) {
      for (const project of ['p', 'q']) {
        const rows = await ask(compacted, sql, { project });
        expect(readsDataOf('2026-11-20')).toBe(false);
        expect(rows.length).toBeGreaterThan(project === 'p' ? 1 : 0);
        expect(sorted(rows)).toEqual(sorted(await ask(whole, sql, { project })));
      }
    }
    // The types kept apart: the query string 7 and "7" are two groups, as read whole.
    const rows = await ask(compacted, TOP_PATHS);
    expect(rows.filter((r) => r.params === 7 || r.params === '7').map((r) => typeof r.params)).toEqual(expect.arrayContaining(['number', 'string']));
  });

  it('answers the same for bounds mid-hour and mid-day and a window inside one day, reading the rows of partial hours', async () => {
    const windows: Array<{ params: Omit<Params, 'project'>; middle: boolean }> = [
      { params: { iso_timestamp_start: '2026-11-19T09:31:17.250Z', iso_timestamp_end: '2026-11-21T16:12:01.500Z' }, middle: false },
      { params: { iso_timestamp_start: '2026-11-20T03:15:00.000Z', iso_timestamp_end: '2026-11-20T21:45:00.000Z' }, middle: true },
      { params: { iso_timestamp_start: '2026-11-19T23:59:59.999999Z', iso_timestamp_end: '2026-11-21T00:00:00.000Z' }, middle: false },
      { params: { iso_timestamp_start: '2026-11-20T00:00:00.000Z' }, middle: true },
      { params: { iso_timestamp_end: '2026-11-20T23:59:59.999999Z' }, middle: true },
    ];
    for (const sql of [TOP_PATHS, ERRORS_BY_USER]) {
      for (const { params, middle } of windows) {
        const rows = await ask(compacted, sql, { project: 'p', ...params });
        expect(readsDataOf('2026-11-20')).toBe(middle);
        expect(sorted(rows)).toEqual(sorted(await ask(whole, sql, { project: 'p', ...params })));
      }
    }
  });

  it('reads the rows for a filter on another field, a pair not declared, a field read in part, or another count', async () => {
    for (const sql of [
      // A filter on the method: not one of the pair's fields.
      "select r.path as path, r.search as params, count(timestamp) as c from edge_logs cross join unnest(metadata) as m cross join unnest(m.request) as r where r.method = 'GET' group by path, params order by c desc limit 100",
      // The path and the method: no declared pair.
      'select r.path as path, r.method as method, count(timestamp) as c from edge_logs cross join unnest(metadata) as m cross join unnest(m.request) as r group by path, method order by c desc limit 100',
      // A bound on the timestamp of the caller's own.
      "select r.path as path, r.search as params, count(timestamp) as c from edge_logs cross join unnest(metadata) as m cross join unnest(m.request) as r where timestamp > '2026-11-19T12:00:00.000Z' group by path, params order by c desc limit 100",
      // A count of another column.
      'select r.path as path, r.search as params, count(id) as c from edge_logs cross join unnest(metadata) as m cross join unnest(m.request) as r group by path, params order by c desc limit 100',
    ]) {
      const rows = await ask(compacted, sql);
      expect(readsDataOf('2026-11-20')).toBe(true);
      expect(sorted(rows)).toEqual(sorted(await ask(whole, sql)));
    }
  });

  it("reads no counts when none of the window's whole hours has ended by the request's clock (Studio's last hour)", async () => {
    const at = (now: string) => endpointsAt({ edgeLogs: tmp.path('edge'), postgresLogs: tmp.path('postgres') }, now, OPTIONS);
    // The last hour at 12:30 (no upper bound): the hours from 12:00 on hold nothing yet; at 13:30, 12:00 - 13:00 has ended.
    for (const [now, start, counts] of [
      ['2026-11-21T12:30:00Z', '2026-11-21T11:30:00.000Z', false],
      ['2026-11-21T13:30:00Z', '2026-11-21T11:30:00.000Z', true],
    ] as const) {
      const { ep } = await at(now);
      try {
        for (const sql of [TOP_PATHS, ERRORS_BY_USER]) {
          const rows = await ask(ep, sql, { project: 'p', iso_timestamp_start: start });
          // A second set of files made ready: the one the counts' text reads beside them.
          expect(reads.length > 1).toBe(counts);
          expect(sorted(rows)).toEqual(sorted(await ask(whole, sql, { project: 'p', iso_timestamp_start: start })));
        }
      } finally {
        await ep.close();
      }
    }
  });

  it("counts by one declared field from that field's hour counts, a count(*) and a COUNTIF of the pair's fields", async () => {
    for (const sql of [
      'select r.search as params, count(*) as c from edge_logs cross join unnest(metadata) as m cross join unnest(m.request) as r group by params order by c desc limit 100',
      "select r.path as path, r.search as params, count(*) as n, countif(r.path like '/rest/%') as rest from edge_logs cross join unnest(metadata) as m cross join unnest(m.request) as r where r.search is not null group by path, params order by n desc limit 100",
    ]) {
      const rows = await ask(compacted, sql);
      expect(readsDataOf('2026-11-20')).toBe(false);
      expect(sorted(rows)).toEqual(sorted(await ask(whole, sql)));
    }
  });
});

// Files with and without the pairs' counts (written before the source declared the pair), a day
// with arrays in its metadata, a day whose query strings vary per event (too many pairs: none
// kept), and managed storage's memory tables: each read as it can be, the answers those of the
// events read whole.
describe("the pairs' counts of some inputs only", () => {
  const tmp = tempDir('le-group-hour-counts-mixed-');

  it("reads the rows of a file without the pairs' counts or with them of another definition, then its counts once backfilled", async () => {
    writeLines(tmp.path('ndjson', 'edge.ndjson'), DAYS.flatMap(edgeDay));
    const root = tmp.path('mixed');
    await compactLogs({ source: 'edgeLogs', sourceDefinitions: SUPABASE_SOURCES, inputs: tmp.path('ndjson', 'edge.ndjson'), outDir: root });
    // The pairs' counts of another definition (11-19), or none, as a build before the pair wrote them (11-20).
    const state = readDatasetStateStable(root);
    const add = [...state.files.values()].map((f): DataFile => {
      const rollups = Object.fromEntries(Object.entries(f.rollups!).filter(([name]) => name !== PAIRS));
      return { ...f, rollups: f.day === '2026-11-19' ? { ...rollups, [PAIRS]: { ...f.rollups![PAIRS]!, definition: '0000000000000000' } } : f.day === '2026-11-20' ? rollups : f.rollups! };
    });
    expect(await appendCommit(state, { source: 'edgeLogs', add, remove: [], inputs: [] })).toBe(true);
    const ep = (await endpointsAt({ edgeLogs: root }, NOW, OPTIONS)).ep;
    const whole = (await endpointsAt({ edgeLogs: tmp.path('ndjson', 'edge.ndjson') }, NOW, OPTIONS)).ep;
    try {
      const rows = await ask(ep, TOP_PATHS);
      expect([readsDataOf('2026-11-19'), readsDataOf('2026-11-20'), readsDataOf('2026-11-21')]).toEqual([true, true, false]);
      expect(sorted(rows)).toEqual(sorted(await ask(whole, TOP_PATHS)));
      expect(await backfillRollups(readDatasetStateStable(root), edgeLogs)).toHaveLength(2);
      expect(sorted(await ask(ep, TOP_PATHS))).toEqual(sorted(rows));
      expect([readsDataOf('2026-11-19'), readsDataOf('2026-11-20'), readsDataOf('2026-11-21')]).toEqual([false, false, false]);
    } finally {
      await ep.close();
      await whole.close();
    }
  });

  it('reads the rows of a day whose metadata holds arrays (an unnest may give a row more than one path)', async () => {
    const events = DAYS.flatMap(edgeDay).map((e, i) =>
      String(e.timestamp).startsWith('2026-11-20') && i % 4 === 0 ? { ...e, metadata: { ...(e.metadata as object), request: [{ path: '/a', search: '?x' }, { path: '/b' }] } } : e,
    );
    writeLines(tmp.path('ndjson', 'arrays.ndjson'), events);
    await compactLogs({ source: 'edgeLogs', sourceDefinitions: SUPABASE_SOURCES, inputs: tmp.path('ndjson', 'arrays.ndjson'), outDir: tmp.path('arrays') });
    const ep = (await endpointsAt({ edgeLogs: tmp.path('arrays') }, NOW, OPTIONS)).ep;
    const whole = (await endpointsAt({ edgeLogs: tmp.path('ndjson', 'arrays.ndjson') }, NOW, OPTIONS)).ep;
    try {
      const rows = await ask(ep, TOP_PATHS);
      expect([readsDataOf('2026-11-19'), readsDataOf('2026-11-20'), readsDataOf('2026-11-21')]).toEqual([false, true, false]);
      expect(rows.some((r) => r.path === '/b')).toBe(true);
      expect(sorted(rows)).toEqual(sorted(await ask(whole, TOP_PATHS)));
    } finally {
      await ep.close();
      await whole.close();
    }
  });

  it('leaves out the pair of a day whose query strings vary per event, and reads its rows', async () => {
    // More groups than half the day's events: the pair is left out (a pair of fields that vary
    // per request would make a rollup as large as the file).
    const events = DAYS.flatMap(edgeDay).map((e, i) => {
      if (!String(e.timestamp).startsWith('2026-11-20')) return e;
      const metadata = e.metadata as { request: Record<string, unknown> };
      return { ...e, metadata: { ...metadata, request: { ...metadata.request, search: `?id=eq.${i}` } } };
    });
    writeLines(tmp.path('ndjson', 'varied.ndjson'), events);
    await compactLogs({ source: 'edgeLogs', sourceDefinitions: SUPABASE_SOURCES, inputs: tmp.path('ndjson', 'varied.ndjson'), outDir: tmp.path('varied') });
    const leftOut = Object.fromEntries([...readDatasetStateStable(tmp.path('varied')).files.values()].map((f) => [f.day, f.rollups![PAIRS]!.leftOut]));
    expect(leftOut['2026-11-20']).toEqual(['request.path+request.search']);
    expect(leftOut['2026-11-19']).toBeUndefined();
    const ep = (await endpointsAt({ edgeLogs: tmp.path('varied') }, NOW, OPTIONS)).ep;
    const whole = (await endpointsAt({ edgeLogs: tmp.path('ndjson', 'varied.ndjson') }, NOW, OPTIONS)).ep;
    try {
      // Every group (a top 100 of groups counted once each may keep any of them).
      const all = TOP_PATHS.replace('limit 100', 'limit 10000');
      const answer = await ask(ep, all);
      expect([readsDataOf('2026-11-19'), readsDataOf('2026-11-20'), readsDataOf('2026-11-21')]).toEqual([false, true, false]);
      expect(sorted(answer)).toEqual(sorted(await ask(whole, all)));
    } finally {
      await ep.close();
      await whole.close();
    }
  });

  it("answers Top Paths and Error Count by User with today's events in the memory tables as the events read whole do", async () => {
    const dataDir = tmp.path('managed');
    mkdirSync(dataDir, { recursive: true });
    writeLines(tmp.path('ndjson', 'old-edge.ndjson'), DAYS.flatMap(edgeDay));
    writeLines(tmp.path('ndjson', 'old-pg.ndjson'), DAYS.flatMap(postgresDay));
    await compactLogs({ source: 'edgeLogs', sourceDefinitions: SUPABASE_SOURCES, inputs: tmp.path('ndjson', 'old-edge.ndjson'), outDir: datasetDir(dataDir, 'edgeLogs') });
    await compactLogs({ source: 'postgresLogs', sourceDefinitions: SUPABASE_SOURCES, inputs: tmp.path('ndjson', 'old-pg.ndjson'), outDir: datasetDir(dataDir, 'postgresLogs') });
    const todayEdge = edgeDay('2026-11-22').filter((e) => String(e.timestamp) < NOW);
    const todayPg = postgresDay('2026-11-22').filter((e) => String(e.timestamp) < NOW);
    writeLines(tmp.path('ndjson', 'all-edge.ndjson'), [...DAYS.flatMap(edgeDay), ...todayEdge]);
    writeLines(tmp.path('ndjson', 'all-pg.ndjson'), [...DAYS.flatMap(postgresDay), ...todayPg]);
    const options = { ...OPTIONS, now: () => new Date(NOW), cache: false } as const;
    const managed = await createEndpoints({ ...options, storage: { dataDir } });
    const whole = await createEndpoints({ ...options, sources: { edgeLogs: tmp.path('ndjson', 'all-edge.ndjson'), postgresLogs: tmp.path('ndjson', 'all-pg.ndjson') } });
    try {
      await managed.ingest('cloudflare.logs.prod', todayEdge);
      await managed.ingest('postgres.logs', todayPg);
      for (const sql of [TOP_PATHS, ERRORS_BY_USER]) {
        for (const project of ['p', 'q']) {
          const rows = await ask(managed, sql, { project });
          expect(readsDataOf('2026-11-20')).toBe(false);
          expect(sorted(rows)).toEqual(sorted(await ask(whole, sql, { project })));
        }
      }
    } finally {
      await managed.close();
      await whole.close();
      tmp.cleanup();
    }
  });
});

describe('typedPairs', () => {
  it('names two different typed fields of the source, each pair once', () => {
    const base = { name: 'x', relation: 'x_logs', columns: { project: 'text' }, projectColumn: 'project', typedFields: ['a', 'b', 'c'] } as const;
    expect(defineSource({ ...base, typedPairs: [['a', 'b']] }).typedPairs).toEqual([['a', 'b']]);
    for (const typedPairs of [
      [['a', 'd']],
      [['a', 'a']],
      [['a', 'b', 'c']],
      [
        ['a', 'b'],
        ['a', 'b'],
      ],
    ] as Array<Array<[string, string]>>) {
      expect(() => defineSource({ ...base, typedPairs })).toThrow(InvalidOptionError);
    }
    // A rollup of their own: the hour counts' definition is the one it was (files written before keep theirs).
    expect(Object.keys(defineSource({ ...base, typedPairs: [['a', 'b']] }).rollups)).toEqual(['x_logs_typed_hourly', 'x_logs_typed_pairs']);
    expect(defineSource({ ...base, typedPairs: [['a', 'b']] }).rollups.x_logs_typed_hourly).toEqual(defineSource(base).rollups.x_logs_typed_hourly);
  });
});
