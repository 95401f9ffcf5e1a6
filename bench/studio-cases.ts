import { HOUR, isoMillis, microsOf } from '../test/support/supabase/instants';
import { singleLogRequest, studioRequests, type StudioRequest } from '../test/support/supabase/studio-requests';
import type { LogTable } from '../test/support/supabase/vector-sources';
import { REFERENCE } from './dataset';
import { weekId, type StudioData } from './studio-data';
import { logflareCte } from './studio-logflare';
import { chdbField, type ChdbColumn } from './studio-chdb-fields';

/**
 * The Studio requests the bench times (bench/studio.ts), each with what the two peers run for it:
 * - `postgres`: what Logflare's BigQuery→Postgres translation (lib/logflare/sql/dialect_translation.ex,
 *   `translate_bq_to_pg`) makes of logs.all's CTE with Studio's SQL in place of its final SELECT,
 *   written out by hand (bench/studio-logflare.ts says which rule each part comes from);
 * - `clickhouse`: the same question written for ClickHouse by hand, over one MergeTree table per
 *   feed ordered by time (bench/studio-chdb.ts), each nested field read through `chdbField`: from
 *   its MATERIALIZED column where the Supabase descriptor declares it typed, else from the JSON.
 * Parameters of the ClickHouse SQL are bound (`{name:Type}`); Logflare's are positional text.
 */

/** How answers are compared: what must be equal for the engines to have answered the same. */
export type AnswerShape =
  /** Rows newest first: the same timestamps in order, and the same ids except among the rows tied at the last timestamp (a `limit` may cut a tie anywhere). */
  | 'rows'
  /** One row with a `count`. */
  | 'count'
  /** Buckets (`timestamp`) with ok/error/warning counts, compared per bucket after summing rows of the same bucket. */
  | 'buckets'
  /** Groups ordered by a count (`countColumn`) with a limit: the same counts, and the same groups above the smallest count. */
  | 'top';

export interface StudioCase {
  /** What the row of the table says. */
  kind: string;
  request: StudioRequest;
  shape: AnswerShape;
  /** The group columns of a `top` answer, and its count column. */
  groupBy?: readonly string[];
  countColumn?: string;
  postgres: { sql: string; params: unknown[] };
  /** With the MATERIALIZED columns it reads (chdb is given them before it is asked). */
  clickhouse: { sql: string; params: Record<string, unknown>; columns: readonly ChdbColumn[] };
}

const NOW = microsOf(REFERENCE);

function named(name: string): StudioRequest {
  const found = studioRequests(REFERENCE).find((r) => r.name === name);
  if (!found) throw new Error(`bench/studio-cases.ts: Studio has no request named ${JSON.stringify(name)}`);
  return found;
}

/** ClickHouse's bounds of a request: Studio's range; with the Supabase preset logs.all has no tier window, so no start is no lower bound. */
function bounds(r: Pick<StudioRequest, 'iso_timestamp_start' | 'iso_timestamp_end'>): { start: string; end: string } {
  const start = r.iso_timestamp_start ? r.iso_timestamp_start : isoMillis(0);
  const end = r.iso_timestamp_end ? r.iso_timestamp_end : isoMillis(NOW + HOUR);
  return { start: start.replace('T', ' ').replace('Z', ''), end: end.replace('T', ' ').replace('Z', '') };
}

/** `WHERE` of every ClickHouse query: Studio's range (lower bound exclusive, upper inclusive, as logs.all's). */
export const RANGE = "timestamp > toDateTime64({start:String}, 6, 'UTC') AND timestamp <= toDateTime64({end:String}, 6, 'UTC')";
// Named `micros`, not `timestamp`: ClickHouse would read an alias `timestamp` in WHERE and ORDER BY
// instead of the column (bench/studio-chdb.ts names it back).
const MICROS = 'toUnixTimestamp64Micro(timestamp)';

/** Logflare's positional parameters of logs.all's CTE: `@project`, then each bound twice (COALESCE and the comparison). */
function cteParams(r: StudioRequest): unknown[] {
  return ['default', r.iso_timestamp_start, r.iso_timestamp_start, r.iso_timestamp_end, r.iso_timestamp_end];
}

function pg(table: LogTable, r: StudioRequest, outer: string): { sql: string; params: unknown[] } {
  return { sql: `WITH ${logflareCte(table)}\n${outer}`, params: cteParams(r) };
}

