import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
import { TYPED_COUNTS_LIMIT, typedHourlySql } from '../src/sources/typed-hourly';
import { typedColumnNames } from '../src/sources/typed-column-names';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compactLogs } from '../src/compaction/compact';
import { backfillRollups } from '../src/compaction/backfill-rollups';
import { edgeLogs } from '../src/sources/edge-logs';
import { appendCommit, readDatasetStateStable, type DataFile } from '../src/dataset/dataset-log';
import { datasetDir } from '../src/managed/managed-inputs';
import { createEndpoints, defineEndpoint, p, type Endpoints } from '../src/index';
import { edgeEvent, endpointsAt, tempDir, writeLines } from './support/log-files';
import { withParquetReads } from './support/parquet-reads';

const NOW = '2026-11-22T12:00:00Z';
const DAYS = ['2026-11-19', '2026-11-20', '2026-11-21'];
const STATUSES = [200, 201, 304, 404, 429, 500, 503];
const HOURLY = 'edge_logs_typed_hourly';

/**
 * 97 events of 'p' a day (one every 14 min 50 s from 00:07, seven statuses, each held for six
 * events in a row: a file's counts per hour and status are fewer than half its events, else they
 * are left out) and 5 of 'q'.
 */
function dayEvents(day: string): Array<Record<string, unknown>> {
  return [
    ...Array.from({ length: 97 }, (_, i) =>
      edgeEvent({
        project: 'p',
        timestamp: new Date(Date.parse(`${day}T00:07:00Z`) + i * 890_000).toISOString(),
        extra: { response: { status_code: STATUSES[Math.floor(i / 6) % STATUSES.length], origin_time: i } },
        ...(i % 9 === 0 ? { path: '/auth/v1/user' } : {}),
      }),
    ),
    ...Array.from({ length: 5 }, (_, i) => edgeEvent({ project: 'q', timestamp: `${day}T0${i + 2}:30:00Z`, extra: { response: { status_code: 500, origin_time: 1 } } })),
  ];
}

/** Studio's chart (its template: test/support/supabase/studio-sql.ts) by `unit`, with `where`. */
const chart = (unit: string, where: string) =>
  `select timestamp_trunc(t.timestamp, ${unit}) as timestamp, count(case when not (response.status_code >= 500 or response.status_code >= 400 and response.status_code < 500) then 1 end) as ok_count, count(case when response.status_code >= 500 then 1 end) as error_count, count(case when response.status_code >= 400 and response.status_code < 500 then 1 end) as warning_count from edge_logs t cross join unnest(metadata) as m cross join unnest(m.request) as request cross join unnest(m.response) as response ${where} group by timestamp order by timestamp asc`;
const STUDIO = chart('hour', "where t.timestamp > '2026-11-19T12:00:00.000Z'");

type Params = { project: string; iso_timestamp_start?: string; iso_timestamp_end?: string };

// The Parquet files of each read the engine made ready for DuckDB while a request ran.
let reads: string[][] = [];
async function ask(ep: Endpoints, sql: string, params: Params = { project: 'p' }): Promise<Array<Record<string, unknown>>> {
  const asked = await withParquetReads(() => ep.query('logs.all', params, { sql }));
  reads = asked.reads;
  return asked.result.result as Array<Record<string, unknown>>;
}
/** Whether the statement's read took a day's data file's rows (the last set made ready; the first is the whole read's). */
const readsDataOf = (day: string) => (reads.at(-1) ?? []).some((path) => path.includes(`/date=${day}/`) && !path.includes('/_heads/'));

