import { findDefinition } from '../../src/definitions/registry';
import { normalizeParams } from '../../src/definitions/params';
import { planQuery } from '../../src/definitions/plan-query';
import type { EngineParam } from '../../src/engine/engine';
import { formatIsoMicros } from '../../src/time/iso';
import type { BenchCase } from '../cases';
import { REFERENCE } from '../dataset';
import type { AnswerRow } from './peer';
import { expertUrlFilter } from './url-filter';

/**
 * The layout a ClickHouse expert gives these logs: MergeTree ordered by project and timestamp,
 * partitioned by day, the fields the queries use as typed columns, `metadata` kept as its text.
 */
export const EXPERT_TABLES = {
  edge: `CREATE TABLE IF NOT EXISTS edge_logs (
    id Nullable(String), timestamp DateTime64(6, 'UTC'), event_message Nullable(String),
    project LowCardinality(String), metadata String, request_path Nullable(String), request_url Nullable(String)
  ) ENGINE = MergeTree PARTITION BY toDate(timestamp) ORDER BY (project, timestamp)`,
  functions: `CREATE TABLE IF NOT EXISTS function_edge_logs (
    id Nullable(String), timestamp DateTime64(6, 'UTC'), event_message Nullable(String), metadata String,
    project_ref LowCardinality(String), function_id LowCardinality(Nullable(String)),
    execution_time_ms Nullable(Float64), status_code Nullable(Int32)
  ) ENGINE = MergeTree PARTITION BY toDate(timestamp) ORDER BY (project_ref, timestamp)`,
} as const;

/** The Parquet columns as each table takes them (events without a project keep an empty one). */
export const EXPERT_LOADS = {
  edge: {
    table: 'edge_logs',
    schema: `id Nullable(String), timestamp Nullable(DateTime64(6, 'UTC')), event_message Nullable(String), project Nullable(String), metadata Nullable(String), request_path Nullable(String), request_url Nullable(String)`,
    select: `id, assumeNotNull(timestamp), event_message, coalesce(project, ''), coalesce(metadata, ''), request_path, request_url`,
  },
  functions: {
    table: 'function_edge_logs',
    schema: `id Nullable(String), timestamp Nullable(DateTime64(6, 'UTC')), event_message Nullable(String), metadata Nullable(String), project_ref Nullable(String), function_id Nullable(String), execution_time_ms Nullable(Float64), status_code Nullable(Int32)`,
    select: `id, assumeNotNull(timestamp), event_message, coalesce(metadata, ''), coalesce(project_ref, ''), function_id, execution_time_ms, status_code`,
  },
} as const;

const BUCKET: Record<string, string> = {
  second: 'toStartOfSecond(timestamp)',
  minute: 'toStartOfMinute(timestamp)',
  hour: 'toStartOfHour(timestamp)',
  day: 'toStartOfDay(timestamp)',
};

/** One case as ClickHouse SQL with `{name:Type}` parameters, and how its rows become the library's. */
export interface ExpertQuery {
  sql: string;
  params: Record<string, string | number>;
  shape: (row: Record<string, unknown>) => AnswerRow;
}

/** The library's own plan of the case (windows, bounds): the peer answers the same question. */
export function planOf(c: BenchCase): Readonly<Record<string, EngineParam>> {
  const definition = findDefinition(c.endpoint);
  return planQuery(definition, normalizeParams(definition, c.params), REFERENCE).params;
}

const micros = (p: EngineParam) => (p !== null && typeof p === 'object' ? p.timestamp : 0n);
/** A DateTime64(6) parameter value: `YYYY-MM-DD hh:mm:ss.ffffff` (UTC). */
const chTime = (p: EngineParam) => formatIsoMicros(micros(p)).replace('T', ' ').replace('Z', '');
const iso = (v: unknown) => formatIsoMicros(BigInt(String(v)));
const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

/**
 * What an expert writes per case: the project filter on the sort key, the window on the
 * timestamp, `quantiles` (inside the contract's rank bound, checked before timing), `position` or
 * `match` for the URL pattern by its kind (`expertUrlFilter`), and logs.all in two
 * phases: the 100th-newest timestamp first (only the key columns), then the wide rows from there.
 */
