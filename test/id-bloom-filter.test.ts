import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compactLogs } from '../src/compaction/compact';
import { defineSource, type Endpoints } from '../src/index';
import { edgeLogs } from '../src/sources/edge-logs';
import { ID_BLOOM_FILTER_MAX_ROWS } from '../src/sources/source-descriptor';
import { stringDictionaryBytes, STRING_DICTIONARY_BYTES } from '../src/duckdb/parquet-layout';
import { postgresLogs } from '../src/sources/supabase/supabase-sources';
import { readDatasetStateStable } from '../src/dataset/dataset-log';
import { mergeSmallFiles } from '../src/managed/dataset-maintenance';
import { openDatabase } from '../src/duckdb/open-database';
import { DEFAULT_COMPACTION_DUCKDB } from '../src/duckdb/compaction-duckdb';
import { sqlString } from '../src/duckdb/sql-literal';
import { Prng } from '../src/fixtures/prng';
import { edgeEvent, endpointsAt, tempDir, writeLines } from './support/log-files';

// docs/ingest.md, "Layout, compaction and retention": a source with `parquet.idBloomFilter` (the
// gateway log) gets a bloom filter on each row group's `id`, so a log asked by id reads the group
// that may hold it; answers are the same as without.

const NOW = '2026-11-21T12:00:00Z';

/** UUID-shaped ids (36 characters), random-looking as a sender's are, from a fixed seed. */
function uuids(seed: number, n: number): string[] {
  const prng = new Prng(seed);
  const hex = (digits: number) => Array.from({ length: digits }, () => prng.int(16).toString(16)).join('');
  return Array.from({ length: n }, () => `${hex(8)}-${hex(4)}-4${hex(3)}-8${hex(3)}-${hex(12)}`);
}

/** Per row group of a Parquet file's `id`: whether it has a bloom filter, and whether the filter rules `id` out. */
async function idGroups(file: string, id: string): Promise<Array<{ bloom: boolean; excludes: boolean | null }>> {
  const { connection, close } = await openDatabase({ threads: 1 });
  try {
    const meta = (
      await connection.runAndReadAll(`SELECT row_group_id, bloom_filter_offset IS NOT NULL AS bloom FROM parquet_metadata(${sqlString(file)}) WHERE path_in_schema = 'id' ORDER BY row_group_id`)
    ).getRowObjects();
    const probe = new Map(
      (await connection.runAndReadAll(`SELECT row_group_id, bloom_filter_excludes FROM parquet_bloom_probe(${sqlString(file)}, 'id', ${sqlString(id)})`))
        .getRowObjects()
        .map((r) => [Number(r.row_group_id), r.bloom_filter_excludes as boolean | null]),
    );
    return meta.map((m) => ({ bloom: m.bloom === true, excludes: probe.get(Number(m.row_group_id)) ?? null }));
  } finally {
    await close();
  }
}

