import type { EngineParam } from '../../src/engine/engine';
import { formatIsoMicros } from '../../src/time/iso';
import type { BenchCase } from '../cases';
import { planOf } from './clickhouse-expert';
import type { AnswerRow } from './peer';
import { expertUrlFilter } from './url-filter';

/**
 * The expert layout on ClickHouse 18.16, database `expert`: MergeTree ordered by project and
 * timestamp, a partition per UTC day. 18.16 has no DateTime64, so an expert who wants the
 * microseconds keeps them in an Int64 (the sort key then orders by it as by time); no
 * LowCardinality (experimental in 18.16).
 */
export const EXPERT_18_TABLES = {
  edge: `CREATE TABLE IF NOT EXISTS expert.edge_logs (
    id Nullable(String), timestamp Int64, event_message Nullable(String), project String, metadata String,
    request_path Nullable(String), request_url Nullable(String)
  ) ENGINE = MergeTree PARTITION BY toDate(toDateTime(intDiv(timestamp, 1000000))) ORDER BY (project, timestamp)`,
  functions: `CREATE TABLE IF NOT EXISTS expert.function_edge_logs (
    id Nullable(String), timestamp Int64, event_message Nullable(String), metadata String, project_ref String,
    function_id Nullable(String), execution_time_ms Nullable(Float64), status_code Nullable(Int32)
  ) ENGINE = MergeTree PARTITION BY toDate(toDateTime(intDiv(timestamp, 1000000))) ORDER BY (project_ref, timestamp)`,
} as const;

/** The same events, copied on the server from the tables the library's loader filled (`from`). */
export const EXPERT_18_FILLS = {
  edge: (from: string) => `INSERT INTO expert.edge_logs SELECT id, timestamp, event_message, project, ifNull(metadata, ''), request_path, request_url FROM ${from}.edge_logs`,
  functions: (from: string) =>
    `INSERT INTO expert.function_edge_logs SELECT id, timestamp, event_message, ifNull(metadata, ''), project_ref, function_id, execution_time_ms, status_code FROM ${from}.function_edge_logs`,
} as const;

const UNIT_MICROS: Record<string, number> = { second: 1e6, minute: 60e6, hour: 3600e6, day: 86_400e6 };

/** A string literal: 18.16 binds no `{name:Type}` parameters, so an expert writes the values (ours, not users'). */
const text = (value: unknown) => `'${String(value).replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
const micros = (p: EngineParam | undefined) => (p !== null && typeof p === 'object' ? String(p.timestamp) : 'NULL');
const iso = (v: unknown) => formatIsoMicros(BigInt(String(v)));
const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

/** One case in 18.16's SQL (a statement, or logs.all's two), and how its rows become the library's. */
export interface Expert18Query {
  /** The statements in order; a later one may use `{bound}`, the first value of the one before. */
  statements: string[];
  shape: (row: Record<string, unknown>) => AnswerRow;
}

/**
 * What an expert writes per case on 18.16: the project filter on the sort key, the window on the
 * timestamp, buckets by integer division, `quantiles` for p95/p99 (sampled, inside the rank
 * bound; checked before timing), `position` or `match` for the URL pattern by its kind (`expertUrlFilter`), and logs.all in two phases (two
 * requests): the 100th-newest timestamp from the key columns, then the wide rows from there.
 */
export function expert18Query(c: BenchCase): Expert18Query {
  const p = planOf(c);
  if (c.endpoint === 'functions.invocation-stats') {
    const unit = UNIT_MICROS[String(p.unit)]!;
    return {
      statements: [
        `
        SELECT intDiv(timestamp, ${unit}) * ${unit} AS bucket,
               min(execution_time_ms) AS min_execution_time, max(execution_time_ms) AS max_execution_time,
               avg(execution_time_ms) AS avg_execution_time, quantiles(0.95, 0.99)(execution_time_ms) AS q,
               count() AS count, countIf(ifNull(status_code >= 400, 0)) AS error_count
        FROM expert.function_edge_logs
        WHERE project_ref = ${text(p.project)}${p.function_id === null ? '' : ` AND function_id = ${text(p.function_id)}`}
          AND timestamp >= ${micros(p.first)} AND timestamp < ${micros(p.end)}
        GROUP BY bucket ORDER BY bucket LIMIT ${Number(p.max_rows)}`,
      ],
      shape: (r) => {
        const q = r.q as Array<number | null>;
        return {
          timestamp: iso(r.bucket),
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
    const unit = UNIT_MICROS[String(p.unit)]!;
    const has = (part: string) => `countIf(ifNull(position(request_path, '${part}') > 0, 0))`;
    return {
      statements: [
        `
        SELECT intDiv(timestamp, ${unit}) * ${unit} AS bucket,
               ${has('/rest')} AS total_rest_requests, ${has('/storage')} AS total_storage_requests,
               ${has('/auth')} AS total_auth_requests, ${has('/realtime')} AS total_realtime_requests
        FROM expert.edge_logs
        WHERE timestamp >= ${micros(p.start)} AND ${expertUrlFilter(String(p.project), (value) => text(value))}
        GROUP BY bucket ORDER BY bucket LIMIT ${Number(p.max_rows)}`,
      ],
      shape: (r) => ({
        timestamp: iso(r.bucket),
        total_rest_requests: Number(r.total_rest_requests),
        total_storage_requests: Number(r.total_storage_requests),
        total_auth_requests: Number(r.total_auth_requests),
        total_realtime_requests: Number(r.total_realtime_requests),
      }),
    };
  }
  if (c.endpoint === 'logs.all') {
    const window = `project = ${text(p.project)} AND timestamp > ${micros(p.after)}${p.until === null ? '' : ` AND timestamp <= ${micros(p.until)}`}`;
    const limit = Number(p.limit);
    return {
      statements: [
        `SELECT min(timestamp) AS bound FROM (SELECT timestamp FROM expert.edge_logs WHERE ${window} ORDER BY timestamp DESC LIMIT ${limit})`,
        `SELECT id, timestamp AS ts, event_message, metadata FROM expert.edge_logs
         WHERE ${window} AND timestamp >= {bound}
         ORDER BY timestamp DESC, id ASC LIMIT ${limit}`,
      ],
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