// docs/definitions.md, "Typed fields": a chart counted per value of one declared typed field
// (Studio's: counts by status per hour) over compacted files reads its window's whole hours from
// the stored hour counts (src/sources/typed-hourly.ts) and the rest from the rows; its answers are
// those of the events read whole.
describe("a chart's first step from the hour counts", () => {
  const tmp = tempDir('le-hour-counts-');
  let compacted: Endpoints;
  let whole: Endpoints;

  beforeAll(async () => {
    writeLines(tmp.path('ndjson', 'all.ndjson'), DAYS.flatMap(dayEvents));
    await compactLogs({ source: 'edgeLogs', inputs: tmp.path('ndjson', 'all.ndjson'), outDir: tmp.path('dataset') });
    const open = async (sources: string) => (await endpointsAt({ edgeLogs: sources }, NOW, { sandboxable: ['logs.all'], tierWindow: false, sqlDialect: 'bigquery' })).ep;
    compacted = await open(tmp.path('dataset'));
    whole = await open(tmp.path('ndjson', 'all.ndjson'));
  });
  afterAll(async () => {
    await compacted.close();
    await whole.close();
    tmp.cleanup();
  });

  it('stores per compacted file its rows per project, hour, declared typed field and value', async () => {
    const state = readDatasetStateStable(tmp.path('dataset'));
    const files = [...state.files.values()];
    expect(files).toHaveLength(3);
    for (const file of files) expect(file.rollups?.[HOURLY]).toMatchObject({ rows: expect.any(Number), definition: expect.any(String) });
  });

  it("answers Studio's chart by hour as the events read whole do, the middle day from its hour counts alone", async () => {
    const rows = await ask(compacted, STUDIO);
    expect(readsDataOf('2026-11-20')).toBe(false);
    expect(readsDataOf('2026-11-19')).toBe(true);
    expect(rows).toEqual(await ask(whole, STUDIO));
    expect(rows.length).toBeGreaterThan(40);
  });

  it('answers the same for bounds mid-hour and mid-day, a window inside one day, by hour and by day, for each project', async () => {
    // `middle`: whether the middle day's rows are read (a day wholly inside the window's whole hours is not).
    const windows: Array<{ where: string; params: Omit<Params, 'project'>; middle: boolean }> = [
      { where: "where t.timestamp > '2026-11-19T12:00:00.000Z'", params: { iso_timestamp_start: '2026-11-19T09:31:17.250Z', iso_timestamp_end: '2026-11-21T16:12:01.500Z' }, middle: false },
      { where: "where t.timestamp >= '2026-11-19T06:07:00.000Z' and t.timestamp < '2026-11-21T06:07:00.000Z'", params: {}, middle: false },
      { where: "where t.timestamp > '2026-11-20T03:15:00.000Z'", params: { iso_timestamp_end: '2026-11-20T21:45:00.000Z' }, middle: true },
      { where: "where '2026-11-20T00:00:00.000Z' <= t.timestamp", params: { iso_timestamp_end: '2026-11-21T00:00:00.000Z' }, middle: false },
      // An end just before an hour: that hour is read from the rows (the engine takes the template's
      // upper bound as keeping only what is before it, whether it keeps the instant or not).
      { where: "where '2026-11-20T00:00:00.000Z' <= t.timestamp", params: { iso_timestamp_end: '2026-11-20T23:59:59.999999Z' }, middle: true },
      { where: "where t.timestamp < '2026-11-21T00:00:00.000Z' and t.timestamp >= '2026-11-20T00:00:00.000Z'", params: {}, middle: false },
      // The start exactly on the day's first instant: that hour is not whole (the bound keeps what is after it).
      { where: "where t.timestamp > '2026-11-19T12:00:00.000Z'", params: { iso_timestamp_start: '2026-11-20T00:00:00.000Z' }, middle: true },
      { where: '', params: {}, middle: false },
    ];
    for (const { where, params, middle } of windows) {
      for (const unit of ['hour', 'day']) {
        for (const project of ['p', 'q']) {
          const sql = chart(unit, where);
          const rows = await ask(compacted, sql, { project, ...params });
          expect(readsDataOf('2026-11-20')).toBe(middle);
          expect(rows).toEqual(await ask(whole, sql, { project, ...params }));
        }
      }
    }
  });

  it('reads the rows for a filter on another field, a bucket the hour does not refine, or two fields counted', async () => {
    for (const sql of [
      chart('hour', "where t.timestamp > '2026-11-19T12:00:00.000Z' and request.path like '/auth/%'"),
      chart('minute', "where t.timestamp > '2026-11-19T12:00:00.000Z'"),
      `select timestamp_trunc(t.timestamp, hour) as timestamp, count(case when response.status_code >= 500 and request.method = 'GET' then 1 end) as n from edge_logs t cross join unnest(metadata) as m cross join unnest(m.request) as request cross join unnest(m.response) as response where t.timestamp > '2026-11-19T12:00:00.000Z' group by timestamp order by timestamp asc`,
    ]) {
      const rows = await ask(compacted, sql);
      expect(readsDataOf('2026-11-20')).toBe(true);
      expect(rows).toEqual(await ask(whole, sql));
    }
  });
});

