-- logs.all's table of one source, for a caller's SQL (docs/sandboxing.md, "Source tables"): the
-- source's rows of the project, within the tier's window and the time bounds, as the endpoint's
-- own rows are (logs.all.sql). ClickHouse 18.16 has no WITH ... AS (subquery): each table is a
-- subquery in the caller's translated FROM.
--
-- `source_rows` is the source's table (the engine names it, the Distributed one on a cluster)
-- and `project_column` its project column (from the source's descriptor, never a caller's text).
-- Every column is read, the flattened JSON columns (`_metadata_paths`, `_metadata_values`)
-- included: they are how a translated query reads fields of `metadata` exactly on every version.
--
-- Parameters:
--   project  String           project reference; only rows of this project (with singleProject the
--                              engine drops the comparison: docs/clickhouse.md, "Single project")
--   after    Nullable(Int64)  exclusive lower bound: the later of (now - retention window) and iso_timestamp_start;
--                              NULL for none (an instance without tier windows, and no iso_timestamp_start)
--   until    Nullable(Int64)  inclusive upper bound (iso_timestamp_end), or NULL for none
SELECT *
FROM source_rows
WHERE project_column = {project:String}
  AND timestamp > ifNull({after:Nullable(Int64)}, -9223372036854775807)
  AND timestamp <= ifNull({until:Nullable(Int64)}, 9223372036854775807)
