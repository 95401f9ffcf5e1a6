import { afterAll, beforeAll, describe, expect, it, vi, type MockInstance } from 'vitest';
import { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { compactLogs } from '../src/compaction/compact';
import { appendCommit, checkpointIfDue, ensureDataset, readDatasetStateStable } from '../src/dataset/dataset-log';
import { discoverTypedPaths, DISCOVERY_MIN_EVENTS } from '../src/duckdb/discover-paths';
import { bigQuerySchemaOf } from '../src/bigquery/schema-of-sources';
import { jsonKeysText } from '../src/bigquery/ir';
import { createEndpoints, logsAll, type Endpoints } from '../src/index';
import { createDuckDBEngine } from '../src/engine/duckdb/duckdb-engine';
import { normalizeParams } from '../src/definitions/params';
import { planQuery, statementOf } from '../src/definitions/plan-query';
import { CallerSqlCheck } from '../src/query/check-caller-sql';
import { compileCall } from '../src/query/compile-query';
import { neutralSqlParser } from '../src/query/sql-parser';
import { LiveSourceSet } from '../src/sources/live-source-set';
import type { SourceSet } from '../src/sources/source-set';
import { edgeLogs } from '../src/sources/edge-logs';
import type { SourceDescriptor } from '../src/sources/source-descriptor';
import { BUILT_IN_SOURCE_SET } from '../src/sources/built-ins';
import { DISCOVERED_PATHS_LIMIT, withTypedPaths } from '../src/sources/typed-fields';
import { HANG_MS } from './support/hang-guard';
import { edgeEvent, tempDir, writeLines } from './support/log-files';

/**
 * Discovered typed fields (docs/durability.md, "Typed columns"): compaction keeps as typed columns
 * the scalar paths nearly every event of a run holds with one type, records them per file and in
 * the dataset's `typedPaths` (which only grows), and an instance reads them from its next open on;
 * the answers are the events' whichever files have the columns.
 */

const tmp = tempDir('le-discovered-paths-');
afterAll(() => tmp.cleanup());

/** The typed fields discovered in these events' metadata, beyond edgeLogs' declared ones. */
async function discovered(metadata: ReadonlyArray<Record<string, unknown> | null>, held: readonly string[] = [], source: SourceDescriptor = edgeLogs): Promise<string[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    await connection.run('CREATE TABLE events (id VARCHAR, metadata JSON)');
    const appender = await connection.createAppender('events');
    metadata.forEach((m, i) => {
      appender.appendVarchar(`e${String(i).padStart(6, '0')}`);
      if (m === null) appender.appendNull();
      else appender.appendVarchar(JSON.stringify(m));
      appender.endRow();
    });
    appender.closeSync();
    const widened = await discoverTypedPaths(connection, source, 'SELECT id, metadata FROM events', held);
    return widened.typedFields.slice(edgeLogs.typedFields.length);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

const times = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));

describe('discovering typed fields in the events of a run', () => {
  it('takes the scalar paths present in at least 90 % of the events with one type and few values, in path order', async () => {
    const n = 2000;
    const events = times(n, (i) => ({
      request: { path: '/p', method: 'GET' }, // declared: never discovered again
      zone: 'eu', // every event, a string
      user: { id: i, admin: i % 2 === 0, group: `g${i % 50}` }, // nested: one value per event (not), a boolean, 50 values (2.5 %)
      region: `r${i % 400}`, // 400 values (20 %): not
      ninety: i < 0.9 * n ? 'x' : undefined, // exactly 90 %
      fewer: i < 0.9 * n - 1 ? 'x' : undefined, // one event short
      varies: i % 2 ? 'text' : 7, // a type that varies
      sometimesNull: i % 50 === 0 ? null : 'x', // null is a type of its own
      ints: i === 3 ? 1.5 : i % 7, // one double among integers
      list: [{ a: 1 }], // inside an array: not a path
      obj: { deep: { deeper: { deepest: 'x' } } },
      'odd-key': 'x', // not a name
      empty: {},
    }));
    expect(await discovered(events)).toEqual(['ninety', 'obj.deep.deeper.deepest', 'user.admin', 'user.group', 'zone']);
  });

  it(`discovers nothing in a run of fewer than ${DISCOVERY_MIN_EVENTS} events, or in events without metadata`, async () => {
    expect(await discovered(times(DISCOVERY_MIN_EVENTS - 1, () => ({ zone: 'eu' })))).toEqual([]);
    expect(await discovered(times(DISCOVERY_MIN_EVENTS, () => ({ zone: 'eu' })))).toEqual(['zone']);
    expect(await discovered(times(DISCOVERY_MIN_EVENTS * 2, (i) => (i % 5 ? null : { zone: 'eu' })))).toEqual([]);
  });

  it(`keeps at most ${DISCOVERED_PATHS_LIMIT} paths beyond the declared ones, those held first`, async () => {
    const many = times(DISCOVERY_MIN_EVENTS, () => Object.fromEntries(times(40, (k) => [`k${String(k).padStart(2, '0')}`, k])));
    const first = await discovered(many);
    expect(first).toEqual(times(DISCOVERED_PATHS_LIMIT, (k) => `k${String(k).padStart(2, '0')}`));
    // Held paths stay, in their order, and count against the bound.
    expect(await discovered(many, ['zz', 'k39'])).toEqual(['zz', 'k39', ...times(DISCOVERED_PATHS_LIMIT - 2, (k) => `k${String(k).padStart(2, '0')}`)]);
    const full = times(DISCOVERED_PATHS_LIMIT, (k) => `held${k}`);
    expect(await discovered(many, full)).toEqual(full);
    // A source widened already (an instance's, at open) counts from what it declares.
    expect(await discovered(many, [], withTypedPaths(edgeLogs, full))).toEqual(full);
    expect(await discovered(many, ['k39'], withTypedPaths(edgeLogs, full.slice(0, 10)))).toEqual([...full.slice(0, 10), 'k39', ...times(5, (k) => `k0${k}`)]);
    // A source widened past the bound (a path declared since no longer counts) keeps the first ones.
    expect(withTypedPaths(edgeLogs, [...full, 'more']).typedFields.slice(edgeLogs.typedFields.length)).toEqual(full);
  });
});

