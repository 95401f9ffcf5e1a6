-- catalog.functions: the edge functions of each project in the edge-function log (for pickers).
--
-- Relation `function_edge_logs` (one row per invocation) is provided by the engine over the
-- configured files: id, timestamp (TIMESTAMP, UTC), event_message, metadata (JSON),
-- project_ref, function_id, execution_time_ms (DOUBLE), status_code (INTEGER).
--
-- Parameters:
--   $after     only invocations at or after this instant
--   $max_rows  most (project, function) pairs returned
SELECT
  project_ref     AS project,
  function_id,
  count(*)        AS events,
  max(timestamp)  AS last_seen
FROM function_edge_logs
WHERE timestamp >= $after
  AND project_ref IS NOT NULL
  AND function_id IS NOT NULL
GROUP BY project_ref, function_id
ORDER BY events DESC, project_ref, function_id
LIMIT $max_rows
