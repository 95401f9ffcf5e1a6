-- usage.api-counts: API requests per product area per time bucket.
--
-- Relation `edge_logs` is provided by the engine over the configured files: id, timestamp
-- (TIMESTAMP, UTC), event_message, project, metadata (JSON text), request_path, request_url.
--
-- Parameters:
--   $project   RE2 pattern searched in the request URL; only matching requests count (NULL with
--              singleProject: every request)
--   $project_literal  plain text every match of $project holds, or '' (src/sql/required-literal.ts)
--   $unit      bucket unit: 'minute' | 'hour' | 'day'
--   $start     window start (now - window), inclusive; there is no upper bound
--   $max_rows  row cap of the endpoint
SELECT
  date_trunc($unit, timestamp)                                          AS timestamp,
  count(*) FILTER (WHERE regexp_matches(request_path, '/rest'))         AS total_rest_requests,
  count(*) FILTER (WHERE regexp_matches(request_path, '/storage'))      AS total_storage_requests,
  count(*) FILTER (WHERE regexp_matches(request_path, '/auth'))         AS total_auth_requests,
  count(*) FILTER (WHERE regexp_matches(request_path, '/realtime'))     AS total_realtime_requests
FROM edge_logs
WHERE timestamp >= $start
  -- A cheap substring test first: a URL without the pattern's literal part cannot match it
  -- (DuckDB turns only a pattern that is all literal into such a test by itself).
  AND ($project IS NULL OR (contains(request_url, $project_literal) AND regexp_matches(request_url, $project)))
GROUP BY 1
ORDER BY 1
LIMIT $max_rows
