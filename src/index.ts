// The public surface of log-endpoints. Everything a user imports from 'log-endpoints' is here.
export { createEndpoints } from './create-endpoints';
export type {
  CacheStatus,
  Endpoints,
  EndpointsOptions,
  EndpointsStats,
  EndpointTypes,
  QueryResult,
} from './create-endpoints';
export { EngineError, InvalidParameterError, LogEndpointsError, NotFoundError } from './errors';
export type { ErrorCode } from './errors';
export type { EndpointDescription } from './definitions/describe';
export type { CachePolicy, ColumnSpec, ColumnType, EndpointName, ParamSpec } from './definitions/definition';
export type {
  FunctionsInvocationStatsParams,
  FunctionsInvocationStatsRow,
  InvocationInterval,
} from './definitions/functions-invocation-stats';
export type { LogsAllParams, LogsAllRow, ProjectTier } from './definitions/logs-all';
export type { UsageApiCountsParams, UsageApiCountsRow, UsageInterval } from './definitions/usage-api-counts';
export type { Row } from './rows/shape-rows';
export type {
  Engine,
  EngineParam,
  EngineRequest,
  EngineResult,
  EngineValue,
  QueryName,
  SourceInspection,
  SourceName,
} from './engine/engine';
export type { SourceGlobs } from './engine/duckdb/duckdb-engine';
