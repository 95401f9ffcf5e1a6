-- function_edge_logs_hourly: a rollup of function_edge_logs, one row per (hour, project_ref,
-- function_id) with mergeable partial aggregates (docs/definitions.md, "Rollups").
--
-- Relation `function_edge_logs` (one row per invocation) is provided by the engine: over every
-- input of the source, or over one file at compaction. No parameters: a rollup is a pure
-- function of the rows it reads, so rollups of disjoint row sets can be summed.
--
-- Rows of one hour may come from several files: readers re-aggregate (sum the counts, min of the
-- minimums, ...) and merge the summaries.
--
-- execution_time_summary is a quantile summary of the n = timed_count non-null execution times:
-- sorted ascending v1..vn, it keeps v[step], v[2*step], ... and, when step does not divide n,
-- v[n], with step = max(1, floor(0.005 * n)). Its i-th value stands for
-- least(step, n - (i - 1) * step) values. Merged summaries pick a quantile off by fewer than
-- 0.005 * N ranks (N the bucket's values), inside the 0.01 bound; with step 1 (fewer than 400
-- values a group) the summary is every value and the quantile is exact.
SELECT
  hour, project_ref, function_id, count, error_count, timed_count,
  min_execution_time, max_execution_time, sum_execution_time,
  CAST(greatest(1, floor(0.005 * timed_count)) AS BIGINT)        AS summary_step,
  list_select(sorted, range(greatest(1, floor(0.005 * timed_count))::BIGINT, timed_count + 1,
                            greatest(1, floor(0.005 * timed_count))::BIGINT))
    || CASE WHEN timed_count % greatest(1, floor(0.005 * timed_count))::BIGINT <> 0
            THEN [sorted[timed_count]] ELSE [] END                    AS execution_time_summary
FROM (
  SELECT
    date_trunc('hour', timestamp)                                 AS hour,
    project_ref,
    function_id,
    count(*)                                                      AS count,
    count(*) FILTER (WHERE status_code >= 400)                    AS error_count,
    count(execution_time_ms)                                      AS timed_count,
    min(execution_time_ms)                                        AS min_execution_time,
    max(execution_time_ms)                                        AS max_execution_time,
    sum(execution_time_ms)                                        AS sum_execution_time,
    coalesce(list(execution_time_ms ORDER BY execution_time_ms)
               FILTER (WHERE execution_time_ms IS NOT NULL), [])  AS sorted
  FROM function_edge_logs
  GROUP BY ALL
)
-- Stored beside each data file at compaction in this order: a project's hours sit in few row groups.
ORDER BY project_ref, hour, function_id