describe("a dataset's typed paths", () => {
  it('grow only: a file removed keeps its fields, and a checkpoint keeps them', async () => {
    const root = tmp.path('log');
    await ensureDataset(root);
    const file = { rows: 1, bytes: 1, day: '2026-11-21' };
    await appendCommit(readDatasetStateStable(root), { source: 'edgeLogs', add: [{ ...file, path: 'a.parquet', typedFields: ['request.path', 'zone'] }], remove: [], inputs: [] });
    await appendCommit(readDatasetStateStable(root), { source: 'edgeLogs', add: [{ ...file, path: 'b.parquet', typedFields: ['request.path', 'user.id'] }], remove: ['a.parquet'], inputs: [] });
    expect(readDatasetStateStable(root).typedPaths).toEqual(['request.path', 'zone', 'user.id']);
    for (let i = 0; i < 32; i++) await appendCommit(readDatasetStateStable(root), { source: 'edgeLogs', add: [], remove: i === 0 ? ['b.parquet'] : [], inputs: [] });
    await checkpointIfDue(readDatasetStateStable(root));
    const state = readDatasetStateStable(root);
    expect(state.files.size).toBe(0);
    expect(state.typedPaths).toEqual(['request.path', 'zone', 'user.id']);
  });
});

describe('compact with discovered paths', () => {
  const NOW = Date.parse('2026-11-21T12:00:00Z');
  const event = (i: number, extra: Record<string, unknown>) => edgeEvent({ timestamp: new Date(NOW - i * 1000).toISOString(), id: `d${String(i).padStart(6, '0')}`, extra });

  it('writes them as columns, records them per file and in typedPaths, and writes them again in a run that lacks them', async () => {
    const out = tmp.path('compact', 'out');
    writeLines(
      tmp.path('compact', 'a.ndjson'),
      times(1200, (i) => event(i, { zone: 'eu', tier: i % 3 ? 'free' : 7 })),
    );
    await compactLogs({ source: 'edgeLogs', inputs: tmp.path('compact', 'a.ndjson'), outDir: out });
    let state = readDatasetStateStable(out);
    const declared = [...edgeLogs.typedFields];
    // The gateway's events hold request.host and request.url in every event too; `tier` varies.
    expect(state.typedPaths).toEqual([...declared, 'request.host', 'request.url', 'zone']);
    expect([...state.files.values()].map((f) => f.typedFields)).toEqual([[...declared, 'request.host', 'request.url', 'zone']]);
    writeLines(
      tmp.path('compact', 'b.ndjson'),
      times(10, (i) => event(2000 + i, {})),
    );
    await compactLogs({ source: 'edgeLogs', inputs: tmp.path('compact', 'b.ndjson'), outDir: out });
    state = readDatasetStateStable(out);
    for (const f of state.files.values()) expect(f.typedFields).toEqual([...declared, 'request.host', 'request.url', 'zone']);
    // Without typed columns, none is discovered.
    const plain = tmp.path('compact', 'plain');
    await compactLogs({ source: 'edgeLogs', inputs: tmp.path('compact', 'a.ndjson'), outDir: plain, typedColumns: false });
    expect(readDatasetStateStable(plain).typedPaths).toEqual([]);
  });
});

