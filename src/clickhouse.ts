// The `log-endpoints/clickhouse` entry: the ClickHouse engine and loader. It needs the optional
// peer dependency `@clickhouse/client`.
export { clickhouseEngine } from './engine/clickhouse/clickhouse-engine';
export type { ClickHouseEngineOptions } from './engine/clickhouse/clickhouse-engine';
export { clickhouseLoader, ClickHouseLoader } from './engine/clickhouse/clickhouse-loader';
export type { ClickHouseLoaderOptions, LoadedFile, LoadProgress, LoadResult, SegmentRows } from './engine/clickhouse/clickhouse-loader';
export { schemaStatements } from './engine/clickhouse/schema';
export type { SchemaOptions } from './engine/clickhouse/schema';
export type { ClickHouseTables, ClickHouseTarget } from './engine/clickhouse/options';
