-- catalog.functions: the edge functions of each project in the edge-function log (for pickers).
--
-- Table `function_edge_logs` (the engine names the configured table, the Distributed one on a
-- cluster): timestamp (Int64, microseconds since the epoch, UTC), project_ref (String, '' when
-- the event has none), function_id (Nullable String), execution_time_ms, status_code, id,
-- event_message, metadata.
--
-- Parameters:
--   after     Int64   only invocations at or after this instant
--   max_rows  UInt32  most (project, function) pairs returned
SELECT
  project_ref     AS project,
  function_id,
  count()         AS events,
  max(timestamp)  AS last_seen
FROM function_edge_logs
WHERE timestamp >= {after:Int64}
  AND project_ref != ''
  AND function_id IS NOT NULL
GROUP BY project_ref, function_id
ORDER BY events DESC, project_ref, function_id
LIMIT {max_rows:UInt32}
