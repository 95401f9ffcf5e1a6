-- functions.invocation-stats: edge-function latency statistics and errors per time bucket.
--
-- Relation `function_edge_logs` (one row per invocation) is provided by the engine over the
-- configured files: id, timestamp (TIMESTAMP, UTC), event_message, metadata (JSON), project_ref, function_id,
-- execution_time_ms (DOUBLE), status_code (INTEGER).
--
-- Parameters:
--   $project      project reference; only invocations of this project are counted
--   $function_id  one function's id, or NULL for every function of the project
--   $unit         bucket unit: 'second' | 'minute' | 'hour' | 'day'
--   $first        first bucket start = trunc(now - window span, unit), inclusive
--   $end          last bucket start + 1 unit, exclusive
--   $max_rows     row cap of the endpoint
SELECT
  date_trunc($unit, timestamp)                          AS timestamp,
  min(execution_time_ms)                                AS min_execution_time,
  max(execution_time_ms)                                AS max_execution_time,
  avg(execution_time_ms)                                AS avg_execution_time,
  -- exact nearest-rank quantiles: always an observed value, inside the accuracy bound of docs/semantics.md
  quantile_disc(execution_time_ms, 0.95)                AS p95_execution_time,
  quantile_disc(execution_time_ms, 0.99)                AS p99_execution_time,
  count(*)                                              AS count,
  count(*) FILTER (WHERE status_code >= 400)            AS error_count
FROM function_edge_logs
WHERE project_ref = $project
  AND ($function_id IS NULL OR function_id = $function_id)
  AND timestamp >= $first
  AND timestamp < $end
GROUP BY 1
ORDER BY 1
LIMIT $max_rows
