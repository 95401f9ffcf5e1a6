-- catalog.projects: the projects of the gateway (edge) log, busiest first (for pickers).
--
-- Table `edge_logs` (the engine names the configured table, the Distributed one on a cluster):
-- timestamp (Int64, microseconds since the epoch, UTC), project (String, '' when the event has
-- none: the sorting key cannot be Nullable), id, event_message, metadata, request_path, request_url.
--
-- Parameters:
--   after     Int64   only events at or after this instant
--   max_rows  UInt32  most projects returned
SELECT
  project,
  count()         AS events,
  max(timestamp)  AS last_seen
FROM edge_logs
WHERE timestamp >= {after:Int64}
  AND project != ''
GROUP BY project
ORDER BY events DESC, project
LIMIT {max_rows:UInt32}
