-- logs.all: the newest gateway (edge) log entries of one project.
--
-- Relation `edge_logs` is provided by the engine over the configured files: id, timestamp
-- (TIMESTAMP, UTC), event_message, project, metadata (JSON text), request_path, request_url.
--
-- One CTE per Logflare log source, each already limited to the project, the tier's window and
-- the time bounds: what a caller's SELECT reads when the endpoint is sandboxable (docs/sandboxing.md).
-- `edge_logs` shadows the engine's relation of the same name (the engine runs this query inside
-- it); the sources this installation does not have are empty, with the same typed columns.
--
-- Parameters:
--   $project  project reference; only entries of this project (NULL with singleProject: every entry)
--   $after    exclusive lower bound: the later of (now - retention window) and iso_timestamp_start
--   $until    inclusive upper bound (iso_timestamp_end), or NULL for none
--   $limit    the query's own row limit (100)
WITH edge_logs AS (
  SELECT id, timestamp, event_message, metadata
  FROM edge_logs
  WHERE ($project IS NULL OR project = $project)
    AND timestamp > $after
    AND ($until IS NULL OR timestamp <= $until)
),
postgres_logs AS (SELECT CAST(NULL AS VARCHAR) AS id, CAST(NULL AS TIMESTAMP) AS timestamp, CAST(NULL AS VARCHAR) AS event_message, CAST(NULL AS JSON) AS metadata LIMIT 0),
function_logs AS (SELECT * FROM postgres_logs),
function_edge_logs AS (SELECT * FROM postgres_logs),
auth_logs AS (SELECT * FROM postgres_logs),
realtime_logs AS (SELECT * FROM postgres_logs),
storage_logs AS (SELECT * FROM postgres_logs),
postgrest_logs AS (SELECT * FROM postgres_logs),
pgbouncer_logs AS (SELECT * FROM postgres_logs)
SELECT id, timestamp, event_message, metadata
FROM edge_logs
ORDER BY timestamp DESC, id ASC NULLS LAST
LIMIT $limit