export function expertQuery(c: BenchCase): ExpertQuery {
  const p = planOf(c);
  if (c.endpoint === 'functions.invocation-stats') {
    return {
      sql: `
        SELECT toUnixTimestamp(${BUCKET[String(p.unit)]}) AS bucket,
               min(execution_time_ms) AS min_execution_time, max(execution_time_ms) AS max_execution_time,
               avg(execution_time_ms) AS avg_execution_time, quantiles(0.95, 0.99)(execution_time_ms) AS q,
               count() AS count, countIf(status_code >= 400) AS error_count
        FROM function_edge_logs
        WHERE project_ref = {project:String}${p.function_id === null ? '' : ' AND function_id = {function_id:String}'}
          AND timestamp >= {first:DateTime64(6, 'UTC')} AND timestamp < {end:DateTime64(6, 'UTC')}
        GROUP BY bucket ORDER BY bucket LIMIT {max_rows:UInt32}`,
      params: { project: String(p.project), ...(p.function_id === null ? {} : { function_id: String(p.function_id) }), first: chTime(p.first!), end: chTime(p.end!), max_rows: Number(p.max_rows) },
      shape: (r) => {
        const q = r.q as Array<number | null>;
        return {
          timestamp: iso(BigInt(String(r.bucket)) * 1_000_000n),
          min_execution_time: num(r.min_execution_time),
          max_execution_time: num(r.max_execution_time),
          avg_execution_time: num(r.avg_execution_time),
          p95_execution_time: num(q[0]),
          p99_execution_time: num(q[1]),
          count: Number(r.count),
          error_count: Number(r.error_count),
        };
      },
    };
  }
  if (c.endpoint === 'usage.api-counts') {
    const bound: Record<string, string> = {};
    const filter = expertUrlFilter(String(p.project), (text, name) => {
      bound[name] = text;
      return `{${name}:String}`;
    });
    return {
      sql: `
        SELECT toUnixTimestamp(${BUCKET[String(p.unit)]}) AS bucket,
               countIf(position(request_path, '/rest') > 0) AS total_rest_requests,
               countIf(position(request_path, '/storage') > 0) AS total_storage_requests,
               countIf(position(request_path, '/auth') > 0) AS total_auth_requests,
               countIf(position(request_path, '/realtime') > 0) AS total_realtime_requests
        FROM edge_logs
        WHERE timestamp >= {start:DateTime64(6, 'UTC')} AND ${filter}
        GROUP BY bucket ORDER BY bucket LIMIT {max_rows:UInt32}`,
      params: { ...bound, start: chTime(p.start!), max_rows: Number(p.max_rows) },
      shape: (r) => ({
        timestamp: iso(BigInt(String(r.bucket)) * 1_000_000n),
        total_rest_requests: Number(r.total_rest_requests),
        total_storage_requests: Number(r.total_storage_requests),
        total_auth_requests: Number(r.total_auth_requests),
        total_realtime_requests: Number(r.total_realtime_requests),
      }),
    };
  }
  if (c.endpoint === 'logs.all') {
    const window = `project = {project:String} AND timestamp > {after:DateTime64(6, 'UTC')}${p.until === null ? '' : " AND timestamp <= {until:DateTime64(6, 'UTC')}"}`;
    return {
      sql: `
        WITH (SELECT min(timestamp) FROM (
          SELECT timestamp FROM edge_logs WHERE ${window} ORDER BY timestamp DESC LIMIT {limit:UInt32}
        )) AS bound
        SELECT id, toUnixTimestamp64Micro(timestamp) AS ts, event_message, metadata
        FROM edge_logs
        WHERE ${window} AND timestamp >= bound
        ORDER BY timestamp DESC, id ASC
        LIMIT {limit:UInt32}`,
      params: { project: String(p.project), after: chTime(p.after!), ...(p.until === null ? {} : { until: chTime(p.until!) }), limit: Number(p.limit) },
      shape: (r) => ({
        id: r.id ?? null,
        timestamp: iso(r.ts),
        event_message: r.event_message ?? null,
        metadata: r.metadata === '' || r.metadata === null ? null : JSON.parse(String(r.metadata)),
      }),
    };
  }
  throw new Error(`no expert SQL for ${c.endpoint}`);
}
