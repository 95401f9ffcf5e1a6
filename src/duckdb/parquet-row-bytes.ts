import type { DuckDBConnection } from '@duckdb/node-api';
import { sqlStringList } from './sql-literal';

/**
 * The bytes a row of these Parquet files takes uncompressed (every column chunk's
 * `total_uncompressed_size` over the rows), from their footers only; undefined for no rows. What
 * a write from them sizes its row groups by (`rowGroupRowsOf`): the rows' width is known before
 * the COPY buffers a group of them.
 *
 * @example
 * await parquetRowBytes(connection, ['staging/rows.parquet']); // 637.2
 */
export async function parquetRowBytes(connection: DuckDBConnection, files: readonly string[]): Promise<number | undefined> {
  if (files.length === 0) return undefined;
  const list = sqlStringList(files);
  const [row] = (
    await connection.runAndReadAll(`
      SELECT (SELECT sum(total_uncompressed_size) FROM parquet_metadata(${list})) AS bytes,
             (SELECT sum(num_rows) FROM parquet_file_metadata(${list})) AS rows`)
  ).getRowObjects();
  const rows = Number(row?.rows ?? 0);
  return rows > 0 ? Number(row?.bytes ?? 0) / rows : undefined;
}