describe('discovered paths read while an instance runs', () => {
  const NOW = new Date('2026-11-21T12:00:00Z');
  const SQL = 'select m.zone as zone, m.tier as tier, count(*) as n from edge_logs cross join unnest(metadata) as m group by zone, tier order by zone, tier';
  const WINDOW = { project: 'abc', iso_timestamp_start: '2026-11-21T10:00:00Z', iso_timestamp_end: '2026-11-21T12:00:00Z' };
  const answer = async (ep: Endpoints) => (await ep.query('logs.all', WINDOW, { sql: SQL })).result;
  const event = (i: number, id: string, zone: string) => edgeEvent({ timestamp: new Date(NOW.getTime() - i * 1000).toISOString(), id, extra: { zone, tier: i % 3 ? 'free' : 7 } });
  const events = [
    // A run too small to discover anything: a file without a `zone` column.
    ...times(600, (i) => event(i, `old${i}`, i % 2 ? 'eu' : 'us')),
    // A run that discovers `zone` (not `tier`: its type varies): files with the column from then on.
    ...times(1500, (i) => event(600 + i, `new${i}`, i % 3 ? 'eu' : 'ap')),
    ...times(50, (i) => event(2100 + i, `late${i}`, 'ap')),
  ];
  const OLD = 600;
  const DISCOVERING = 2100;
  /** Rows in one order whatever the engine sorted mixed types by. */
  const sorted = (rows: ReadonlyArray<Record<string, unknown>>) => rows.map((r) => JSON.stringify([r.zone, r.tier, r.n])).sort();
  const expected = (upTo: number) => {
    const counts = new Map<string, { zone: string; tier: string | number; n: number }>();
    for (const e of events.slice(0, upTo)) {
      const { zone, tier } = e.metadata as { zone: string; tier: string | number };
      const key = JSON.stringify([zone, tier]);
      counts.set(key, { zone, tier, n: (counts.get(key)?.n ?? 0) + 1 });
    }
    return sorted([...counts.values()]);
  };

  // What the engine runs is observed where DuckDB prepares it: each text spells out the relations it reads.
  let prepare: MockInstance<DuckDBConnection['prepare']>;
  beforeAll(() => {
    prepare = vi.spyOn(DuckDBConnection.prototype, 'prepare');
  });
  afterAll(() => prepare.mockRestore());
  /** The texts prepared since `from` that read `zone` (the caller's SELECTs with their relations). */
  const zoneTexts = (from: number) =>
    prepare.mock.calls
      .slice(from)
      .map(([sql]) => sql)
      .filter((sql) => sql.includes('"zone"'));
  /** How a text reads `zone`: the caller's SELECT from its column, a Parquet file's as stored, another's computed from metadata. */
  const readsOfZone = (sql: string) => ({
    column: sql.includes('"edge_logs"."json:metadata.zone"'),
    json: sql.includes(`json_extract("edge_logs"."metadata", '$."zone"')`),
    // Its arrays flag stored too, or the constant false where the files' footers say it is never true
    // (the relation holds the columns the caller's SELECT names: its JSON form here, not its text).
    stored: /"json:metadata\.zone"(?:, "[^"]+")*, (false AS )?"arrays:metadata" FROM read_parquet\(/.test(sql),
    computed: /"__le_texts"\[\d+\] AS "text:metadata\.zone"/.test(sql),
  });

  it('reads a path discovered while it runs as a column from the next request on, with the same answers, without a restart', async () => {
    const dataDir = tmp.path('running');
    // Every group closes its segment: each ingest below is one compaction run.
    const ep = await createEndpoints({ storage: { dataDir, maxSegmentBytes: 1 }, now: () => NOW, cache: false, sandboxable: ['logs.all'], sqlDialect: 'bigquery' });
    const compacted = async (events: number) => {
      await expect.poll(() => ep.stats().storage!.settled, { timeout: HANG_MS }).toBe(true);
      await expect.poll(() => readDatasetStateStable(`${dataDir}/edgeLogs/parquet`).files.size, { timeout: HANG_MS }).toBe(events);
    };
    const edge = () => ep.sources.find((s) => s.name === 'edgeLogs')!;
    try {
      await ep.ingest('cloudflare.logs.prod', events.slice(0, OLD));
      await compacted(1);
      let from = prepare.mock.calls.length;
      expect(sorted(await answer(ep))).toEqual(expected(OLD));
      // Nothing discovered: the caller's SELECT computes `zone` from metadata.
      expect(edge().typedFields).not.toContain('zone');
      expect(zoneTexts(from).map(readsOfZone)).toEqual([{ column: false, json: true, stored: false, computed: false }]);

      await ep.ingest('cloudflare.logs.prod', events.slice(OLD, DISCOVERING));
      await compacted(2);
      expect(readDatasetStateStable(`${dataDir}/edgeLogs/parquet`).typedPaths).toContain('zone');
      // The run that discovered it told the instance before its segment left the log: the
      // instance reads it as a column from the next request on.
      expect(edge().typedFields).toContain('zone');
      expect(edge().typedFields).not.toContain('tier');
      from = prepare.mock.calls.length;
      expect(sorted(await answer(ep))).toEqual(expected(DISCOVERING));
      // Its statement reads the column: stored in the new file, computed over the old one. A
      // compaction committing while it runs (the compactor may still be at work on a loaded
      // machine) runs it again over the files after it, reading the column too.
      const reads = zoneTexts(from).map(readsOfZone);
      expect(reads[0]).toEqual({ column: true, json: false, stored: true, computed: true });
      expect(reads.filter((r) => !r.column || r.json)).toEqual([]);

      // Later events, held in memory before they are compacted: the column is computed over them too.
      await ep.ingest('cloudflare.logs.prod', events.slice(DISCOVERING));
      expect(sorted(await answer(ep))).toEqual(expected(events.length));
    } finally {
      await ep.close();
    }
  });

  /** A dataset of the first `upTo` events compacted in two runs: the first without `zone`, the second discovering it. */
  const dataset = async (name: string) => {
    const out = tmp.path(name, 'out');
    writeLines(tmp.path(name, 'old.ndjson'), events.slice(0, OLD));
    await compactLogs({ source: 'edgeLogs', inputs: tmp.path(name, 'old.ndjson'), outDir: out });
    writeLines(tmp.path(name, 'new.ndjson'), events.slice(OLD, DISCOVERING));
    await compactLogs({ source: 'edgeLogs', inputs: tmp.path(name, 'new.ndjson'), outDir: out });
    expect([...readDatasetStateStable(out).files.values()].map((f) => f.typedFields?.includes('zone'))).toEqual([false, true]);
    return out;
  };

  it('runs a request begun before the switch over the set it began with, beside one begun after, with the same answers', async () => {
    const out = await dataset('switch');
    const live = new LiveSourceSet(BUILT_IN_SOURCE_SET);
    const engine = await createDuckDBEngine({ sourceSet: BUILT_IN_SOURCE_SET, sources: { edgeLogs: out }, onTypedPaths: (source, paths) => live.widen(source, paths) });
    try {
      // Told at start what the dataset holds: one growth.
      expect(live.version).toBe(1);
      expect(live.current.get('edgeLogs').typedFields).toContain('zone');
      const check = new CallerSqlCheck(engine.target, neutralSqlParser, 'bigquery');
      const params = normalizeParams(logsAll, WINDOW);
      const run = async (sources: SourceSet) => {
        const caller = await check.check(statementOf(logsAll), SQL, logsAll.maxRows, sources);
        const { rows } = await engine.run(compileCall(logsAll, planQuery(logsAll, params, NOW), engine.target, sources, caller));
        // The engine's values: JSON as its text, counts as big integers.
        return rows.map((r) => ({ zone: JSON.parse(String(r.zone)), tier: JSON.parse(String(r.tier)), n: Number(r.n) }));
      };
      const from = prepare.mock.calls.length;
      // The one begun before the discovery (translated for the set as declared) and one begun after, at once.
      const [before, after] = await Promise.all([run(BUILT_IN_SOURCE_SET), run(live.current)]);
      expect(sorted(before)).toEqual(expected(DISCOVERING));
      expect(sorted(after)).toEqual(expected(DISCOVERING));
      const texts = zoneTexts(from).map(readsOfZone);
      expect(texts).toHaveLength(2);
      expect(texts).toContainEqual({ column: false, json: true, stored: false, computed: false });
      expect(texts).toContainEqual({ column: true, json: false, stored: true, computed: true });
      // A read tells what it found; the set grows no more for what it has.
      await run(live.current);
      expect(live.version).toBe(1);
    } finally {
      await engine.close();
    }
  });

  it('reads the discovered columns of a `compact` output given as sources, and one compacted again while the instance runs', async () => {
    const out = await dataset('globs');
    const ep = await createEndpoints({ sources: { edgeLogs: out }, now: () => NOW, cache: false, sandboxable: ['logs.all'], sqlDialect: 'bigquery' });
    try {
      expect(ep.sources.find((s) => s.name === 'edgeLogs')!.typedFields).toContain('zone');
      let from = prepare.mock.calls.length;
      expect(sorted(await answer(ep))).toEqual(expected(DISCOVERING));
      expect(zoneTexts(from).map(readsOfZone)).toEqual([{ column: true, json: false, stored: true, computed: true }]);
      // Another process compacts more into it, discovering a path this instance did not know.
      writeLines(
        tmp.path('globs', 'more.ndjson'),
        times(1200, (i) => edgeEvent({ timestamp: new Date(NOW.getTime() - (3000 + i) * 1000).toISOString(), id: `more${i}`, extra: { zone: 'eu', tier: 'free', shard: 's1' } })),
      );
      await compactLogs({ source: 'edgeLogs', inputs: tmp.path('globs', 'more.ndjson'), outDir: out });
      expect(readDatasetStateStable(out).typedPaths).toContain('shard');
      const SHARDS = 'select m.shard as shard, count(*) as n from edge_logs cross join unnest(metadata) as m group by shard order by shard';
      const shards = async () => (await ep.query('logs.all', WINDOW, { sql: SHARDS })).result;
      from = prepare.mock.calls.length;
      // The first read finds it (and reads it from metadata, as its text was translated), the next reads its column.
      const first = await shards();
      expect(ep.sources.find((s) => s.name === 'edgeLogs')!.typedFields).toContain('shard');
      const second = await shards();
      expect(second).toEqual(first);
      expect(first).toEqual([
        { shard: null, n: DISCOVERING },
        { shard: 's1', n: 1200 },
      ]);
      const texts = prepare.mock.calls
        .slice(from)
        .map(([sql]) => sql)
        .filter((sql) => sql.includes('"shard"'));
      expect(texts.map((sql) => sql.includes('"edge_logs"."json:metadata.shard"'))).toEqual([false, true]);
    } finally {
      await ep.close();
    }
  });
});

