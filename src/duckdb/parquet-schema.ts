import type { DuckDBConnection } from '@duckdb/node-api';
import { sqlStringList } from './sql-literal';

/** Column name -> DuckDB type of Parquet files read together (union by name); footers only. */
export async function parquetSchema(connection: DuckDBConnection, files: readonly string[]): Promise<Map<string, string>> {
  const reader = await connection.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${sqlStringList(files)}, union_by_name = true)`);
  const types = new Map<string, string>();
  for (const row of reader.getRowObjects()) types.set(String(row.column_name), String(row.column_type));
  return types;
}