// Files with and without the hour counts, and with counts of another definition, side by side: each
// read as it can be; a damaged one is dropped and its file read.
describe('the hour counts of some files only', () => {
  const tmp = tempDir('le-hour-counts-mixed-');
  let whole: Endpoints;

  beforeAll(async () => {
    writeLines(tmp.path('ndjson', 'all.ndjson'), DAYS.flatMap(dayEvents));
    whole = (await endpointsAt({ edgeLogs: tmp.path('ndjson', 'all.ndjson') }, NOW, { sandboxable: ['logs.all'], tierWindow: false, sqlDialect: 'bigquery' })).ep;
  });
  afterAll(async () => {
    await whole.close();
    tmp.cleanup();
  });

  /** A dataset of the three days, each file's hour counts as `change` leaves them (re-added in one commit, as a backfill does). */
  async function dataset(name: string, change: (day: string, rollup: NonNullable<DataFile['rollups']>[string]) => NonNullable<DataFile['rollups']>[string] | null): Promise<Endpoints> {
    const root = tmp.path(name);
    await compactLogs({ source: 'edgeLogs', inputs: tmp.path('ndjson', 'all.ndjson'), outDir: root });
    const state = readDatasetStateStable(root);
    const add = [...state.files.values()].map((f): DataFile => {
      const changed = change(f.day!, f.rollups![HOURLY]!);
      const rollups = Object.fromEntries(Object.entries(f.rollups!).filter(([name]) => name !== HOURLY));
      return { ...f, rollups: changed === null ? rollups : { ...rollups, [HOURLY]: changed } };
    });
    expect(await appendCommit(state, { source: 'edgeLogs', add, remove: [], inputs: [] })).toBe(true);
    return (await endpointsAt({ edgeLogs: root }, NOW, { sandboxable: ['logs.all'], tierWindow: false, sqlDialect: 'bigquery' })).ep;
  }

  it('reads the rows of a file without them or with them of another definition, the hour counts of the others', async () => {
    // 11-19 without, 11-20 of another definition, 11-21 as written.
    const ep = await dataset('mixed', (day, r) => (day === '2026-11-19' ? null : day === '2026-11-20' ? { ...r, definition: '0000000000000000' } : r));
    try {
      const sql = chart('hour', "where t.timestamp > '2026-11-18T12:00:00.000Z'");
      const rows = await ask(ep, sql, { project: 'p', iso_timestamp_end: '2026-11-22T00:00:00.000Z' });
      expect([readsDataOf('2026-11-19'), readsDataOf('2026-11-20'), readsDataOf('2026-11-21')]).toEqual([true, true, false]);
      expect(rows).toEqual(await ask(whole, sql, { project: 'p', iso_timestamp_end: '2026-11-22T00:00:00.000Z' }));
      // The upgrade path (`compact`, `check`): the two files get them by the current definition, and are read from them.
      expect(await backfillRollups(readDatasetStateStable(tmp.path('mixed')), edgeLogs)).toHaveLength(2);
      expect(await ask(ep, sql, { project: 'p', iso_timestamp_end: '2026-11-22T00:00:00.000Z' })).toEqual(rows);
      expect([readsDataOf('2026-11-19'), readsDataOf('2026-11-20'), readsDataOf('2026-11-21')]).toEqual([false, false, false]);
    } finally {
      await ep.close();
    }
  });

  it("leaves out of a file's counts a field whose values vary per event, and reads that file's rows for it alone", async () => {
    // 11-20's query strings one per event: more groups than half the day's events. Left out of
    // that day's counts alone (one field's values would make them as large as the file, and their
    // grouping larger than compaction's memory), the status still counted.
    const events = DAYS.flatMap(dayEvents).map((e, i) => {
      if (!String(e.timestamp).startsWith('2026-11-20')) return e;
      const metadata = e.metadata as { request: Record<string, unknown> };
      return { ...e, metadata: { ...metadata, request: { ...metadata.request, search: `?id=eq.${i % 40}` } } };
    });
    writeLines(tmp.path('ndjson', 'varied.ndjson'), events);
    await compactLogs({ source: 'edgeLogs', inputs: tmp.path('ndjson', 'varied.ndjson'), outDir: tmp.path('varied') });
    const files = [...readDatasetStateStable(tmp.path('varied')).files.values()];
    const leftOut = Object.fromEntries(files.map((f) => [f.day, f.rollups![HOURLY]!.leftOut ?? []]));
    expect(leftOut['2026-11-20']).toContain('request.search');
    expect(leftOut['2026-11-19']).not.toContain('request.search');
    for (const day of DAYS) expect(leftOut[day]).not.toContain('response.status_code');
    const open = async (source: string) => (await endpointsAt({ edgeLogs: source }, NOW, { sandboxable: ['logs.all'], tierWindow: false, sqlDialect: 'bigquery' })).ep;
    const [ep, varied] = [await open(tmp.path('varied')), await open(tmp.path('ndjson', 'varied.ndjson'))];
    try {
      const window = "where t.timestamp > '2026-11-18T12:00:00.000Z'";
      const bySearch = `select timestamp_trunc(t.timestamp, hour) as timestamp, count(case when request.search = '?id=eq.7' then 1 end) as n from edge_logs t cross join unnest(metadata) as m cross join unnest(m.request) as request ${window} group by timestamp order by timestamp asc`;
      for (const [sql, reads] of [
        [chart('hour', window), [false, false, false]],
        [bySearch, [false, true, false]],
      ] as const) {
        const rows = await ask(ep, sql, { project: 'p', iso_timestamp_end: '2026-11-22T00:00:00.000Z' });
        expect([readsDataOf('2026-11-19'), readsDataOf('2026-11-20'), readsDataOf('2026-11-21')]).toEqual(reads);
        expect(rows).toEqual(await ask(varied, sql, { project: 'p', iso_timestamp_end: '2026-11-22T00:00:00.000Z' }));
      }
    } finally {
      await ep.close();
      await varied.close();
    }
  });

  it('reads the file of a damaged stored rollup instead, with the same answer', async () => {
    const ep = await dataset('damaged', (_day, r) => r);
    try {
      const state = readDatasetStateStable(tmp.path('damaged'));
      const middle = [...state.files.values()].find((f) => f.day === '2026-11-20')!;
      const path = join(tmp.path('damaged'), middle.rollups![HOURLY]!.path);
      const bytes = readFileSync(path);
      bytes.writeUInt8(bytes.readUInt8(bytes.length >> 1) ^ 0xff, bytes.length >> 1);
      writeFileSync(path, bytes);
      const sql = chart('hour', "where t.timestamp > '2026-11-18T12:00:00.000Z'");
      const rows = await ask(ep, sql);
      expect(readsDataOf('2026-11-20')).toBe(true);
      expect(readsDataOf('2026-11-21')).toBe(false);
      expect(rows).toEqual(await ask(whole, sql));
    } finally {
      await ep.close();
    }
  });
});

