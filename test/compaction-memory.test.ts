import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compactLogs } from '../src/compaction/compact';
import { defineSource } from '../src/index';
import { BUILT_IN_SOURCE_SET } from '../src/sources/built-ins';
import { sourceRelation } from '../src/duckdb/source-relations';
import { openDatabase } from '../src/duckdb/open-database';
import { isDuckDBOutOfMemory, MEMORY_RETRY_FACTOR, withMemoryRetry } from '../src/duckdb/memory-retry';
import { atRetryCeiling, DEFAULT_COMPACTION_DUCKDB } from '../src/duckdb/compaction-duckdb';
import { memoryBudget } from '../src/duckdb/memory-budget';
import { largestEventBytes } from '../src/managed/largest-event';
import { readDatasetStateStable } from '../src/dataset/dataset-log';
import { dictionaryLimit, IS_EVENT, oneThreadGroupRows, parquetLayoutCopy, ROW_GROUP_BYTES, rowGroupRowsOf, STRING_DICTIONARY_BYTES, stringDictionaryBytes } from '../src/duckdb/parquet-layout';
import { parquetRowBytes } from '../src/duckdb/parquet-row-bytes';
import { withTypedPaths } from '../src/sources/typed-fields';
import { Prng } from '../src/fixtures/prng';
import { tempDir, writeLines } from './support/log-files';
import { GATEWAY_BENCH_DISCOVERED, gatewayBenchEvent } from './support/gateway-bench-event';
import { BUILDERS } from './support/supabase/vector-events';
import { fakeLog, gatewayCompactor } from './support/fake-log';
import { mergeSmallFiles } from '../src/managed/dataset-maintenance';
import { parquetSchema } from '../src/duckdb/parquet-schema';
import { normalizeEvent } from '../src/ingest/serialize-events';
import { authLogs, postgresLogs } from '../src/sources/supabase/supabase-sources';
import { edgeLogs } from '../src/sources/edge-logs';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { SourceDescriptor } from '../src/sources/source-descriptor';

// docs/ingest.md, "Layout, compaction and retention": compaction parses the lines once into a
// staging file and sorts from it (the sort spills to disk under a small memory limit), and a run
// that runs out of memory is retried at once with twice the limit.

const oom = () => Object.assign(new Error('Out of Memory Error: could not allocate block of size 256.0 KiB (121.8 MiB/122.0 MiB used)'));

describe('withMemoryRetry: background work out of memory is tried again with more', () => {
  it('doubles the limit once, then fails as before', async () => {
    const limits: Array<string | undefined> = [];
    const failing = withMemoryRetry({ threads: 1, memoryLimit: '128MB' }, async (s) => {
      limits.push(s?.memoryLimit);
      throw oom();
    });
    await expect(failing).rejects.toThrow(/Out of Memory/);
    expect(limits).toEqual(['128MB', '256MB']);
    expect(MEMORY_RETRY_FACTOR).toBe(2);
  });

  it('returns the first success, keeps other settings, and never retries other errors or work without a limit', async () => {
    const seen: Array<{ threads?: number; memoryLimit?: string } | undefined> = [];
    const answer = await withMemoryRetry({ threads: 1, memoryLimit: '100MB' }, async (s) => {
      seen.push(s);
      if (seen.length < 2) throw new Error('wrapped', { cause: oom() });
      return 42;
    });
    expect(answer).toBe(42);
    expect(seen).toEqual([
      { threads: 1, memoryLimit: '100MB' },
      { threads: 1, memoryLimit: '200MB' },
    ]);
    let calls = 0;
    await expect(withMemoryRetry({ memoryLimit: '128MB' }, async () => (calls++, Promise.reject(new Error('disk full'))))).rejects.toThrow('disk full');
    await expect(withMemoryRetry(undefined, async () => (calls++, Promise.reject(oom())))).rejects.toThrow(/Out of Memory/);
    expect(calls).toBe(2);
    expect(isDuckDBOutOfMemory(new Error('x', { cause: new Error('y', { cause: oom() }) }))).toBe(true);
    expect(isDuckDBOutOfMemory(new Error('Binder Error'))).toBe(false);
  });
});

