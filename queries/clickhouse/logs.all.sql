-- logs.all: the newest gateway (edge) log entries of one project.
--
-- Table `edge_logs` (the engine names the configured table, the Distributed one on a cluster):
-- timestamp (Int64, microseconds since the epoch, UTC), project (String, '' when missing), id,
-- event_message, metadata (JSON text), request_path, request_url (Nullable String).
--
-- Parameters:
--   project  String           project reference; only entries of this project
--   after    Int64            exclusive lower bound: the later of (now - retention window) and iso_timestamp_start
--   until    Nullable(Int64)  inclusive upper bound (iso_timestamp_end), or NULL for none
--   limit    UInt32           the query's own row limit (100)
SELECT id, timestamp, event_message, metadata
FROM edge_logs
WHERE project = {project:String}
  AND timestamp > {after:Int64}
  AND ({until:Nullable(Int64)} IS NULL OR timestamp <= {until:Nullable(Int64)})
ORDER BY timestamp DESC, id ASC NULLS LAST
LIMIT {limit:UInt32}