// Managed storage: the compacted days from their hour counts, the events still in the memory
// tables (today's) from their rows.
describe('the hour counts beside the memory tables', () => {
  const tmp = tempDir('le-hour-counts-managed-');

  it("answers Studio's chart as the events read whole do", async () => {
    const dataDir = tmp.path('managed');
    mkdirSync(dataDir, { recursive: true });
    writeLines(tmp.path('ndjson', 'old.ndjson'), DAYS.flatMap(dayEvents));
    await compactLogs({ source: 'edgeLogs', inputs: tmp.path('ndjson', 'old.ndjson'), outDir: datasetDir(dataDir, 'edgeLogs') });
    const today = dayEvents('2026-11-22').filter((e) => String(e.timestamp) < NOW);
    writeLines(tmp.path('ndjson', 'all.ndjson'), [...DAYS.flatMap(dayEvents), ...today]);
    const options = { now: () => new Date(NOW), cache: false, sandboxable: ['logs.all'], tierWindow: false, sqlDialect: 'bigquery' } as const;
    const managed = await createEndpoints({ ...options, storage: { dataDir } });
    const whole = await createEndpoints({ ...options, sources: { edgeLogs: tmp.path('ndjson', 'all.ndjson') } });
    try {
      await managed.ingest('cloudflare.logs.prod', today);
      for (const project of ['p', 'q']) {
        const rows = await ask(managed, STUDIO, { project });
        expect(readsDataOf('2026-11-20')).toBe(false);
        expect(rows).toEqual(await ask(whole, STUDIO, { project }));
        expect(rows.some((r) => String(r.timestamp).startsWith('2026-11-22'))).toBe(true);
      }
    } finally {
      await managed.close();
      await whole.close();
      tmp.cleanup();
    }
  });
});

