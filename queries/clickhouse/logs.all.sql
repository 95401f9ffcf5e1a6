-- logs.all: the newest gateway (edge) log entries of one project.
--
-- Table `edge_logs` (the engine names the configured table, the Distributed one on a cluster):
-- timestamp (Int64, microseconds since the epoch, UTC), project (String, '' when missing), id,
-- event_message, metadata (JSON text), request_path, request_url (Nullable String).
--
-- Parameters:
--   project  String           project reference; only entries of this project
--   after    Nullable(Int64)  exclusive lower bound: the later of (now - retention window) and iso_timestamp_start;
--                              NULL for none (an instance without tier windows, and no iso_timestamp_start)
--   until    Nullable(Int64)  inclusive upper bound (iso_timestamp_end), or NULL for none
--   limit    UInt32           the query's own row limit (100)
--
-- In two phases: the page's oldest timestamp first, from the sort key alone (`timestamp` of the
-- newest `limit` rows), then the wide rows from that timestamp on. The scalar subquery is
-- computed before the statement runs, so the primary key keeps only the granules of the page;
-- one phase decodes `metadata` of every row of the project in the window (many times slower).
-- Rows sharing the bound timestamp are all read, so ties are broken by `id` as before. The
-- bounds are written `ifNull(until, max)` (and `ifNull(after, min)`) rather than `until IS NULL
-- OR ...`: 18.16's primary key analysis gives up on that OR, and an older page then read every
-- day after it.
SELECT id, timestamp, event_message, metadata
FROM edge_logs
WHERE project = {project:String}
  AND timestamp > ifNull({after:Nullable(Int64)}, -9223372036854775807)
  AND timestamp <= ifNull({until:Nullable(Int64)}, 9223372036854775807)
  AND timestamp >= (
    SELECT min(timestamp) FROM (
      SELECT timestamp
      FROM edge_logs
      WHERE project = {project:String}
        AND timestamp > ifNull({after:Nullable(Int64)}, -9223372036854775807)
        AND timestamp <= ifNull({until:Nullable(Int64)}, 9223372036854775807)
      ORDER BY timestamp DESC
      LIMIT {limit:UInt32}
    )
  )
ORDER BY timestamp DESC, id ASC NULLS LAST
LIMIT {limit:UInt32}