describe("a bloom filter on the gateway log's ids (parquet.idBloomFilter)", () => {
  const tmp = tempDir('le-id-bloom-');
  // 2026-11-21: 20,000 events with UUID ids (three row groups); 2026-11-20: 6,000 with a sender's
  // own ids of 60 characters (one group, whose ids take more than the dictionary: written plain).
  const ids = uuids(7, 20_000);
  const longIds = Array.from({ length: 6_000 }, (_, i) => `a-sender-s-own-id-that-is-longer-than-a-uuid-${String(i).padStart(15, '0')}`);
  const dataset = tmp.path('dataset');
  let compacted: Endpoints;
  let plain: Endpoints;

  beforeAll(async () => {
    const events = [
      ...ids.map((id, i) => edgeEvent({ id, project: 'p', timestamp: new Date(Date.parse('2026-11-21T10:00:00Z') - i * 1000).toISOString() })),
      ...longIds.map((id, i) => edgeEvent({ id, project: 'p', timestamp: new Date(Date.parse('2026-11-20T10:00:00Z') - i * 1000).toISOString() })),
    ];
    writeLines(tmp.path('ndjson', 'all.ndjson'), events);
    await compactLogs({ source: 'edgeLogs', inputs: tmp.path('ndjson', 'all.ndjson'), outDir: dataset });
    const options = { sandboxable: ['logs.all'], tierWindow: false };
    ({ ep: compacted } = await endpointsAt({ edgeLogs: dataset }, NOW, options));
    ({ ep: plain } = await endpointsAt({ edgeLogs: tmp.path('ndjson', 'all.ndjson') }, NOW, options));
  });
  afterAll(async () => {
    await compacted.close();
    await plain.close();
    tmp.cleanup();
  });

  const fileOf = (day: string) => join(dataset, [...readDatasetStateStable(dataset).files.values()].find((f) => f.day === day)!.path);

  it('gives every row group of UUID ids a filter, which rules out every group but the one holding an id', async () => {
    const groups = await idGroups(fileOf('2026-11-21'), ids[12_345]!);
    expect(groups).toHaveLength(3);
    expect(groups.every((g) => g.bloom)).toBe(true);
    // The rows are sorted newest first: the 12,345th newest is in the second group of 8,192.
    expect(groups.map((g) => g.excludes)).toEqual([true, false, true]);
    expect((await idGroups(fileOf('2026-11-21'), 'no-such-id')).map((g) => g.excludes)).toEqual([true, true, true]);
  });

  it('writes a group of longer ids plain, without a filter (read whole, as before)', async () => {
    expect((await idGroups(fileOf('2026-11-20'), longIds[0]!)).map((g) => g.bloom)).toEqual([false]);
  });

  it('answers a log asked by id as the events read without compaction do: an id of each group, a long id, none', async () => {
    for (const id of [ids[0]!, ids[9_000]!, ids[19_999]!, longIds[3_000]!, 'no-such-id']) {
      const sql = `select id, timestamp, event_message, metadata from edge_logs where id = '${id}' limit 1`;
      const [a, b] = await Promise.all([compacted.query('logs.all', { project: 'p' }, { sql }), plain.query('logs.all', { project: 'p' }, { sql })]);
      expect(a.result).toEqual(b.result);
      expect((a.result as unknown[]).length).toBe(id === 'no-such-id' ? 0 : 1);
    }
  });

  it("writes the filters into a day's merged file too", async () => {
    const root = tmp.path('merged');
    const day = ids.slice(0, 9_000);
    writeLines(
      tmp.path('merge', 'a.ndjson'),
      day.slice(0, 4_500).map((id, i) => edgeEvent({ id, project: 'p', timestamp: new Date(Date.parse('2026-11-21T10:00:00Z') - i * 2000).toISOString() })),
    );
    writeLines(
      tmp.path('merge', 'b.ndjson'),
      day.slice(4_500).map((id, i) => edgeEvent({ id, project: 'p', timestamp: new Date(Date.parse('2026-11-21T10:00:01Z') - i * 2000).toISOString() })),
    );
    await compactLogs({ source: 'edgeLogs', inputs: tmp.path('merge', 'a.ndjson'), outDir: root });
    await compactLogs({ source: 'edgeLogs', inputs: tmp.path('merge', 'b.ndjson'), outDir: root });
    // One DuckDB thread, as managed storage merges (a parallel write may combine a day's last groups past 8,192 rows).
    expect((await mergeSmallFiles(root, edgeLogs, DEFAULT_COMPACTION_DUCKDB)).merged).toBe(2);
    const [merged] = [...readDatasetStateStable(root).files.values()];
    const groups = await idGroups(join(root, merged!.path), day[4_500]!);
    expect(groups).toHaveLength(2);
    expect(groups.every((g) => g.bloom)).toBe(true);
    expect(groups.filter((g) => g.excludes === false)).toHaveLength(1);
  });

  it("sizes the COPY's string dictionaries to a row group's ids for such a source only, and refuses it over larger groups", () => {
    expect(stringDictionaryBytes(edgeLogs)).toBe(8192 * 40);
    expect(stringDictionaryBytes(postgresLogs)).toBe(STRING_DICTIONARY_BYTES);
    const config = { name: 'wide', relation: 'wide_logs', logflare: { names: ['wide.logs'] }, projectColumn: 'project', columns: { project: 'text' as const } };
    expect(defineSource({ ...config, parquet: { rowGroupRows: ID_BLOOM_FILTER_MAX_ROWS, idBloomFilter: true } }).parquet.idBloomFilter).toBe(true);
    expect(() => defineSource({ ...config, parquet: { rowGroupRows: 20_000, idBloomFilter: true } })).toThrow(/parquet\.idBloomFilter needs row groups of at most 8192 rows/);
  });
});
