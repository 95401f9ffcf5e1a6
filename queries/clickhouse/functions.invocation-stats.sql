-- functions.invocation-stats: edge-function latency statistics and errors per time bucket.
--
-- Table `function_edge_logs` (one row per invocation; the engine names the configured table,
-- the Distributed one on a cluster): timestamp (Int64, microseconds since the epoch, UTC),
-- project_ref (String, '' when missing), function_id (Nullable String), execution_time_ms
-- (Nullable Float64), status_code (Nullable Int32), id, event_message, metadata (JSON text).
--
-- Parameters:
--   project      String            project reference; only invocations of this project are counted
--   function_id  Nullable(String)  one function's id, or NULL for every function of the project
--   unit         String            bucket unit: 'second' | 'minute' | 'hour' | 'day'
--   first        Int64             first bucket start = trunc(now - window span, unit), inclusive
--   end          Int64             last bucket start + 1 unit, exclusive
--   max_rows     UInt32            row cap of the endpoint
--
-- The buckets are computed from the microseconds (every unit is a fixed number of them in UTC),
-- so nothing depends on DateTime64 or toStartOfSecond, which ClickHouse 18 lacks; `unit` is
-- named once (18.16 reads every mention of a text parameter from the external table again). The
-- inner query names the bucket `bucket`: a SELECT alias `timestamp` would replace the column
-- inside WHERE.
SELECT
  bucket                        AS timestamp,
  min_execution_time,
  max_execution_time,
  avg_execution_time,
  -- A bucket with no execution time has no quantiles (an empty array: [1] would read 0).
  if(timed = 0, NULL, exact_quantiles[1]) AS p95_execution_time,
  if(timed = 0, NULL, exact_quantiles[2]) AS p99_execution_time,
  invocations                   AS count,
  errors                        AS error_count
FROM (
  WITH {unit:String} AS unit_name,
       multiIf(unit_name = 'second', 1000000,
               unit_name = 'minute', 60000000,
               unit_name = 'hour', 3600000000,
               86400000000) AS unit_micros
  SELECT
    -- floor to the unit, also for instants before 1970 (% keeps the sign of the dividend)
    timestamp - ((timestamp % unit_micros) + unit_micros) % unit_micros  AS bucket,
    min(execution_time_ms)                                               AS min_execution_time,
    max(execution_time_ms)                                               AS max_execution_time,
    avg(execution_time_ms)                                               AS avg_execution_time,
    -- quantilesExact(q) picks rank floor(q * n) + 1, DuckDB's quantile_disc rank ceil(q * n);
    -- a level just below q gives DuckDB's rank (for fewer than ten million values a bucket).
    -- Both levels from one state: one copy of the bucket's values, not two (a 7-day week of the
    -- busiest project on 18.16: 154 -> 141 ms).
    quantilesExact(0.949999999, 0.989999999)(execution_time_ms)          AS exact_quantiles,
    count(execution_time_ms)                                             AS timed,
    count()                                                              AS invocations,
    countIf(ifNull(status_code >= 400, 0))                               AS errors
  FROM function_edge_logs
  WHERE project_ref = {project:String}
    AND ({function_id:Nullable(String)} IS NULL OR function_id = {function_id:Nullable(String)})
    AND timestamp >= {first:Int64}
    AND timestamp < {end:Int64}
  GROUP BY bucket
)
ORDER BY timestamp
LIMIT {max_rows:UInt32}
