import type { DuckDBConnection } from '@duckdb/node-api';
import type { SourceDescriptor } from '../../sources/source-descriptor';
import { parquetSchema } from '../../duckdb/parquet-schema';
import { sourceRelation, type SourceFiles } from '../../duckdb/source-relations';
import { tableColumns } from './schema';

/**
 * The SQL that reads one log file into the columns of our ClickHouse table, through the DuckDB
 * engine's own source relation: timestamps, flat fields and `metadata` are exactly what the
 * DuckDB engine would see in that file. `timestamp` comes out as bigint microseconds (NULL when
 * the line is broken or its timestamp unreadable: such rows are skipped by the caller).
 */
export async function logFileSelect(connection: DuckDBConnection, source: SourceDescriptor, file: string, kind: 'ndjson' | 'parquet'): Promise<string> {
  const files: SourceFiles = kind === 'ndjson' ? { ndjson: [file], parquet: [], parquetTypes: new Map() } : { ndjson: [], parquet: [file], parquetTypes: await parquetSchema(connection, [file]) };
  const columns = tableColumns(source).map(({ name, encoding }) => {
    if (name === 'timestamp') return 'epoch_us(timestamp) AS timestamp';
    // The sorting key cannot be Nullable; no project matches '' (the parameter is required).
    if (encoding === 'string') return `coalesce(${name}, '') AS ${name}`;
    if (name === 'metadata') return 'CAST(metadata AS VARCHAR) AS metadata';
    return name;
  });
  return `SELECT ${columns.join(', ')} FROM (\n${sourceRelation(source, files)}\n) AS events`;
}
