-- functions.invocation-stats: edge-function latency statistics and errors per time bucket.
--
-- Relation `function_edge_logs` (one row per invocation) is provided by the engine over the
-- configured files: id, timestamp (TIMESTAMP, UTC), event_message, metadata (JSON), project_ref, function_id,
-- execution_time_ms (DOUBLE), status_code (INTEGER).
--
-- Parameters:
--   $project      project reference; only invocations of this project are counted (NULL with
--                 singleProject: every invocation)
--   $function_id  one function's id, or NULL for every function of the project
--   $unit         bucket unit: 'second' | 'minute' | 'hour' | 'day'
--   $first        first bucket start = trunc(now - window span, unit), inclusive
--   $end          last bucket start + 1 unit, exclusive
--   $max_rows     row cap of the endpoint
WITH buckets AS (
  SELECT
    date_trunc($unit, timestamp)                        AS bucket,
    min(execution_time_ms)                              AS min_execution_time,
    max(execution_time_ms)                              AS max_execution_time,
    avg(execution_time_ms)                              AS avg_execution_time,
    -- exact nearest-rank quantiles, always an observed value (inside the accuracy
    -- bound); both from one aggregate, which sorts the bucket's values once, not twice
    quantile_disc(execution_time_ms, [0.95, 0.99])      AS quantiles,
    count(*)                                            AS count,
    count(*) FILTER (WHERE status_code >= 400)          AS error_count
  FROM function_edge_logs
  WHERE ($project IS NULL OR project_ref = $project)
    AND ($function_id IS NULL OR function_id = $function_id)
    AND timestamp >= $first
    AND timestamp < $end
  GROUP BY 1
)
SELECT
  bucket                AS timestamp,
  min_execution_time,
  max_execution_time,
  avg_execution_time,
  quantiles[1]          AS p95_execution_time,
  quantiles[2]          AS p99_execution_time,
  count,
  error_count
FROM buckets
ORDER BY 1
LIMIT $max_rows