describe("compaction's DuckDB: one default, declared once", () => {
  it('work run without retry (check --repair) gets the limit a retried run reaches', async () => {
    const limits: Array<string | undefined> = [];
    await withMemoryRetry(DEFAULT_COMPACTION_DUCKDB, async (s) => {
      limits.push(s?.memoryLimit);
      if (limits.length === 1) throw oom();
    });
    expect(atRetryCeiling(DEFAULT_COMPACTION_DUCKDB)).toEqual({ threads: 1, memoryLimit: limits.at(-1) });
    expect(limits).toEqual(['256MB', '512MB']);
    expect(atRetryCeiling({ threads: 2 })).toEqual({ threads: 2 });
  });
});

describe('compaction under a small memory limit', () => {
  const tmp = tempDir('le-compaction-memory-');
  afterAll(() => tmp.cleanup());

  it("writes what DuckDB writes of the relation's rows straight to Parquet, for a source's own column types (staged, then sorted)", async () => {
    const ledger = defineSource({
      name: 'ledger',
      relation: 'ledger_logs',
      columns: {
        project: 'text',
        amount: { type: 'float', path: '$.amount', duckdb: 'DECIMAL(38,2)' },
        big: { type: 'integer', path: '$.big', duckdb: 'HUGEINT' },
        day: { type: 'text', path: '$.day', duckdb: 'DATE' },
        ref: { type: 'text', path: '$.ref', duckdb: 'UUID' },
        small: { type: 'integer', path: '$.small', duckdb: 'SMALLINT' },
        span: { type: 'text', path: '$.span', duckdb: 'INTERVAL' },
        tags: { type: 'text', path: '$.tags', duckdb: 'VARCHAR[]' },
      },
      projectColumn: 'project',
    });
    const events = [
      {
        amount: '123456789012345678901234567890123.45',
        big: '170141183460469231731687303715884105727',
        day: '2026-11-21',
        ref: '6f0c1d2e-3b4a-4c5d-8e6f-7a8b9c0d1e2f',
        small: 32767,
        span: '1 day 00:00:00.000123',
        tags: "['a, b', 'c]']",
      },
      { amount: '-0.01', big: '-9007199254740993', day: '0001-01-01', ref: null, small: -32768, span: '3 months', tags: '[]' },
      { amount: null, big: null, day: null, ref: '00000000-0000-0000-0000-000000000000', small: null, span: null, tags: null },
    ].map((metadata, i) => ({ id: `e${i}`, timestamp: `2026-11-21T10:00:0${i}Z`, project: 'p', event_message: 'x', metadata }));
    const input = writeLines(tmp.path('ledger', 'in.ndjson'), events);
    const out = tmp.path('ledger', 'pq');
    await compactLogs({ source: 'ledger', sourceDefinitions: [ledger], inputs: input, outDir: out, duckdb: { threads: 1, memoryLimit: '64MB' } });

    const { instance, connection } = await openDatabase();
    try {
      // What compaction wrote before it staged: the relation straight into Parquet.
      const source = BUILT_IN_SOURCE_SET.extend([ledger]).find('ledger')!;
      const straight = tmp.path('ledger', 'straight.parquet');
      await connection.run(`COPY (${sourceRelation(source, { ndjson: [input], parquet: [], parquetTypes: new Map() })}) TO '${straight}' (FORMAT parquet)`);
      const columns = ['id', 'amount', 'big', 'day', 'ref', 'small', 'span', 'tags'].map((c) => `CAST(${c} AS VARCHAR) AS ${c}, typeof(${c}) AS ${c}_type`).join(', ');
      const direct = (await connection.runAndReadAll(`SELECT ${columns} FROM read_parquet('${straight}') ORDER BY id`)).getRowObjects();
      const files = [...readDatasetStateStable(out).files.keys()].map((p) => `'${join(out, p)}'`);
      const written = (await connection.runAndReadAll(`SELECT ${columns} FROM read_parquet([${files.join(', ')}]) ORDER BY id`)).getRowObjects();
      expect(direct).toHaveLength(3);
      expect(written).toEqual(direct);
      expect(written[0]!.amount).toBe('123456789012345678901234567890123.45');
      expect(written[0]!.tags).toBe(direct[0]!.tags);
      expect(written[0]!.tags_type).toBe('VARCHAR[]');
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });

  it("discovers typed fields among 64 candidate paths within compaction's 80MB, and checks none for a run too small to discover any", async () => {
    // 1,200 events of 100 keys each: 64 candidates checked over the run. Each candidate's one-type
    // check was a count(DISTINCT), a hash table of its own: past 160MB, so the run never compacted.
    const lines = Array.from({ length: 1_200 }, (_, e) => ({
      id: `e${e}`,
      timestamp: '2026-11-21T11:00:00Z',
      event_message: 'm',
      project: 'p',
      metadata: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, i % 3 === 0 ? `v${e % 7}` : i])),
    }));
    writeLines(tmp.path('candidates.ndjson'), lines);
    const duckdb = { threads: 1, memoryLimit: '80MB' };
    await compactLogs({ source: 'edgeLogs', inputs: tmp.path('candidates.ndjson'), outDir: tmp.path('candidates'), duckdb });
    const [file] = [...readDatasetStateStable(tmp.path('candidates')).files.values()];
    expect(file!.rows).toBe(1_200);
    // The source's five declared fields and 16 discovered (the bound), of the few-valued ones.
    expect(file!.typedFields).toHaveLength(21);
    expect(file!.typedFields).toContain('k0');
    // One event of 25,000 keys: fewer events than discovery needs, so its candidates are not checked (that check alone was past 160MB).
    writeLines(tmp.path('one-wide.ndjson'), [
      { id: 'w', timestamp: '2026-11-21T11:00:00Z', event_message: 'wide', project: 'p', metadata: Object.fromEntries(Array.from({ length: 25_000 }, (_, i) => [`k${i}`, i])) },
    ]);
    await compactLogs({ source: 'edgeLogs', inputs: tmp.path('one-wide.ndjson'), outDir: tmp.path('one-wide'), duckdb });
    expect([...readDatasetStateStable(tmp.path('one-wide')).files.values()].map((f) => [f.rows, f.typedFields?.length])).toEqual([[1, 5]]);
  });

  /** One write-ahead segment of `lines` compacted by the gateway's background compactor on one thread (retried out of memory at twice the limit). */
  async function compactSegment(name: string, lines: string[], memoryLimit: string) {
    const walDir = tmp.path(name, 'wal');
    const datasetDir = tmp.path(name, 'parquet');
    const wal = fakeLog(walDir);
    wal.add('00000000000000000001.ndjson', lines);
    const errors: unknown[] = [];
    const compactor = gatewayCompactor({ datasetDir, walDir, wal, now: () => new Date('2026-11-21T12:00:00Z'), duckdb: { threads: 1, memoryLimit }, onError: (e) => errors.push(e) });
    compactor.trigger();
    await compactor.settled();
    await compactor.stop();
    const rows = [...readDatasetStateStable(datasetDir).files.values()].reduce((n, f) => n + f.rows, 0);
    return { errors, rows, segmentLeft: existsSync(join(walDir, '00000000000000000001.ndjson')) };
  }

  it("compacts the longest event ingest takes under the default budget, a string or keys, within compaction's share and its retry", async () => {
    const share = memoryBudget('512MiB').compaction;
    const largest = largestEventBytes(share);
    const line = (metadata: string) => `{"id":"big","event_message":"big","project":"p","timestamp":"2026-11-21T11:00:00Z","metadata":${metadata}}`;
    const string = line(`{"blob":"${'x'.repeat(largest - line('{"blob":""}').length)}"}`);
    const keys: string[] = [];
    for (let i = 0, bytes = line('{}').length; bytes + `"k${i}":${i},`.length <= largest; bytes += `"k${i}":${i},`.length, i++) keys.push(`"k${i}":${i}`);
    const wide = line(`{${keys.join(',')}}`);
    expect([string.length, wide.length <= largest, keys.length > 250_000]).toEqual([largest, true, true]);
    for (const [name, event] of [
      ['longest-string', string],
      ['longest-keys', wide],
    ] as const) {
      const compacted = await compactSegment(name, [event], share.memoryLimit);
      expect(compacted.errors).toEqual([]);
      expect(compacted.rows).toBe(1);
    }
  });

  it('compacts events of 650,000 keys each by retrying out of memory with twice the limit, and fails past it', async () => {
    const keys = Array.from({ length: 650_000 }, (_, i) => `"k${i}":${i}`).join(',');
    const wide = (id: string) => `{"id":"${id}","event_message":"wide","project":"wide","timestamp":"2026-11-21T11:00:00Z","metadata":{${keys}}}`;
    const run = (memoryLimit: string, name: string) => compactSegment(name, [wide('w1'), wide('w2'), wide('w3')], memoryLimit);
    // The run alone does not fit in 256MB (the three events parse to about 250 MB): compacted at 512MB.
    const retried = await run('256MB', 'wide-retried');
    expect(retried.errors).toEqual([]);
    expect(retried.rows).toBe(3);
    expect(retried.segmentLeft).toBe(false);
    // 32MB, retried at 64MB: still out of memory, told, and the segment kept for the next run.
    const refused = await run('32MB', 'wide-refused');
    expect(refused.errors).toHaveLength(1);
    expect(isDuckDBOutOfMemory(refused.errors[0])).toBe(true);
    expect(refused.rows).toBe(0);
    expect(refused.segmentLeft).toBe(true);
  });
});

