-- The rows of one source a caller's translated SELECT reads where the DuckDB engine has the
-- endpoint's CTE (ClickHouse 18.16 has no WITH ... AS (subquery)): the same project, window and
-- bounds as logs.all's CTEs (queries/duckdb/logs.all.sql).
--
-- Table `source_rows` is the source's table (the engine names it, the Distributed one on a
-- cluster); `project_column` its project column (the engine names it). Every column is read,
-- the flattened JSON columns (`_metadata_paths`, `_metadata_values`) included: they are how a
-- translated query reads fields of `metadata` exactly on every version.
--
-- Parameters:
--   project  String           project reference; only rows of this project
--   after    Int64            exclusive lower bound: the later of (now - retention window) and iso_timestamp_start
--   until    Nullable(Int64)  inclusive upper bound (iso_timestamp_end), or NULL for none
SELECT *
FROM source_rows
WHERE project_column = {project:String}
  AND timestamp > {after:Int64}
  AND timestamp <= ifNull({until:Nullable(Int64)}, 9223372036854775807)
