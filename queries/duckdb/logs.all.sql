-- logs.all: the newest gateway (edge) log entries of one project.
--
-- Relation `edge_logs` is provided by the engine over the configured files: id, timestamp
-- (TIMESTAMP, UTC), event_message, project, metadata (JSON text), request_path, request_url.
--
-- Parameters:
--   $project  project reference; only entries of this project (NULL with singleProject: every entry)
--   $after    exclusive lower bound: the later of (now - retention window) and iso_timestamp_start
--   $until    inclusive upper bound (iso_timestamp_end), or NULL for none
--   $limit    the query's own row limit (100)
SELECT id, timestamp, event_message, metadata
FROM edge_logs
WHERE ($project IS NULL OR project = $project)
  AND timestamp > $after
  AND ($until IS NULL OR timestamp <= $until)
ORDER BY timestamp DESC, id ASC NULLS LAST
LIMIT $limit