// The typed counts may leave a field out of a file's counts: they are not every event's counts,
// so an endpoint's SQL never reads them by name (only the engine does, for the fields they hold).
describe("the typed counts are the engine's own", () => {
  it("refuses an endpoint whose SQL reads them by name, as any table it does not have, and reads a declared rollup's", async () => {
    for (const relation of [HOURLY, 'edge_logs_typed_pairs']) {
      const endpoint = defineEndpoint({
        name: 'x.counts',
        params: { project: p.text() },
        sql: { duckdb: `SELECT count(*) AS n FROM ${relation} WHERE project = $project` },
        columns: { n: 'integer' },
      });
      await expect(createEndpoints({ sources: {}, endpoints: [endpoint], cache: false })).rejects.toThrow(
        new RegExp(`cannot work: its duckdb SQL does not prepare: Table with name ${relation} does not exist`),
      );
    }
    const declared = defineEndpoint({
      name: 'x.hourly',
      params: { project: p.text() },
      sql: { duckdb: 'SELECT count(*) AS n FROM function_edge_logs_hourly WHERE project_ref = $project' },
      columns: { n: 'integer' },
    });
    const ep = await createEndpoints({ sources: {}, endpoints: [declared], cache: false });
    try {
      expect((await ep.query('x.hourly', { project: 'p' })).result).toEqual([{ n: 0 }]);
    } finally {
      await ep.close();
    }
  });
});

// The bound on a field's groups in a file's counts (their grouping's memory), apart from the half of
// its events: 150,000 events of 70,000 values are within the half, over 65,536 groups.
describe("the hour counts' bound on a field's groups", () => {
  it(`leaves out a field of more than ${TYPED_COUNTS_LIMIT} groups, and counts one of fewer`, async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    try {
      const { text, json } = typedColumnNames('request.search');
      const relation = (values: number) =>
        `SELECT 'p' AS project, TIMESTAMP '2026-11-20 10:00:00' AS timestamp, (i % ${values})::VARCHAR AS "${text}", to_json(i % ${values}) AS "${json}" FROM range(150000) t(i)`;
      const leftOut = async (values: number) =>
        (
          await connection.runAndReadAll(
            `WITH edge_logs AS NOT MATERIALIZED (${relation(values)}) SELECT DISTINCT field FROM (${typedHourlySql('edge_logs', 'project', ['request.search'])}) WHERE timestamp IS NULL`,
          )
        )
          .getRows()
          .map((r) => r[0]);
      expect(await leftOut(70_000)).toEqual(['request.search']);
      expect(await leftOut(60_000)).toEqual([]);
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });
});
