import { afterAll, describe, expect, it, vi } from 'vitest';
import { HeadTables } from '../src/engine/duckdb/head-tables';
import { openDatabase } from '../src/duckdb/open-database';
import { parquetSchema } from '../src/duckdb/parquet-schema';
import { sqlString } from '../src/duckdb/sql-literal';
import type { ListedFile } from '../src/files/list-glob';
import { edgeLogs } from '../src/sources/built-ins';
import { tempDir } from './support/log-files';

const NOW = Date.parse('2026-11-21T12:00:00Z');

describe("the engine holds a day's heads as one table in memory", () => {
  const tmp = tempDir('le-head-tables-');
  afterAll(() => tmp.cleanup());

  it("holds each project's newest rows of a day's heads, adds new heads to the day's table, drops tables no query reads", async () => {
    const { instance, connection } = await openDatabase({ threads: 1 });
    try {
      // Three head files of one day: 150 rows of project a and 20 of b each, interleaved in time.
      const heads: ListedFile[] = [];
      for (let f = 0; f < 3; f++) {
        const path = tmp.path(`head-${f}.parquet`);
        await connection.run(`COPY (
          SELECT 'id-' || ${f} || '-' || i AS id, make_timestamp(${NOW * 1000} - (i * 3 + ${f}) * 1000000) AS timestamp,
                 'm' AS event_message, '{}'::JSON AS metadata, CASE WHEN i < 150 THEN 'a' ELSE 'b' END AS project,
                 '/rest' AS request_path, 'https://a.supabase.co/rest' AS request_url, 200 AS status_code
          FROM range(170) t(i)) TO ${sqlString(path)} (FORMAT parquet)`);
        heads.push({ path, kind: 'parquet', size: 1000 + f, mtimeMs: 0, ino: 0, headRows: 170 });
      }
      const types = await parquetSchema(
        connection,
        heads.map((h) => h.path),
      );
      const dropped: string[] = [];
      const tables = new HeadTables(async (sql) => {
        dropped.push(sql);
        await connection.run(sql);
      });
      const page = async (select: string, project: string) =>
        (await connection.runAndReadAll(`SELECT id FROM (${select}) WHERE project = '${project}' ORDER BY timestamp DESC, id LIMIT 100`)).getRowObjects().map((r) => r.id);
      const fromFiles = async (files: ListedFile[], project: string) => page(`SELECT * FROM read_parquet(${JSON.stringify(files.map((f) => f.path)).replaceAll('"', "'")})`, project);
      const tableNames = async () => (await connection.runAndReadAll(`SELECT table_name FROM duckdb_tables() WHERE table_name LIKE 'le_heads_%' ORDER BY 1`)).getRowObjects().map((r) => r.table_name);

      const two = await tables.hold(connection, edgeLogs, '2026-11-21', heads.slice(0, 2), types);
      for (const project of ['a', 'b']) expect(await page(two!.select, project)).toEqual(await fromFiles(heads.slice(0, 2), project));
      // 100 of a and 40 of b: each project's newest 100 of both files, not every row.
      expect(Number((await connection.runAndReadAll(`SELECT count(*) AS n FROM (${two!.select})`)).getRowObjects()[0]!.n)).toBe(140);
      // The same set again: the same table.
      const again = await tables.hold(connection, edgeLogs, '2026-11-21', [...heads.slice(0, 2)].reverse(), types);
      expect(again!.select).toBe(two!.select);
      again!.release();

      // A third file: a new table from the day's table and the new head only, while a query still reads the old one.
      const run = vi.spyOn(connection, 'run');
      const three = await tables.hold(connection, edgeLogs, '2026-11-21', heads, types);
      const made = run.mock.calls.map(([sql]) => sql).find((sql) => /CREATE TABLE/.test(sql))!;
      run.mockRestore();
      expect(made).toMatch(/FROM le_heads_1\b/);
      expect(made).toContain('head-2.parquet');
      expect(made).not.toContain('head-0.parquet');
      expect(three!.select).not.toBe(two!.select);
      for (const project of ['a', 'b']) expect(await page(three!.select, project)).toEqual(await fromFiles(heads, project));
      expect(await tableNames()).toEqual(['le_heads_1', 'le_heads_2']);
      two!.release();
      await tables.settled();
      // Replaced and read by no query any more: dropped.
      expect(dropped).toEqual(['DROP TABLE IF EXISTS le_heads_1']);
      expect(await tableNames()).toEqual(['le_heads_2']);

      // A file gone (merged away): made again from the heads listed, without the old table's rows.
      const merged = await tables.hold(connection, edgeLogs, '2026-11-21', [heads[2]!], types);
      for (const project of ['a', 'b']) expect(await page(merged!.select, project)).toEqual(await fromFiles([heads[2]!], project));
      merged!.release();
      three!.release();
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });

  it('reads heads of more rows than it may hold from their files', async () => {
    const { instance, connection } = await openDatabase({ threads: 1 });
    try {
      const tables = new HeadTables(async () => undefined, 1000);
      const head: ListedFile = { path: tmp.path('unused.parquet'), kind: 'parquet', size: 1, mtimeMs: 0, ino: 0, headRows: 1001 };
      expect(await tables.hold(connection, edgeLogs, '2026-11-21', [head], new Map())).toBeNull();
      // A head of unknown rows (an older log) is not held either.
      expect(await tables.hold(connection, edgeLogs, '2026-11-21', [{ ...head, headRows: undefined }], new Map())).toBeNull();
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });
});
