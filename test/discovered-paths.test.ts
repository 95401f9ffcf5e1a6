import { afterAll, describe, expect, it } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { compactLogs } from '../src/compaction/compact';
import { appendCommit, checkpointIfDue, ensureDataset, readDatasetStateStable } from '../src/dataset/dataset-log';
import { discoverTypedPaths, DISCOVERY_MIN_EVENTS } from '../src/duckdb/discover-paths';
import { bigQuerySchemaOf } from '../src/bigquery/schema-of-sources';
import { createEndpoints, type Endpoints } from '../src/index';
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

describe('an instance over files with and without discovered columns', () => {
  const NOW = new Date('2026-11-21T12:00:00Z');
  const dataDir = tmp.path('managed');
  const SQL = 'select m.zone as zone, m.tier as tier, count(*) as n from edge_logs cross join unnest(metadata) as m group by zone, tier order by zone, tier';
  const open = (typedColumns = true) => createEndpoints({ storage: { dataDir, typedColumns }, now: () => NOW, cache: false, sandboxable: ['logs.all'], sqlDialect: 'bigquery' });
  const answer = async (ep: Endpoints) => (await ep.query('logs.all', { project: 'abc', iso_timestamp_start: '2026-11-21T10:00:00Z', iso_timestamp_end: '2026-11-21T12:00:00Z' }, { sql: SQL })).result;
  /** Closes and opens again: the segment left is compacted at start. */
  const compacted = async (ep: Endpoints, typedColumns = true) => {
    await ep.close();
    const again = await open(typedColumns);
    await expect.poll(() => again.stats().storage!.settled, { timeout: HANG_MS }).toBe(true);
    return again;
  };
  const events = [
    // JSON-only files: `zone` in every event, `tier` a number in a third of them.
    ...times(600, (i) => edgeEvent({ timestamp: new Date(NOW.getTime() - i * 1000).toISOString(), id: `old${i}`, extra: { zone: i % 2 ? 'eu' : 'us', tier: i % 3 ? 'free' : 7 } })),
    // Files with typed columns: `zone` discovered, `tier` not (its type varies).
    ...times(1500, (i) => edgeEvent({ timestamp: new Date(NOW.getTime() - (600 + i) * 1000).toISOString(), id: `new${i}`, extra: { zone: i % 3 ? 'eu' : 'ap', tier: i % 3 ? 'free' : 7 } })),
  ];
  /** Rows in one order whatever the engine sorted mixed types by. */
  const sorted = (rows: ReadonlyArray<Record<string, unknown>>) => rows.map((r) => JSON.stringify([r.zone, r.tier, r.n])).sort();
  const expected = () => {
    const counts = new Map<string, { zone: string; tier: string | number; n: number }>();
    for (const e of events) {
      const { zone, tier } = e.metadata as { zone: string; tier: string | number };
      const key = JSON.stringify([zone, tier]);
      counts.set(key, { zone, tier, n: (counts.get(key)?.n ?? 0) + 1 });
    }
    return sorted([...counts.values()]);
  };

  it('answers as the events do before and after the paths are read as columns, and reads them from the next open on', async () => {
    let ep = await open(false);
    await ep.ingest('cloudflare.logs.prod', events.slice(0, 600));
    ep = await compacted(ep, false);
    await ep.ingest('cloudflare.logs.prod', events.slice(600));
    ep = await compacted(ep);
    try {
      // Compacted with discovery in this instance: the dataset holds `zone`; this instance's set,
      // made when it opened, does not, and computes it from metadata.
      expect(readDatasetStateStable(`${dataDir}/edgeLogs/parquet`).typedPaths).toContain('zone');
      expect(ep.sources.find((s) => s.name === 'edgeLogs')!.typedFields).not.toContain('zone');
      expect(sorted(await answer(ep))).toEqual(expected());
    } finally {
      await ep.close();
    }
    ep = await open();
    try {
      const widened = ep.sources.find((s) => s.name === 'edgeLogs')!;
      expect(widened.typedFields).toContain('zone');
      expect(widened.typedFields).not.toContain('tier');
      // The translation reads it as a column, over old files (computed) and new ones (stored) alike.
      expect(Object.keys(bigQuerySchemaOf([widened]).tables.edge_logs!.typed!.metadata!.fields)).toContain('zone');
      expect(sorted(await answer(ep))).toEqual(expected());
    } finally {
      await ep.close();
    }
  });

  it("leaves a source's declared fields as they are when its dataset holds no more", () => {
    expect(BUILT_IN_SOURCE_SET.withTypedPaths(() => [])).toBe(BUILT_IN_SOURCE_SET);
    expect(
      BUILT_IN_SOURCE_SET.withTypedPaths(() => ['zone'])
        .get('edgeLogs')
        .typedFields.at(-1),
    ).toBe('zone');
  });
});
