// The public surface of log-endpoints. Everything a user imports from 'log-endpoints' is here.
export { createEndpoints } from './api/create-endpoints';
// Endpoints and sources as definitions (docs/definitions.md): the built-ins are made the same way.
export { defineEndpoint } from './definitions/define-endpoint';
export type { EndpointConfig } from './definitions/define-endpoint';
export { p } from './definitions/params';
export type { AnyParam, Param, ParamFormat, ParamInput, ParamsOf } from './definitions/params';
export type { ColumnDeclaration, RowOf } from './definitions/columns';
export type { MethodName } from './definitions/method-name';
export type {
  AnyEndpointDefinition,
  BindContext,
  BindValue,
  BucketSeries,
  CallParams,
  DefinitionParams,
  DefinitionRow,
  EndpointDefinition,
  IgnoredParams,
} from './definitions/definition';
export { functionsInvocationStats, logsAll, usageApiCounts } from './definitions/registry';
export { defineSource } from './sources/source-descriptor';
export type { ParquetCompression, SourceCliNames, SourceColumn, SourceColumnDeclaration, SourceConfig, SourceDescriptor, SourceRollup } from './sources/source-descriptor';
export { edgeLogs, functionEdgeLogs } from './sources/built-ins';
// Self-hosted Supabase (docs/supabase.md): its sources, and the options that answer Studio as Logflare does.
export { supabasePreset } from './api/supabase-preset';
export {
  authLogs,
  functionLogs,
  pgbouncerLogs,
  postgresLogs,
  postgrestLogs,
  realtimeLogs,
  storageLogs,
  SUPABASE_SOURCES,
} from './sources/supabase/supabase-sources';
export type { CallerDialect } from './sandbox/validate-caller-sql';
export type { WireFormat } from './rows/logflare-wire';
export type {
  CacheStatus,
  EndpointMethods,
  Endpoints,
  EndpointsCore,
  EndpointsIgnoring,
  EndpointsOptions,
  EndpointsStats,
  EndpointsWarning,
  EndpointTypes,
  HealthReport,
  QueryResult,
  // `ep.query(name, params, { format: 'arrow' })` adds an apache-arrow Table of the rows.
  QueryOptions,
  ArrowQueryResult,
  ManagedStorageInfo,
  RawParams,
} from './api/create-endpoints';
// Managed storage and ingest (docs/ingest.md): `createEndpoints({ storage })`, `ep.ingest(source, events)`.
export type { ClickHouseShipping, StorageOptions } from './managed/storage-options';
// `storage.clickhouse` also takes a loader (`clickhouseLoader` of 'log-endpoints/clickhouse' is one).
export type { ShipTarget } from './managed/clickhouse-shipper';
export type { IngestResult } from './managed/ingestor';
export type { IngestSourceName } from './ingest/source-names';
export { LOGFLARE_SOURCE_NAMES } from './ingest/source-names';
// Log drains (docs/supabase.md, "Log Drains"): kept drains and rules, events forwarded once durable.
export { openDrains } from './drains/open-drains';
export { DrainLog, DEFAULT_DRAIN_BACKLOG_BYTES } from './drains/drain-log';
export type { SegmentKeeper, KeptLog } from './managed/segment-keeper';
export type { Drains, DrainsOptions } from './drains/open-drains';
export type { DrainStats } from './drains/forwarder';
export {
  EngineError,
  InvalidBodyError,
  InvalidOptionError,
  InvalidParameterError,
  InvalidSqlError,
  LogEndpointsError,
  NotFoundError,
  PayloadTooLargeError,
} from './errors';
export type { ErrorCode, SandboxRule } from './errors';
// Managed storage's data dir written by another live process (code data_dir_locked).
export { DataDirLockedError } from './dataset/data-dir-lock';
export type { EndpointDescription } from './definitions/describe';
export type { Catalog, CatalogOptions, CatalogProject } from './definitions/catalog';
export type { CachePolicy, ColumnSpec, ColumnType, ParamSpec } from './definitions/definition';
export type { EndpointName } from './definitions/registry';
export type {
  FunctionsInvocationStatsParams,
  FunctionsInvocationStatsRow,
  InvocationInterval,
} from './definitions/functions-invocation-stats';
export type { LogsAllParams, LogsAllRow, ProjectTier } from './definitions/logs-all';
export type { UsageApiCountsParams, UsageApiCountsRow, UsageInterval } from './definitions/usage-api-counts';
export type { Row } from './rows/shape-rows';
// The result cache: `memoryCache` is the default store; `redisCache` is in 'log-endpoints/redis'.
export { memoryCache } from './cache/memory-cache';
export type { MemoryCache, MemoryCacheOptions } from './cache/memory-cache';
export type { CacheEntry, CacheLock, ResultCache } from './cache/result-cache';
export type { CacheCounters } from './cache/cache-layer';
export type { CachePolicyOverrides } from './cache/cache-policy';
export type { CacheScheduler } from './util/scheduler';
export type { CacheClock } from './cache/real-clock';
export type {
  Engine,
  EngineParam,
  CompiledQuery,
  CompiledStatement,
  NewestFirst,
  EngineTarget,
  QueryPlan,
  SourceRead,
  EngineResult,
  EngineValue,
  QueryName,
  EndpointQueryName,
  CatalogQueryName,
  SourceInspection,
  SourceName,
} from './engine/engine';
export type { SourceGlobs } from './engine/duckdb/duckdb-engine';
export { compactLogs } from './compaction/compact';
export { checkDataDir } from './managed/check-data-dir';
export type { DataDirProblem, DataDirReport } from './managed/check-data-dir';
export type { CompactOptions, CompactResult, CompactStage } from './compaction/compact';
export type { SkippedFile, SkipReason } from './files/file-checks';
