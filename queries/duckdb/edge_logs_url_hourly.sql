-- Rollup edge_logs_url_hourly of the gateway log, written beside each data file at compaction:
-- requests per (hour, URL origin, URL) with the count of each path class of usage.api-counts.
-- The endpoint then tests its pattern once per distinct URL of an hour instead of once per request
-- (bench data: 2.5 M rows for 10 M requests), and skips the origins whose URLs cannot hold the
-- pattern's literal (edge_logs_url_grams.sql).
--
-- Relation `edge_logs`: the source's relation (one data file's events when written at compaction).
-- No parameters.
--
-- Rows are sorted by origin, then hour: a project's URLs sit in few row groups, whose statistics
-- let a scan skip the rest. The class counts are the regular expressions of usage.api-counts.sql
-- written as substring tests (a pattern of plain text is that test). Requests without a URL stay
-- (as origin and URL NULL): without a pattern (single project) every request counts.
SELECT
  date_trunc('hour', timestamp)                                         AS hour,
  split_part(request_url, '/', 3)                                       AS origin,
  request_url,
  count(*) FILTER (WHERE contains(request_path, '/rest'))               AS rest_requests,
  count(*) FILTER (WHERE contains(request_path, '/storage'))            AS storage_requests,
  count(*) FILTER (WHERE contains(request_path, '/auth'))               AS auth_requests,
  count(*) FILTER (WHERE contains(request_path, '/realtime'))           AS realtime_requests
FROM edge_logs
WHERE timestamp IS NOT NULL
GROUP BY ALL
ORDER BY origin, hour, request_url
