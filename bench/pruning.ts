import { DuckDBInstance } from '@duckdb/node-api';
import type { SourceGlobs } from '../src/index';
import { planQuery } from '../src/definitions/plan-query';
import { normalizeParams } from '../src/definitions/params';
import { findDefinition } from '../src/definitions/registry';
import { bindRequest } from '../src/engine/duckdb/bind-request';
import { fullQuerySql } from '../src/engine/duckdb/statement-sql';
import { compiledStatement, sourcesReadBy } from '../src/query/statement-reads';
import { BUILT_IN_SOURCE_SET } from '../src/sources/built-ins';
import { earliestDayOf, parquetFilesOf } from '../src/engine/duckdb/list-files';
import { parquetSchema } from '../src/duckdb/parquet-schema';
import type { BenchCase } from './cases';
import { REFERENCE } from './dataset';

/**
 * EXPLAIN ANALYZE of the library's own SQL for a case on the compacted Parquet: how many rows
 * the Parquet scan produced against how many the files hold, i.e. how much the day partitions
 * and the row-group statistics (sorted by project, then time) let DuckDB skip.
 */
export async function scannedRows(sources: SourceGlobs, c: BenchCase): Promise<{ scanned: number; total: number; files: number; allFiles: number }> {
  const definition = findDefinition(c.endpoint);
  const request = planQuery(definition, normalizeParams(definition, c.params), REFERENCE);
  const source = sourcesReadBy(definition.sql.duckdb, BUILT_IN_SOURCE_SET)[0]!;
  const globs = sources[source.name];
  const list = typeof globs === 'string' ? [globs] : [...(globs ?? [])];
  const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
  const connection = await instance.connect();
  try {
    await connection.run("SET TimeZone = 'UTC'");
    const earliestDay = earliestDayOf(request.notBefore);
    const all = { parquet: await parquetFilesOf(list) };
    const parquet = await parquetFilesOf(list, earliestDay);
    const sql = fullQuerySql(compiledStatement(definition.sql.duckdb, BUILT_IN_SOURCE_SET), new Map([[source, { ndjson: [], parquet, parquetTypes: await parquetSchema(connection, parquet) }]]));
    const prepared = await connection.prepare(`EXPLAIN ANALYZE ${sql}`);
    bindRequest(prepared, request);
    const plan = String((await prepared.runAndReadAll()).getRows()[0]?.[1] ?? '');
    const total = Number(
      (await connection.runAndReadAll(`SELECT sum(num_rows) AS n FROM parquet_file_metadata([${all.parquet.map((f) => `'${f.replaceAll("'", "''")}'`).join(', ')}])`)).getRowObjects()[0]?.n ?? 0,
    );
    return { scanned: readParquetRows(plan), total, files: parquet.length, allFiles: all.parquet.length };
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** Rows out of the READ_PARQUET operators of a rendered EXPLAIN ANALYZE plan (DuckDB's box layout). */
function readParquetRows(plan: string): number {
  const lines = plan.split('\n');
  let total = 0;
  lines.forEach((line, i) => {
    // Each scan's box is headed TABLE_SCAN (READ_PARQUET is its function, in the same box).
    if (!line.includes('TABLE_SCAN')) return;
    const column = line.indexOf('TABLE_SCAN');
    for (let j = i + 1; j < lines.length; j++) {
      const box = lines[j]!.slice(Math.max(0, column - 14), column + 28);
      const m = /([\d,]+) [Rr]ows/.exec(box);
      if (m) {
        total += Number(m[1]!.replaceAll(',', ''));
        break;
      }
      if (box.includes('└')) break;
    }
  });
  return total;
}
