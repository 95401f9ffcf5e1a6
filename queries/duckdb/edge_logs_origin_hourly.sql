-- Rollup edge_logs_origin_hourly of the gateway log, written beside each data file at compaction:
-- requests per (hour, URL origin) with the count of each path class of usage.api-counts, as
-- edge_logs_url_hourly.sql counts them per URL. The origin is a part of the URL, so when the
-- endpoint's pattern is plain text held by an origin, every URL of that origin holds it: those
-- requests are counted here, a few rows per hour, with no URL read. Without a pattern (a single
-- project) every request is counted here.
--
-- Relation `edge_logs`: the source's relation (one data file's events when written at compaction).
-- No parameters.
--
-- Rows are sorted by origin, then hour. Requests without a URL stay (origin NULL).
SELECT
  date_trunc('hour', timestamp)                                         AS hour,
  split_part(request_url, '/', 3)                                       AS origin,
  count(*) FILTER (WHERE contains(request_path, '/rest'))               AS rest_requests,
  count(*) FILTER (WHERE contains(request_path, '/storage'))            AS storage_requests,
  count(*) FILTER (WHERE contains(request_path, '/auth'))               AS auth_requests,
  count(*) FILTER (WHERE contains(request_path, '/realtime'))           AS realtime_requests
FROM edge_logs
WHERE timestamp IS NOT NULL
GROUP BY ALL
ORDER BY origin, hour
