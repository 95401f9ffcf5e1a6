-- function_edge_logs_hourly: a rollup of function_edge_logs, one row per (hour, project_ref,
-- function_id) with mergeable partial aggregates (docs/definitions.md, "Rollups").
--
-- Relation `function_edge_logs` (one row per invocation) is provided by the engine: over every
-- input of the source, or over one file at compaction. No parameters: a rollup is a pure
-- function of the rows it reads, so rollups of disjoint row sets can be summed.
--
-- Rows of one hour may come from several files: readers re-aggregate (sum the counts, min of the
-- minimums, ...). The quantile summaries of the same groups are function_edge_logs_summary's.
SELECT
  date_trunc('hour', timestamp)                                 AS hour,
  project_ref,
  function_id,
  count(*)                                                      AS count,
  count(*) FILTER (WHERE status_code >= 400)                    AS error_count,
  count(execution_time_ms)                                      AS timed_count,
  min(execution_time_ms)                                        AS min_execution_time,
  max(execution_time_ms)                                        AS max_execution_time,
  sum(execution_time_ms)                                        AS sum_execution_time
FROM function_edge_logs
GROUP BY ALL
-- Stored beside each data file at compaction in this order: a project's hours sit in few row groups.
ORDER BY project_ref, hour, function_id
