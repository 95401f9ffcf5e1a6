-- logs.all's table of one source, for a caller's SQL (docs/sandboxing.md, "Source tables"): the
-- source's rows of the project, within the tier's window and the time bounds, as the endpoint's
-- own rows are (logs.all.sql; a test holds the two equal). A caller's SELECT reads one such table
-- per source the instance has, named by its relation (`edge_logs`, `auth_logs`, ...); the engine
-- builds the tables its SELECT names, each showing the source's own fields (id, timestamp,
-- event_message, metadata and its top-level columns).
--
-- `source_rows` is the source's relation and `project_column` its project column: the engine
-- names them from the source's descriptor, never from a caller's text.
--
-- Parameters:
--   $project  project reference; only rows of this project (NULL with singleProject: every row)
--   $after    exclusive lower bound: the later of (now - retention window) and iso_timestamp_start;
--             NULL for none (an instance without tier windows, and no iso_timestamp_start)
--   $until    inclusive upper bound (iso_timestamp_end), or NULL for none
SELECT *
FROM source_rows
WHERE ($project IS NULL OR project_column = $project)
  AND ($after IS NULL OR timestamp > $after)
  AND ($until IS NULL OR timestamp <= $until)