describe("an instance's sources as they grow", () => {
  it("leaves a source's declared fields as they are when its dataset holds no more", () => {
    expect(BUILT_IN_SOURCE_SET.withTypedPaths(() => [])).toBe(BUILT_IN_SOURCE_SET);
    expect(
      BUILT_IN_SOURCE_SET.withTypedPaths(() => ['zone'])
        .get('edgeLogs')
        .typedFields.at(-1),
    ).toBe('zone');
  });

  it('grows by new paths only, one version each, keeping the sets it made before', () => {
    const live = new LiveSourceSet(BUILT_IN_SOURCE_SET);
    expect(live.widen('edgeLogs', [...edgeLogs.typedFields])).toBe(false);
    expect(live.widen('edgeLogs', ['zone', 'not a path'])).toBe(true);
    const first = live.current;
    expect(live.widen('edgeLogs', ['zone'])).toBe(false);
    expect(live.widen('noSuchSource', ['zone'])).toBe(false);
    expect(live.current).toBe(first);
    expect(live.widen('edgeLogs', ['zone', 'shard'])).toBe(true);
    expect(live.version).toBe(2);
    // The set a request began with is left as it was; the other sources keep their descriptors.
    expect(first.get('edgeLogs').typedFields.slice(edgeLogs.typedFields.length)).toEqual(['zone']);
    expect(live.current.get('edgeLogs').typedFields.slice(edgeLogs.typedFields.length)).toEqual(['zone', 'shard']);
    expect(live.current.get('functionEdgeLogs')).toBe(first.get('functionEdgeLogs'));
    // Full: a path past the bound is no growth.
    const full = times(DISCOVERED_PATHS_LIMIT, (k) => `k${k}`);
    expect(live.widen('edgeLogs', full)).toBe(true);
    expect(live.widen('edgeLogs', ['past'])).toBe(false);
    expect(live.version).toBe(3);
  });

  it('translates a text to the same meaning whatever was discovered: a discovered path is a column, never a known field', () => {
    const widened = withTypedPaths(edgeLogs, ['zone', 'request.referer']);
    const schema = bigQuerySchemaOf([widened]).tables.edge_logs!;
    expect(Object.keys(schema.typed!.metadata!.fields)).toEqual(expect.arrayContaining([jsonKeysText(['zone']), jsonKeysText(['request', 'referer'])]));
    // Known fields let a bare name resolve through an unnest alias: discovering one must not change what a text means.
    expect(schema.fields).toEqual(bigQuerySchemaOf([edgeLogs]).tables.edge_logs!.fields);
  });
});
