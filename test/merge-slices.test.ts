import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection } from '@duckdb/node-api';
import { openDatabase } from '../src/duckdb/open-database';
import { mergeCells, mergeSlices, type MergeCell } from '../src/dataset/merge-slices';

// docs/ingest.md, "Layout, compaction and retention": a merge of more events than one sort fits
// sorts them in slices, contiguous in the layout's order (project, newest first, then id), and
// copies the slices in order: the same rows in the same order as one sort of them all.

const MINUTE = 60_000_000n;
const cell = (project: string | null, minute: number | null, rows: number): MergeCell => ({ project, minute: minute === null ? null : BigInt(minute) * MINUTE, rows });

describe("a merge's rows cut into sorted slices", () => {
  it('is one slice when every row fits one', () => {
    expect(mergeSlices([cell('a', 1, 10), cell('b', 1, 10)], 'project', 20)).toEqual(['true']);
    expect(mergeSlices([], 'project', 1)).toEqual(['true']);
  });

  it('gathers whole projects while they fit, and cuts a larger project by ranges of its minutes, newest first', () => {
    const cells = [cell('a', 2, 5), cell('a', 1, 5), cell('b', 1, 8), cell('c', 3, 30), cell('c', 2, 30), cell('c', 1, 30), cell('d', 1, 4), cell('e', 1, 4), cell(null, 1, 3)];
    expect(mergeSlices(cells, 'project', 60)).toEqual([
      "project >= 'a' AND project <= 'b'",
      `project = 'c' AND timestamp >= make_timestamp(${2n * MINUTE}) AND timestamp < make_timestamp(${4n * MINUTE})`,
      `project = 'c' AND timestamp >= make_timestamp(${1n * MINUTE}) AND timestamp < make_timestamp(${2n * MINUTE})`,
      "project >= 'd' AND project <= 'e'",
      'project IS NULL',
    ]);
    // A minute of more rows than a slice is a slice of its own; the rows without a timestamp come last.
    expect(mergeSlices([cell('a', 2, 100), cell('a', 1, 5), cell('a', null, 5)], '@project', 60)).toEqual([
      `"@project" = 'a' AND timestamp >= make_timestamp(${2n * MINUTE}) AND timestamp < make_timestamp(${3n * MINUTE})`,
      `"@project" = 'a' AND ((timestamp >= make_timestamp(${1n * MINUTE}) AND timestamp < make_timestamp(${2n * MINUTE})) OR timestamp IS NULL)`,
    ]);
  });

  describe('over rows in DuckDB', () => {
    let connection: DuckDBConnection;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ connection, close } = await openDatabase({ threads: 1 }));
      // 3,000 rows: a busy project (a third of them), a dozen small ones, rows without a project
      // or a timestamp, quotes in a project's name, timestamps and ids that tie.
      await connection.run(`
        CREATE TABLE rows AS
        SELECT
          'id-' || (i % 2900)::VARCHAR AS id,
          CASE WHEN i % 97 = 0 THEN NULL ELSE TIMESTAMP '2026-11-21 00:00:00' + to_microseconds(((i * 7919) % 86400) * 1000000 // 10 * 10) END AS timestamp,
          CASE WHEN i % 3 = 0 THEN 'busy' WHEN i % 211 = 0 THEN NULL WHEN i % 13 = 0 THEN 'o''hara' ELSE 'p' || (i % 11)::VARCHAR END AS project,
          i AS n
        FROM range(3000) t(i)`);
    });
    afterAll(async () => close());

    it('the slices in order, each sorted, are the rows sorted at once: each row once, in the same order', async () => {
      // The gateway's project column and the edge-function log's (`project_ref`).
      for (const [relation, column] of [
        ['SELECT * FROM rows', 'project'],
        ['SELECT * EXCLUDE (project), project AS project_ref FROM rows', 'project_ref'],
      ] as const) {
        const cells = await mergeCells(connection, relation, 'true', column);
        expect(cells.reduce((n, c) => n + c.rows, 0)).toBe(3000);
        const order = `ORDER BY ${column}, timestamp DESC, id, n`;
        const whole = (await connection.runAndReadAll(`SELECT n FROM (${relation}) ${order}`)).getRowObjects().map((r) => Number(r.n));
        for (const maxRows of [1, 50, 300, 999, 2999]) {
          const slices = mergeSlices(cells, column, maxRows);
          expect(slices.length).toBeGreaterThan(1);
          const sliced: number[] = [];
          for (const slice of slices) {
            const rows = (await connection.runAndReadAll(`SELECT n FROM (${relation}) WHERE ${slice} ${order}`)).getRowObjects().map((r) => Number(r.n));
            // Within the bound, but where one project's minute alone is more.
            const largestCell = Math.max(...cells.map((c) => c.rows));
            expect(rows.length).toBeLessThanOrEqual(Math.max(maxRows, largestCell));
            sliced.push(...rows);
          }
          expect(sliced).toEqual(whole);
        }
      }
    });

    it("cuts one project's hour by minutes: a self-hosted stack sends everything as one project", async () => {
      // 6,000 rows of one project within one hour, 0.6 s apart.
      const relation = "SELECT 'default' AS project, TIMESTAMP '2026-11-21 10:00:00' + to_microseconds(i * 600000) AS timestamp FROM range(6000) t(i)";
      const cells = await mergeCells(connection, relation, 'true', 'project');
      expect(cells).toHaveLength(60);
      const slices = mergeSlices(cells, 'project', 1000);
      expect(slices).toHaveLength(6);
      for (const slice of slices) {
        const [count] = (await connection.runAndReadAll(`SELECT count(*) AS n FROM (${relation}) WHERE ${slice}`)).getRowObjects();
        expect(Number(count!.n)).toBe(1000);
      }
    });

    it('keeps every slice within the bound when no minute of a project is more', async () => {
      const cells = await mergeCells(connection, 'SELECT * FROM rows', 'true', 'project');
      const largestCell = Math.max(...cells.map((c) => c.rows));
      for (const slice of mergeSlices(cells, 'project', largestCell * 3)) {
        const [count] = (await connection.runAndReadAll(`SELECT count(*) AS n FROM rows WHERE ${slice}`)).getRowObjects();
        expect(Number(count!.n)).toBeLessThanOrEqual(largestCell * 3);
      }
    });
  });
});