/** A ClickHouse query of a request: its SQL (with `RANGE` in its WHERE) and the range's bound values. */
export function ch(r: Pick<StudioRequest, 'iso_timestamp_start' | 'iso_timestamp_end'>, sql: string, extra: Record<string, unknown> = {}): { sql: string; params: Record<string, unknown> } {
  return { sql, params: { ...bounds(r), ...extra } };
}

/** A field of `metadata` in `build`'s SQL: its path and its ClickHouse type. */
type Field = (path: string, type: string) => string;

/** `ch` of the SQL `build` writes over `table`, each nested field read through `chdbField`, with the columns it reads. */
function chOver(r: Pick<StudioRequest, 'iso_timestamp_start' | 'iso_timestamp_end'>, table: LogTable, build: (field: Field) => string, extra: Record<string, unknown> = {}): StudioCase['clickhouse'] {
  const columns: ChdbColumn[] = [];
  const sql = build((path, type) => {
    const read = chdbField(table, path, type);
    if (read.column) columns.push(read.column);
    return read.sql;
  });
  return { ...ch(r, sql, extra), columns };
}
const STATUS: Parameters<Field> = ['response.status_code', 'Nullable(Int64)'];
const SEVERITY: Parameters<Field> = ['parsed.error_severity', 'Nullable(String)'];
const text = (path: string): Parameters<Field> => [path, 'Nullable(String)'];

/** The cases over the week `data` holds: the single log is an edge event of the middle of the last day (within logs.all's 1-day window, found by id). */
export function studioCasesOf(data: StudioData): StudioCase[] {
  return studioCases(weekId('edge_logs', Math.floor(data.counts.edge_logs * (1 - 0.5 / 7))));
}

/**
 * The cases: per kind of Studio request, the API Gateway's (the busiest feed) and where it differs
 * in shape, Postgres's; `singleId` is an event of the last day's edge_logs (one the data holds).
 */
