import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase, threadsOf } from '../src/duckdb/open-database';
import { dayFilePath, dictionaryLimit, oneThreadGroupRows, parquetLayoutCopy, sortedSliceCopy, sortedLayoutTableSql, type LayoutCopyOptions } from '../src/duckdb/parquet-layout';
import { sourceRelation } from '../src/duckdb/source-relations';
import { writeSlicedLayout, writeSortedLayout } from '../src/dataset/sorted-layout-write';
import { HEAD_ROWS_PER_PROJECT } from '../src/dataset/newest-heads';
import { BUILT_IN_SOURCE_SET } from '../src/sources/built-ins';
import { withTypedPaths } from '../src/sources/typed-fields';
import { Prng, uuid } from '../src/fixtures/prng';
import { tempDir, writeLines } from './support/log-files';
import { GATEWAY_BENCH_DISCOVERED, gatewayBenchEvent } from './support/gateway-bench-event';

// docs/performance.md, "A run of one day written as one file": a write whose rows are all of one
// day (a compaction run of a write-ahead segment, nearly always) writes its file straight, not
// through DuckDB's partitioned writer, and on one thread sizes its dictionaries to one row group.

const gateway = BUILT_IN_SOURCE_SET.find('edgeLogs')!;
// The gateway as compaction meets the ingest bench's events: 14 typed fields (5 declared, 9 discovered).
const widened = withTypedPaths(gateway, GATEWAY_BENCH_DISCOVERED);
const MIDNIGHT = 1_794_960_000_000_000; // 2026-11-18T00:00:00Z

/** An 8 MiB write-ahead segment's worth of gateway events (12,900), from `start` on, a millisecond apart. */
function segment(path: string, seed: number, start: number): string {
  const prng = new Prng(seed);
  return writeLines(
    path,
    Array.from({ length: 12_900 }, (_, i) => ({ ...gatewayBenchEvent(prng, i), id: uuid(prng), timestamp: start + i * 1000 })),
  );
}

