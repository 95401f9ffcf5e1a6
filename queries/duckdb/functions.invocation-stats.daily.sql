-- functions.invocation-stats over the hourly rollup and the days' quantile summaries (7day: day
-- buckets, whose window starts and ends on whole days, so the rollups' hours and days cover it
-- exactly). The same answer as functions.invocation-stats.hourly.sql but for p95/p99, picked from
-- a day's summaries instead of its 24 hours' (the same rank bound: docs/semantics.md), which keep
-- about 200 values a group where an hour's keep up to every value: the average project's week
-- merged 38,227 kept values for 1,613 (docs/performance.md, "The week's quantiles from a day's
-- summary").
--
-- Relations `function_edge_logs_hourly` and `function_edge_logs_daily_summary`
-- (queries/duckdb/function_edge_logs_hourly.sql, function_edge_logs_daily_summary.sql) are
-- provided by the engine; one hour or day may have several rows (from several files).
--
-- Parameters:
--   $project      project reference; only invocations of this project are counted (NULL with
--                 singleProject: every invocation)
--   $function_id  one function's id, or NULL for every function of the project
--   $unit         bucket unit: 'day'
--   $first        first bucket start (a whole day), inclusive
--   $end          last bucket start + 1 day (a whole day), exclusive
--   $max_rows     row cap of the endpoint
WITH parts AS (
  SELECT date_trunc($unit, hour) AS bucket, *
  FROM function_edge_logs_hourly
  WHERE ($project IS NULL OR project_ref = $project)
    AND ($function_id IS NULL OR function_id = $function_id)
    AND hour >= $first
    AND hour < $end
),
totals AS (
  SELECT
    bucket,
    min(min_execution_time)                             AS min_execution_time,
    max(max_execution_time)                             AS max_execution_time,
    sum(sum_execution_time) / nullif(sum(timed_count), 0) AS avg_execution_time,
    sum(count)                                          AS count,
    sum(error_count)                                    AS error_count
  FROM parts
  GROUP BY 1
),
-- each kept value of a bucket once, with the number of values it stands for: a bucket merges
-- the day's functions (and files), whose summaries may keep the same values. The weights are summed as
-- DOUBLE, exact for counts below 2^53: a HUGEINT running sum cost more than the rest of the query.
points AS (
  SELECT date_trunc($unit, day) AS bucket, value, sum(weight)::DOUBLE AS weight
  FROM function_edge_logs_daily_summary
  WHERE ($project IS NULL OR project_ref = $project)
    AND ($function_id IS NULL OR function_id = $function_id)
    AND day >= $first
    AND day < $end
  GROUP BY 1, 2
),
ranked AS (
  SELECT bucket, value,
         sum(weight) OVER (PARTITION BY bucket ORDER BY value ROWS UNBOUNDED PRECEDING) AS reached,
         sum(weight) OVER (PARTITION BY bucket)                                          AS n
  FROM points
),
-- the first value whose cumulative weight reaches rank max(1, ceil(q * n)): quantile_disc's rank
quantiles AS (
  SELECT bucket,
         min(value) FILTER (WHERE reached >= greatest(1, ceil(0.95 * n))) AS p95_execution_time,
         min(value) FILTER (WHERE reached >= greatest(1, ceil(0.99 * n))) AS p99_execution_time
  FROM ranked
  GROUP BY 1
)
SELECT
  t.bucket              AS timestamp,
  t.min_execution_time,
  t.max_execution_time,
  t.avg_execution_time,
  q.p95_execution_time,
  q.p99_execution_time,
  t.count,
  t.error_count
FROM totals t LEFT JOIN quantiles q USING (bucket)
ORDER BY 1
LIMIT $max_rows