export function studioCases(singleId: string): StudioCase[] {
  const edgeList = named('API Gateway: list, last hour');
  const pgList = named('Postgres: list, last hour');
  const count = named('API Gateway: new-logs count, since a refresh 5 minutes ago, filtered');
  const minuteChart = named('API Gateway: chart by minute, last hour');
  const hourChart = named('Postgres: chart by hour, last 24 hours');
  const single = { ...singleLogRequest('edge_logs', singleId, { label: 'no range', start: '', end: '' }), name: 'edge_logs: single log, no range' };
  const topPaths = named('Explorer: template Top Paths, last hour');
  const errorsByUser = named('Explorer: template Error Count by User, last hour');
  const status = "(metadata #>> '{response,status_code}')";
  const tStatus = "((t.metadata #>> '{response,status_code}')::jsonb #>> '{}')::numeric";
  const tSeverity = "(t.metadata #>> '{parsed,error_severity}')";
  // timestamp_trunc of a CTE's timestamp (test "special handling of timestamp field and date_trunc").
  const trunc = (unit: string) => `date_trunc('${unit}', (to_timestamp(t.timestamp::bigint / 1000000.0) AT TIME ZONE 'UTC'))`;
  // A CTE's timestamp compared with an ISO string (test "special handling of timestamp field for binary ops").
  const after = (iso: string) => `(to_timestamp(CAST(t.timestamp::TEXT AS BIGINT) / 1000000.0) AT TIME ZONE 'UTC') > '${iso}'`;
  const chartLower = (r: StudioRequest) => /t\.timestamp > '([^']+)'/.exec(r.sql)![1]!;
  // A chart's bucket as Studio's SQL truncates it (minute up to 12 hours, hour past it).
  const unitOf = (r: StudioRequest) => /timestamp_trunc\(t\.timestamp, (minute|hour)\)/.exec(r.sql)![1] as 'minute' | 'hour';
  const startOf = (r: StudioRequest) => (unitOf(r) === 'minute' ? 'toStartOfMinute' : 'toStartOfHour');
  const edgeChart = (r: StudioRequest, kind: string): StudioCase => ({
    kind,
    request: r,
    shape: 'buckets',
    // `GROUP BY timestamp` is left as Studio wrote it: Postgres resolves a GROUP BY name to the input
    // column first, so it groups by the event's own timestamp (rows per instant, not per bucket).
    postgres: pg(
      'edge_logs',
      r,
      `SELECT ${trunc(unitOf(r))} AS timestamp,\n  count(CASE WHEN NOT (${tStatus} >= 500 OR ${tStatus} >= 400 AND ${tStatus} < 500) THEN 1 END) AS ok_count,\n  count(CASE WHEN ${tStatus} >= 500 THEN 1 END) AS error_count,\n  count(CASE WHEN ${tStatus} >= 400 AND ${tStatus} < 500 THEN 1 END) AS warning_count\nFROM edge_logs t\nWHERE ${after(chartLower(r))}\nGROUP BY timestamp\nORDER BY timestamp ASC`,
    ),
    clickhouse: chOver(
      r,
      'edge_logs',
      (f) =>
        `SELECT toUnixTimestamp(${startOf(r)}(timestamp)) * 1000000 AS timestamp, countIf(NOT (ifNull(s >= 500, 0) OR ifNull(s >= 400 AND s < 500, 0))) AS ok_count, countIf(s >= 500) AS error_count, countIf(s >= 400 AND s < 500) AS warning_count FROM (SELECT timestamp, ${f(...STATUS)} AS s FROM edge_logs WHERE ${RANGE} AND timestamp > toDateTime64({lower:String}, 6, 'UTC')) GROUP BY timestamp ORDER BY timestamp ASC`,
      { lower: chartLower(r).replace('T', ' ').replace('Z', '') },
    ),
  });
  const pgChart = (r: StudioRequest, kind: string): StudioCase => ({
    kind,
    request: r,
    shape: 'buckets',
    postgres: pg(
      'postgres_logs',
      r,
      `SELECT ${trunc(unitOf(r))} AS timestamp,\n  count(CASE WHEN NOT (${tSeverity} IN ('ERROR', 'FATAL', 'PANIC') OR ${tSeverity} IN ('WARNING')) THEN 1 END) AS ok_count,\n  count(CASE WHEN ${tSeverity} IN ('ERROR', 'FATAL', 'PANIC') THEN 1 END) AS error_count,\n  count(CASE WHEN ${tSeverity} IN ('WARNING') THEN 1 END) AS warning_count\nFROM postgres_logs t\nWHERE ${after(chartLower(r))}\nGROUP BY timestamp\nORDER BY timestamp ASC`,
    ),
    clickhouse: chOver(
      r,
      'postgres_logs',
      (f) =>
        `SELECT toUnixTimestamp(${startOf(r)}(timestamp)) * 1000000 AS timestamp, countIf(NOT (ifNull(s IN ('ERROR', 'FATAL', 'PANIC'), 0) OR ifNull(s = 'WARNING', 0))) AS ok_count, countIf(s IN ('ERROR', 'FATAL', 'PANIC')) AS error_count, countIf(s = 'WARNING') AS warning_count FROM (SELECT timestamp, ${f(...SEVERITY)} AS s FROM postgres_logs WHERE ${RANGE} AND timestamp > toDateTime64({lower:String}, 6, 'UTC')) GROUP BY timestamp ORDER BY timestamp ASC`,
      { lower: chartLower(r).replace('T', ' ').replace('Z', '') },
    ),
  });
  const topPathsCase = (r: StudioRequest, kind: string): StudioCase => ({
    kind,
    request: r,
    shape: 'top',
    groupBy: ['path', 'params'],
    countColumn: 'c',
    postgres: pg(
      'edge_logs',
      r,
      `SELECT (metadata #>> '{request,path}') AS path, (metadata #>> '{request,search}') AS params, count(timestamp) AS c\nFROM edge_logs\nGROUP BY path, params\nORDER BY c DESC\nLIMIT 100`,
    ),
    clickhouse: chOver(
      r,
      'edge_logs',
      (f) => `SELECT ${f(...text('request.path'))} AS path, ${f(...text('request.search'))} AS params, count() AS c FROM edge_logs WHERE ${RANGE} GROUP BY path, params ORDER BY c DESC LIMIT 100`,
    ),
  });
  const errorsByUserCase = (r: StudioRequest, kind: string): StudioCase => ({
    kind,
    request: r,
    shape: 'top',
    groupBy: ['user_name', 'error_severity'],
    countColumn: 'count',
    // `in` on a JSON field compares text (test "translate in operator arguments to text").
    postgres: pg(
      'postgres_logs',
      r,
      `SELECT count(t.timestamp) AS count, (t.metadata #>> '{parsed,user_name}') AS user_name, ${tSeverity} AS error_severity\nFROM postgres_logs AS t\nWHERE ${tSeverity} IN ('ERROR', 'FATAL', 'PANIC')\nGROUP BY (t.metadata #>> '{parsed,user_name}'), ${tSeverity}\nORDER BY count DESC\nLIMIT 100`,
    ),
    clickhouse: chOver(
      r,
      'postgres_logs',
      (f) =>
        `SELECT count() AS count, ${f(...text('parsed.user_name'))} AS user_name, ${f(...SEVERITY)} AS error_severity FROM postgres_logs WHERE ${RANGE} AND error_severity IN ('ERROR', 'FATAL', 'PANIC') GROUP BY user_name, error_severity ORDER BY count DESC LIMIT 100`,
    ),
  });
  return [
    {
      kind: 'list (API Gateway, last hour)',
      request: edgeList,
      shape: 'rows',
      postgres: pg(
        'edge_logs',
        edgeList,
        `SELECT id AS id, edge_logs.timestamp AS timestamp, event_message AS event_message, (metadata #>> '{request,method}') AS method, (metadata #>> '{request,path}') AS path, (metadata #>> '{request,search}') AS search, ${status} AS status_code\nFROM edge_logs\nORDER BY timestamp DESC\nLIMIT 100`,
      ),
      clickhouse: chOver(
        edgeList,
        'edge_logs',
        (f) =>
          `SELECT id, ${MICROS} AS micros, event_message, ${f(...text('request.method'))} AS method, ${f(...text('request.path'))} AS path, ${f(...text('request.search'))} AS search, ${f(...STATUS)} AS status_code FROM edge_logs WHERE ${RANGE} ORDER BY timestamp DESC LIMIT 100`,
      ),
    },
    {
      kind: 'list (Postgres, last hour)',
      request: pgList,
      shape: 'rows',
      postgres: pg(
        'postgres_logs',
        pgList,
        `SELECT postgres_logs.timestamp AS timestamp, id AS id, event_message AS event_message, (metadata #>> '{parsed,error_severity}') AS error_severity, (metadata #>> '{parsed,detail}') AS detail, (metadata #>> '{parsed,hint}') AS hint\nFROM postgres_logs\nORDER BY timestamp DESC\nLIMIT 100`,
      ),
      clickhouse: chOver(
        pgList,
        'postgres_logs',
        (f) =>
          `SELECT ${MICROS} AS micros, id, event_message, ${f(...SEVERITY)} AS error_severity, ${f(...text('parsed.detail'))} AS detail, ${f(...text('parsed.hint'))} AS hint FROM postgres_logs WHERE ${RANGE} ORDER BY timestamp DESC LIMIT 100`,
      ),
    },
    {
      kind: 'count (API Gateway, new logs, 5xx)',
      request: count,
      shape: 'count',
      // `between` on a JSON field: both sides numeric (test "translate between operator sides to numeric").
      postgres: pg('edge_logs', count, `SELECT count(*) AS count FROM edge_logs WHERE (${status})::numeric BETWEEN 500 AND 599`),
      clickhouse: chOver(count, 'edge_logs', (f) => `SELECT count() AS count FROM edge_logs WHERE ${RANGE} AND ${f(...STATUS)} BETWEEN 500 AND 599`),
    },
    edgeChart(minuteChart, 'chart by minute (API Gateway, last hour)'),
    pgChart(hourChart, 'chart by hour (Postgres, last 24 hours)'),
    {
      kind: 'single log (API Gateway, by id, no range)',
      request: single,
      shape: 'rows',
      // A CTE field compared with a string: `(cast(id as jsonb) #>> '{}')` (test "CTE fields in binary op are cast to text only when equal").
      postgres: pg(
        'edge_logs',
        single,
        `SELECT id AS id, timestamp AS timestamp, event_message AS event_message, metadata AS metadata FROM edge_logs WHERE (cast(id AS jsonb) #>> '{}') = '${singleId.replaceAll("'", "''")}' LIMIT 1`,
      ),
      clickhouse: chOver(single, 'edge_logs', () => `SELECT id, ${MICROS} AS micros, event_message, metadata FROM edge_logs WHERE ${RANGE} AND id = {id:String} LIMIT 1`, { id: singleId }),
    },
    topPathsCase(topPaths, 'Explorer: Top Paths (last hour)'),
    errorsByUserCase(errorsByUser, 'Explorer: Error Count by User (last hour)'),
    // "Last 7 days": the whole week (no tier window with the Supabase preset), every scan 7 times the day's.
    edgeChart(named('API Gateway: chart by hour, last 7 days'), 'chart by hour (API Gateway, last 7 days)'),
    pgChart(named('Postgres: chart by hour, last 7 days'), 'chart by hour (Postgres, last 7 days)'),
    topPathsCase(named('Explorer: template Top Paths, last 7 days'), 'Explorer: Top Paths (last 7 days)'),
    errorsByUserCase(named('Explorer: template Error Count by User, last 7 days'), 'Explorer: Error Count by User (last 7 days)'),
  ];
}
