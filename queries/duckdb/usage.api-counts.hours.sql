-- usage.api-counts over the rollups for a window that starts on the hour (the variant for hour and
-- day buckets then): the same answer as usage.api-counts.sql, every request from the rollup. It is
-- usage.api-counts.rollups.sql without the raw part, which such a window leaves empty: DuckDB drops
-- that part only after binding it (0.3 - 0.6 ms of a 1-hour window's 10 ms statement).
--
-- Relations provided by the engine: the gateway log's rollups `edge_logs_origin_hourly`
-- (edge_logs_origin_hourly.sql: hour, origin and the four class counts), `edge_logs_url_hourly`
-- (edge_logs_url_hourly.sql: hour, origin, request_url and the four class counts) and
-- `edge_logs_url_grams` (edge_logs_url_grams.sql: origin, trigram map; an uncompacted tail's
-- rows: origin, URL, no map, edge_logs_url_grams.rest.sql).
--
-- Parameters:
--   $project           RE2 pattern searched in the request URL; only matching requests count (NULL
--                      with singleProject: every request)
--   $project_required  plain text every match of $project holds, the pattern itself when it is
--                      plain text, or '' (requiredLiteral)
--   $unit              bucket unit: 'hour' | 'day'
--   $start             window start (now - window), inclusive and on the hour; there is no upper bound
--   $max_rows          row cap of the endpoint
WITH
  -- Origins some URL of which may hold the literal. The engine binds a stored trigram map's
  -- origins whose map holds every trigram of it in the map's place, kept per map version and
  -- literal (edge_logs_url_grams.matches.sql, src/engine/duckdb/narrowed-rollups.ts): rows of
  -- only an origin. An uncompacted tail's rows carry a URL and no map
  -- (edge_logs_url_grams.rest.sql): the URL itself is tested. A row without a URL (a kept origin,
  -- or a stored map the engine did not narrow) rules nothing out: the candidates only spare rows
  -- the tests on request_url below would drop. The maps were tested here on every call before:
  -- about 1.4 ms of CPU of a 7.5 ms statement, planning their lambdas included.
  candidate_origins AS (
    SELECT origin
    FROM edge_logs_url_grams
    WHERE request_url IS NULL OR contains(request_url, $project_required)
  ),
  counted AS (
    -- The requests of origins that hold a plain-text pattern (one that is its own required literal):
    -- every URL of such an origin holds it (the origin is a part of the URL), so they are counted
    -- per origin and hour, no URL read (edge_logs_origin_hourly.sql). Without a pattern (single
    -- project) every request is.
    SELECT hour AS instant, rest_requests AS rest, storage_requests AS storage, auth_requests AS auth, realtime_requests AS realtime
    FROM edge_logs_origin_hourly
    WHERE hour >= $start
      AND ($project IS NULL OR ($project = $project_required AND contains(origin, $project)))
    UNION ALL
    -- Every other origin's requests: each distinct URL of an hour tested.
    SELECT hour, rest_requests, storage_requests, auth_requests, realtime_requests
    FROM edge_logs_url_hourly
    WHERE hour >= $start
      AND $project IS NOT NULL
      -- Counted above (an origin NULL has no URL, which the tests below drop).
      AND NOT ($project = $project_required AND contains(origin, $project))
      -- A literal shorter than a trigram rules out no origin. The candidates counted above are
      -- left out of the list. DuckDB skips the row groups that cannot hold a listed origin (their
      -- statistics against the list's), but skips none when the list is empty: the highest code
      -- point, which no host name has, keeps it from being so (a listed origin only spares rows
      -- the URL tests below would drop, so one more changes no answer).
      AND (length($project_required) < 3 OR origin IN (
        SELECT origin FROM candidate_origins WHERE NOT ($project = $project_required AND contains(origin, $project))
        UNION ALL
        SELECT chr(1114111)))
      AND contains(request_url, $project_required)
      AND regexp_matches(request_url, $project)
  )
SELECT
  date_trunc($unit, instant)                                                AS timestamp,
  sum(rest)::BIGINT                                                     AS total_rest_requests,
  sum(storage)::BIGINT                                                  AS total_storage_requests,
  sum(auth)::BIGINT                                                     AS total_auth_requests,
  sum(realtime)::BIGINT                                                 AS total_realtime_requests
FROM counted
GROUP BY 1
ORDER BY 1
LIMIT $max_rows