describe('the dictionaries of a Parquet COPY are sized to the rows it writes (docs/performance.md, "Footprint")', () => {
  const tmp = tempDir('le-compaction-dictionary-');
  afterAll(() => tmp.cleanup());
  const gateway = BUILT_IN_SOURCE_SET.find('edgeLogs')!;

  it("takes the source's entries, or fewer: twice a row group's rows, or the rows written", () => {
    expect(gateway.parquet).toMatchObject({ dictionaryEntries: 100_000, rowGroupRows: 8_192 });
    expect(dictionaryLimit(100_000, 8_192, 3_900)).toBe(3_900);
    expect(dictionaryLimit(100_000, 8_192, 250_000)).toBe(16_384);
    expect(dictionaryLimit(100_000, 8_192)).toBe(16_384);
    expect(dictionaryLimit(10_000, 8_192)).toBe(10_000);
    expect(dictionaryLimit(100_000, 8_192, 0)).toBe(1);
    expect(dictionaryLimit(undefined, 8_192, 3_900)).toBeUndefined();
    const copy = (rows?: number) => parquetLayoutCopy({ source: gateway, ndjson: ['in.ndjson'], target: 'out.parquet', where: 'true', ...(rows === undefined ? {} : { rows }) });
    expect(copy(3_900)).toContain('DICTIONARY_SIZE_LIMIT 3900');
    expect(copy()).toContain('DICTIONARY_SIZE_LIMIT 16384');
  });

  // The COPY as it was written before: the source's whole limit.
  const wholeLimit = (sql: string) => sql.replace(/DICTIONARY_SIZE_LIMIT \d+/, 'DICTIONARY_SIZE_LIMIT 100000');

  it('writes the same bytes as with the whole limit, on one thread or two', async () => {
    const prng = new Prng(11);
    const input = writeLines(
      tmp.path('same', 'in.ndjson'),
      Array.from({ length: 20_000 }, (_, i) => BUILDERS.edge_logs(prng, { micros: 1_795_000_000_000_000 + i * 1000, nanos: 0 })),
    );
    for (const threads of [1, 2]) {
      const { instance, connection } = await openDatabase({ threads, tempDirectory: tmp.path('same', 'spill') });
      try {
        const write = async (target: string, sql: (copy: string) => string, rows?: number) => {
          await connection.run(sql(parquetLayoutCopy({ source: gateway, ndjson: [input], target, where: IS_EVENT, ...(rows === undefined ? {} : { rows }) })));
          return readFileSync(target);
        };
        const whole = await write(tmp.path('same', `whole-${threads}.parquet`), wholeLimit);
        const byRowGroups = await write(tmp.path('same', `groups-${threads}.parquet`), (sql) => sql);
        const byRows = await write(tmp.path('same', `rows-${threads}.parquet`), (sql) => sql, 20_000);
        expect(whole.length).toBeGreaterThan(0);
        expect(byRowGroups.equals(whole)).toBe(true);
        expect(byRows.equals(whole)).toBe(true);
      } finally {
        connection.closeSync();
        instance.closeSync();
      }
    }
  });

  it('writes a small run of the gateway log under 40MB of DuckDB, where dictionaries of 100,000 entries ran out of memory', async () => {
    const prng = new Prng(12);
    const input = writeLines(
      tmp.path('small', 'in.ndjson'),
      Array.from({ length: 2_000 }, (_, i) => BUILDERS.edge_logs(prng, { micros: 1_795_000_000_000_000 + i * 1000, nanos: 0 })),
    );
    const { instance, connection } = await openDatabase({ threads: 1, tempDirectory: tmp.path('small', 'spill') });
    try {
      // The rows parsed first without a limit, so the limit then bounds the COPY alone (as a compaction run's sort reads its staged rows).
      await connection.run(`CREATE TABLE staged AS ${sourceRelation(gateway, { ndjson: [input], parquet: [], parquetTypes: new Map() })}`);
      await connection.run("SET memory_limit = '40MB'");
      const copy = (name: string, rows?: number) =>
        parquetLayoutCopy({ source: gateway, relation: 'SELECT * FROM staged', target: tmp.path('small', name), where: IS_EVENT, ...(rows === undefined ? {} : { rows }) });
      // The whole limit: every column's dictionary allocated for 100,000 entries before the first row.
      await expect(connection.run(wholeLimit(copy('whole.parquet')))).rejects.toThrow(/Out of Memory/);
      await connection.run(copy('sized.parquet', 2_000));
      const [row] = (await connection.runAndReadAll(`SELECT count(*) AS n FROM read_parquet('${tmp.path('small', 'sized.parquet')}')`)).getRowObjects();
      expect(Number(row!.n)).toBe(2_000);
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });

  it("writes an 8 MiB segment of the gateway log with 14 typed fields (5 declared, 9 discovered) and its ids' bloom filters within compaction's 80MB: string dictionaries of 1 MB ran out of memory", async () => {
    // The ingest bench's gateway events (a project of 20, one of four paths, ...), as compaction met them.
    const prng = new Prng(13);
    const lines = Array.from({ length: 12_900 }, (_, i) => ({
      ...gatewayBenchEvent(prng, i),
      id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      timestamp: 1_795_000_000_000_000 + i * 1000,
    }));
    const input = writeLines(tmp.path('typed', 'in.ndjson'), lines);
    const widened = withTypedPaths(gateway, GATEWAY_BENCH_DISCOVERED);
    expect(widened.typedFields).toHaveLength(14);
    const { instance, connection } = await openDatabase({ threads: 1, tempDirectory: tmp.path('typed', 'spill') });
    try {
      await connection.run(`CREATE TABLE staged AS ${sourceRelation(gateway, { ndjson: [input], parquet: [], parquetTypes: new Map() })}`);
      await connection.run("SET memory_limit = '80MB'");
      const copy = (name: string) => parquetLayoutCopy({ source: widened, relation: 'SELECT * FROM staged', target: tmp.path('typed', name), where: IS_EVENT, typedColumns: true, rows: lines.length });
      // 64 KiB, raised to a row group's ids for the gateway's bloom filter on `id` (parquet.idBloomFilter).
      expect(stringDictionaryBytes(widened)).toBeGreaterThan(STRING_DICTIONARY_BYTES);
      expect(copy('x')).toContain(`STRING_DICTIONARY_PAGE_SIZE_LIMIT ${stringDictionaryBytes(widened)}`);
      // DuckDB's default: each string column's dictionary filled up to 1 MB before plain encoding.
      await expect(connection.run(copy('default.parquet').replace(/STRING_DICTIONARY_PAGE_SIZE_LIMIT \d+/, 'STRING_DICTIONARY_PAGE_SIZE_LIMIT 1048576'))).rejects.toThrow(/Out of Memory/);
      await connection.run(copy('ours.parquet'));
      const [row] = (
        await connection.runAndReadAll(`SELECT count(*) AS n, count(DISTINCT "text:metadata.request.host") AS hosts FROM read_parquet('${tmp.path('typed', 'ours.parquet')}')`)
      ).getRowObjects();
      expect([Number(row!.n), Number(row!.hosts)]).toEqual([12_900, 20]);
      // Every group's ids have their filter, within the same 80MB.
      const [ids] = (
        await connection.runAndReadAll(`SELECT count(*) AS groups, count(bloom_filter_offset) AS filters FROM parquet_metadata('${tmp.path('typed', 'ours.parquet')}') WHERE path_in_schema = 'id'`)
      ).getRowObjects();
      expect([Number(ids!.groups), Number(ids!.filters)]).toEqual([2, 2]);
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });
});

describe('a day\'s merge under compaction\'s memory limit (docs/performance.md, "Merges bounded by the memory limit")', () => {
  const tmp = tempDir('le-merge-memory-');
  afterAll(() => tmp.cleanup());

  it("merges 72,000 events of Postgres's log within compaction's 80MB, written through the sorted table: copied straight from the sort in 100,000-row groups they ran out of memory", async () => {
    // Twelve files of 6,000 events, as ingest normalizes Vector's and compaction writes them.
    const prng = new Prng(17);
    const root = tmp.path('postgres', 'dataset');
    for (let f = 0; f < 12; f++) {
      const lines = Array.from({ length: 6000 }, (_, k) =>
        normalizeEvent(BUILDERS.postgres_logs(prng, { micros: Date.parse('2026-11-21T01:00:00Z') * 1000 + (f * 6000 + k) * 1000, nanos: 0 }), k, ''),
      );
      await compactLogs({ source: 'postgresLogs', sourceDefinitions: [postgresLogs], inputs: writeLines(tmp.path('postgres', `${f}.ndjson`), lines), outDir: root, duckdb: { threads: 1 } });
    }
    const files = [...readDatasetStateStable(root).files.values()];
    expect(files.map((f) => f.rows)).toEqual(Array.from({ length: 12 }, () => 6000));
    const { instance, connection } = await openDatabase({ threads: 1, tempDirectory: tmp.path('postgres', 'spill') });
    try {
      await connection.run("SET memory_limit = '80MB'");
      const paths = files.map((f) => join(root, f.path));
      // In the row groups Postgres's log had before its 32,768 (src/sources/supabase/postgres-logs.ts):
      // in 32,768-row groups the straight copy of 72,000 events fits 80MB as well.
      const straight = await straightCopy(connection, { ...postgresLogs, parquet: { ...postgresLogs.parquet, rowGroupRows: 100_000 } }, files, paths, tmp.path('postgres', 'straight.parquet'));
      await expect(connection.run(straight)).rejects.toThrow(/Out of Memory/);
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
    // The merge itself, at the same limit and without the retry: one file of every event.
    expect((await mergeSmallFiles(root, postgresLogs, { threads: 1, memoryLimit: '80MB' })).merged).toBe(12);
    expect([...readDatasetStateStable(root).files.values()].map((f) => f.rows)).toEqual([72_000]);
  });
});

/**
 * The COPY of a dataset's files into one file in the source's declared row groups (no bytes a row
 * given): what a merge wrote before its groups were bounded in bytes.
 */
async function straightCopy(
  connection: DuckDBConnection,
  source: SourceDescriptor,
  files: readonly { path: string; rows: number; typedFields?: readonly string[] }[],
  paths: readonly string[],
  target: string,
): Promise<string> {
  return parquetLayoutCopy({
    source,
    files: { ndjson: [], parquet: [...paths], parquetTypes: await parquetSchema(connection, paths), typedFields: new Map(files.map((f, i) => [paths[i]!, f.typedFields ?? []])) },
    target,
    where: 'true',
    typedColumns: true,
    rows: files.reduce((n, f) => n + f.rows, 0),
  });
}

/** A limit the merge of 40,000 Auth events fits in groups bounded in bytes, and not in one group. */
const LIMIT = '56MB';

describe('row groups bounded in bytes (docs/performance.md, "Row groups bounded in bytes")', () => {
  const tmp = tempDir('le-row-group-bytes-');
  afterAll(() => tmp.cleanup());

  it("gives wide rows groups of fewer rows than the descriptor's, in whole vectors, and keeps narrow rows' and unknown widths' groups", () => {
    expect(authLogs.parquet.rowGroupRows).toBe(100_000);
    expect(rowGroupRowsOf(authLogs, 637)).toBe(18_432);
    expect(rowGroupRowsOf(authLogs, 637) * 637).toBeLessThanOrEqual(ROW_GROUP_BYTES);
    expect(rowGroupRowsOf(edgeLogs, 426)).toBe(8_192);
    expect(rowGroupRowsOf(postgresLogs, 368)).toBe(32_768);
    expect(rowGroupRowsOf(authLogs, 100)).toBe(100_000);
    expect(rowGroupRowsOf(authLogs, 1_000_000)).toBe(2_048);
    expect(rowGroupRowsOf(authLogs)).toBe(100_000);
    expect(rowGroupRowsOf(authLogs, 0)).toBe(100_000);
  });

  it("merges a day of Auth's log in groups of its rows' bytes within a limit its 100,000-row groups run out of", async () => {
    // Eight files of 5,000 events, as ingest normalizes Vector's and compaction writes them.
    const prng = new Prng(23);
    const root = tmp.path('auth', 'dataset');
    for (let f = 0; f < 8; f++) {
      const lines = Array.from({ length: 5000 }, (_, k) => normalizeEvent(BUILDERS.auth_logs(prng, { micros: Date.parse('2026-11-21T01:00:00Z') * 1000 + (f * 5000 + k) * 1000, nanos: 0 }), k, ''));
      await compactLogs({ source: 'authLogs', sourceDefinitions: [authLogs], inputs: writeLines(tmp.path('auth', `${f}.ndjson`), lines), outDir: root, duckdb: { threads: 1 } });
    }
    const files = [...readDatasetStateStable(root).files.values()];
    const paths = files.map((f) => join(root, f.path));
    const { instance, connection } = await openDatabase({ threads: 1, tempDirectory: tmp.path('auth', 'spill') });
    let rowBytes: number | undefined;
    try {
      rowBytes = await parquetRowBytes(connection, paths);
      await connection.run(`SET memory_limit = '${LIMIT}'`);
      // The same files copied in the descriptor's groups: all 40,000 rows in one, held before it is written.
      const whole = await straightCopy(connection, authLogs, files, paths, tmp.path('auth', 'whole.parquet'));
      await expect(connection.run(whole)).rejects.toThrow(/Out of Memory/);
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
    expect(rowBytes).toBeGreaterThan(300);
    // The merge itself, at the same limit and without the retry: one file, in groups of at most ROW_GROUP_BYTES.
    expect((await mergeSmallFiles(root, authLogs, { threads: 1, memoryLimit: LIMIT })).merged).toBe(8);
    const [merged] = [...readDatasetStateStable(root).files.values()];
    expect(merged?.rows).toBe(40_000);
    const check = await openDatabase({ threads: 1 });
    try {
      const groups = (await check.connection.runAndReadAll(`SELECT DISTINCT row_group_id, row_group_num_rows AS n FROM parquet_metadata('${join(root, merged!.path)}')`))
        .getRowObjects()
        .map((r) => Number(r.n));
      const bound = rowGroupRowsOf(authLogs, rowBytes);
      expect(bound).toBeLessThan(40_000);
      expect(groups.length).toBeGreaterThan(1);
      expect(Math.max(...groups)).toBeLessThanOrEqual(oneThreadGroupRows(bound, 'files'));
    } finally {
      await check.close();
    }
  });
});
