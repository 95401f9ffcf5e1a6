-- logs.all: the newest gateway (edge) log entries of one project.
--
-- Relation `edge_logs` is provided by the engine over the configured files: id, timestamp
-- (TIMESTAMP, UTC), event_message, project, metadata (JSON text), request_path, request_url.
--
-- `edge_logs` here is the project's entries within the window and bounds; it shadows the engine's
-- relation of the same name (the engine runs this query inside it). A caller's SELECT (when the
-- endpoint is sandboxable) reads instead a table per source of the instance, limited the same way
-- (logs.all.tables.sql).
--
-- Parameters:
--   $project  project reference; only entries of this project (NULL with singleProject: every entry)
--   $after    exclusive lower bound: the later of (now - retention window) and iso_timestamp_start;
--             NULL for none (an instance without tier windows, and no iso_timestamp_start)
--   $until    inclusive upper bound (iso_timestamp_end), or NULL for none
--   $limit    the query's own row limit (100)
WITH edge_logs AS (
  SELECT id, timestamp, event_message, metadata
  FROM edge_logs
  WHERE ($project IS NULL OR project = $project)
    AND ($after IS NULL OR timestamp > $after)
    AND ($until IS NULL OR timestamp <= $until)
)
SELECT id, timestamp, event_message, metadata
FROM edge_logs
ORDER BY timestamp DESC, id ASC NULLS LAST
LIMIT $limit
