-- catalog.projects: the projects of the gateway (edge) log, busiest first (for pickers).
--
-- Relation `edge_logs` is provided by the engine over the configured files: id, timestamp
-- (TIMESTAMP, UTC), event_message, project, metadata (JSON text), request_path, request_url.
--
-- Parameters:
--   $after     only events at or after this instant
--   $max_rows  most projects returned
SELECT
  project,
  count(*)        AS events,
  max(timestamp)  AS last_seen
FROM edge_logs
WHERE timestamp >= $after
  AND project IS NOT NULL
GROUP BY project
ORDER BY events DESC, project
LIMIT $max_rows