describe('a write of one day: one file, dictionaries of one row group', () => {
  const tmp = tempDir('le-one-day-write-');
  afterAll(() => tmp.cleanup());

  it('sizes the dictionaries to the groups one thread writes: from a table whole vectors, from files up to a vector less one more', () => {
    expect(oneThreadGroupRows(8_192, 'table')).toBe(8_192);
    // A table is scanned in vectors of 2,048 rows: a group of 20,000 is flushed at 20,480.
    expect(oneThreadGroupRows(20_000, 'table')).toBe(20_480);
    expect(oneThreadGroupRows(8_192, 'files')).toBe(10_239);
    expect(dictionaryLimit(100_000, 8_192, 12_900, 8_192)).toBe(8_192);
    expect(dictionaryLimit(100_000, 8_192, 12_900)).toBe(12_900);
    expect(dictionaryLimit(100_000, 8_192, 3_000, 8_192)).toBe(3_000);
    expect(dayFilePath('out', { filenamePattern: 'part-1f-{i}', day: '2026-11-18' })).toBe(join('out', 'date=2026-11-18', 'part-1f-0.parquet'));
  });

  it("writes the bytes DuckDB's partitioned writer writes, within a memory limit that writer does not fit", async () => {
    const input = segment(tmp.path('same', 'in.ndjson'), 21, MIDNIGHT + 3_600_000_000);
    const { instance, connection } = await openDatabase({ threads: 1, tempDirectory: tmp.path('same', 'spill') });
    try {
      const layout = (target: string, day?: string): LayoutCopyOptions => ({
        source: widened,
        relation: sourceRelation(gateway, { ndjson: [input], parquet: [], parquetTypes: new Map() }),
        target,
        where: 'timestamp IS NOT NULL',
        partitionByDay: { filenamePattern: 'part-run-{i}', ...(day === undefined ? {} : { day }) },
        provenance: '{"run":"run"}',
        typedColumns: true,
        rows: 12_900,
        sortedTable: 'sorted',
        ...(day === undefined ? {} : { groupRows: oneThreadGroupRows(gateway.parquet.rowGroupRows, 'table') }),
      });
      await connection.run(sortedLayoutTableSql(layout(''), 'sorted'));
      // Measured with the sorted table held: the partitioned writer with dictionaries of twice a
      // group needs 68-72MB, the one file with dictionaries of one group 50MB.
      await connection.run("SET memory_limit = '58MB'");
      await expect(connection.run(parquetLayoutCopy(layout(tmp.path('same', 'partitioned'))))).rejects.toThrow(/Out of Memory/);
      mkdirSync(join(tmp.path('same', 'one-day'), 'date=2026-11-18'), { recursive: true });
      await connection.run(parquetLayoutCopy(layout(tmp.path('same', 'one-day'), '2026-11-18')));
      await connection.run("SET memory_limit = '1GB'");
      await connection.run(parquetLayoutCopy(layout(tmp.path('same', 'partitioned'))));
      const written = (folder: string) => readFileSync(join(tmp.path('same', folder), 'date=2026-11-18', 'part-run-0.parquet'));
      expect(readdirSync(tmp.path('same', 'partitioned'))).toEqual(['date=2026-11-18']);
      expect(written('one-day').equals(written('partitioned'))).toBe(true);
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });

  it('writes a run of one day as that one file, and a run over midnight through the partitioned writer, the same rows either way', async () => {
    const { instance, connection } = await openDatabase({ threads: 1, tempDirectory: tmp.path('runs', 'spill') });
    try {
      const write = async (name: string, start: number, limit: string) => {
        const input = segment(tmp.path('runs', `${name}.ndjson`), 22, start);
        const target = tmp.path('runs', name);
        // Parsed first without a limit, as a compaction run stages its rows before it writes.
        await connection.run("SET memory_limit = '1GB'");
        await connection.run(`CREATE OR REPLACE TABLE staged AS ${sourceRelation(gateway, { ndjson: [input], parquet: [], parquetTypes: new Map() })}`);
        await connection.run(`SET memory_limit = '${limit}'`);
        const layout: LayoutCopyOptions = {
          source: widened,
          relation: 'SELECT * FROM staged',
          target,
          where: 'timestamp IS NOT NULL',
          partitionByDay: { filenamePattern: `part-${name}-{i}` },
          typedColumns: true,
          rows: 12_900,
        };
        const heads = await writeSortedLayout(connection, layout, tmp.path('runs', `${name}-heads`));
        const files = readdirSync(target, { recursive: true })
          .map(String)
          .filter((f) => f.endsWith('.parquet'))
          .sort();
        const [row] = (await connection.runAndReadAll(`SELECT count(*) AS n, count(DISTINCT id) AS ids, min(timestamp)::VARCHAR AS first FROM read_parquet('${target}/*/*.parquet')`)).getRowObjects();
        return { files, heads: [...(heads ?? new Map()).values()], rows: Number(row!.n), ids: Number(row!.ids), first: String(row!.first) };
      };
      // 12,900 events a millisecond apart: an hour after midnight, and from 5 s before it. The run
      // of one day, its sort included, fits 60MB with its staged rows held; through the partitioned
      // writer it needed 72MB.
      expect(await write('one', MIDNIGHT + 3_600_000_000, '64MB')).toEqual({
        files: [join('date=2026-11-18', 'part-one-0.parquet')],
        // The ingest bench's 20 projects, each its newest rows.
        heads: [20 * HEAD_ROWS_PER_PROJECT],
        rows: 12_900,
        ids: 12_900,
        first: '2026-11-18 01:00:00',
      });
      const over = await write('over', MIDNIGHT - 5_000_000, '1GB');
      expect(over.files).toEqual([join('date=2026-11-17', 'part-over-0.parquet'), join('date=2026-11-18', 'part-over-0.parquet')]);
      expect([over.rows, over.ids, over.first]).toEqual([12_900, 12_900, '2026-11-17 23:59:55']);
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });
});

describe("a merge's file from its sorted slices, on one thread", () => {
  const tmp = tempDir('le-sliced-write-');
  afterAll(() => tmp.cleanup());

  it("holds groups of at most a vector less one row more than the layout's: dictionaries sized to them write the same bytes as dictionaries of twice a group", async () => {
    const inputs = [0, 1, 2].map((i) => segment(tmp.path(`in-${i}.ndjson`), 30 + i, MIDNIGHT + 3_600_000_000 + i * 12_900_000));
    const { instance, connection } = await openDatabase({ threads: 1, tempDirectory: tmp.path('spill') });
    try {
      const layout = (target: string): LayoutCopyOptions => ({
        source: widened,
        files: { ndjson: inputs, parquet: [], parquetTypes: new Map() },
        target,
        where: 'timestamp IS NOT NULL',
        typedColumns: true,
        rows: 3 * 12_900,
      });
      // Slices of uneven sizes, so the copy meets chunks that end where a slice's file does.
      const slices = ["project < 'proj13'", "project >= 'proj13' AND project < 'proj7'", "project >= 'proj7'"];
      await writeSlicedLayout(connection, layout(tmp.path('merged.parquet')), slices, tmp.path('slices'));
      // The same slices and copy with the default dictionaries (twice a group).
      mkdirSync(tmp.path('reference'));
      const files = slices.map((_, i) => tmp.path('reference', `slice-${i}.parquet`));
      for (const [i, slice] of slices.entries()) await connection.run(sortedSliceCopy(layout(''), slice, files[i]!));
      await connection.run(parquetLayoutCopy({ ...layout(tmp.path('reference.parquet')), sortedFiles: files }));
      expect(readFileSync(tmp.path('merged.parquet')).equals(readFileSync(tmp.path('reference.parquet')))).toBe(true);
      const sizes = (await connection.runAndReadAll(`SELECT DISTINCT row_group_id, row_group_num_rows AS n FROM parquet_metadata('${tmp.path('merged.parquet')}')`))
        .getRowObjects()
        .map((g) => Number(g.n));
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(3 * 12_900);
      expect(Math.max(...sizes)).toBeGreaterThan(gateway.parquet.rowGroupRows);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(oneThreadGroupRows(gateway.parquet.rowGroupRows, 'files'));
      // The allocator's trim between the sorts and the copy leaves the thread count as it was.
      expect(await threadsOf(connection)).toBe(1);
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });
});
