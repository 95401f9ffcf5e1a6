-- function_edge_logs_daily_summary: the quantile summary of the execution times of each (day,
-- project_ref, function_id) of function_edge_logs, one row per kept value (docs/definitions.md,
-- "Rollups"): function_edge_logs_summary's, per day instead of per hour.
--
-- Relation `function_edge_logs` (one row per invocation) is provided by the engine: over every
-- input of the source, or over one file at compaction. No parameters: a rollup is a pure
-- function of the rows it reads; summaries of disjoint row sets merge (readers pool the kept
-- values of a bucket's groups, from every file, with their weights).
--
-- The same rule as function_edge_logs_summary.sql: a group's n non-null execution times sorted
-- ascending v1..vn, it keeps v[step], v[2*step], ... and, when step does not divide n, v[n], with
-- step = max(1, floor(0.005 * n)); the i-th kept value stands for least(step, n - (i - 1) * step)
-- values. A quantile of merged summaries is off by fewer than 0.005 * N ranks (N the bucket's
-- values), inside the 0.01 bound; exact with step 1 (fewer than 400 values a group).
--
-- Why a day's: day buckets (functions.invocation-stats 7day) merged a project's hourly summaries,
-- 24 groups a day each keeping up to every value, then sorted them in a window; a day's summary
-- keeps about 200 values a group (docs/performance.md, "The week's quantiles from a day's summary").
-- (Subqueries, not CTEs: the engine puts the rollup after a WITH of its own.)
SELECT day, project_ref, function_id, value, least(step, n - (i - 1) * step) AS weight
FROM (
  SELECT day, project_ref, function_id, n, step, unnest(kept) AS value, generate_subscripts(kept, 1) AS i
  FROM (
    SELECT day, project_ref, function_id, n, step,
           list_select(sorted, range(step, n + 1, step)) || CASE WHEN n % step <> 0 THEN [sorted[n]] ELSE [] END AS kept
    FROM (
      SELECT
        date_trunc('day', timestamp)                                AS day,
        project_ref,
        function_id,
        count(execution_time_ms)                                    AS n,
        CAST(greatest(1, floor(0.005 * count(execution_time_ms))) AS BIGINT) AS step,
        list(execution_time_ms ORDER BY execution_time_ms)
          FILTER (WHERE execution_time_ms IS NOT NULL)              AS sorted
      FROM function_edge_logs
      WHERE execution_time_ms IS NOT NULL
      GROUP BY ALL
    )
  )
)
-- Stored beside each data file at compaction in this order: a project's values sit in row groups of their own.
ORDER BY project_ref, day, function_id, value, weight
