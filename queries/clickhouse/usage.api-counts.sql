-- usage.api-counts: API requests per product area per time bucket.
--
-- Table `edge_logs` (the engine names the configured table, the Distributed one on a cluster):
-- timestamp (Int64, microseconds since the epoch, UTC), project (String), id, event_message,
-- metadata (JSON text), request_path, request_url (Nullable String).
--
-- Parameters:
--   project   String  RE2 pattern searched in the request URL; only matching requests count
--   unit      String  bucket unit: 'minute' | 'hour' | 'day'
--   start     Int64   window start (now - window), inclusive; there is no upper bound
--   max_rows  UInt32  row cap of the endpoint
--
-- match() lets `.` match a newline and skips compiling patterns it takes for plain substrings
-- (accepting some invalid ones); the `(?-s)` prefix makes it compile every pattern with RE2's
-- usual meaning of `.`, as DuckDB's regexp_matches. The pattern goes inside `(?:...)`: ClickHouse
-- 18 prefilters rows by the literal text it finds outside groups, ignoring inline flags such as
-- `(?i)`, and finds none inside one. (The engine has checked that the pattern compiles on its
-- own, so the group cannot pair with a stray parenthesis.) The bucket is named `bucket` inside:
-- an alias `timestamp` would replace the column inside WHERE. The path classes are plain text
-- (a regular expression without special characters matches where the text occurs), so they are
-- searched as substrings, which 18.16 does faster than its regular-expression search.
SELECT
  bucket                    AS timestamp,
  total_rest_requests,
  total_storage_requests,
  total_auth_requests,
  total_realtime_requests
FROM (
  WITH multiIf({unit:String} = 'second', 1000000,
               {unit:String} = 'minute', 60000000,
               {unit:String} = 'hour', 3600000000,
               86400000000) AS unit_micros
  SELECT
    timestamp - ((timestamp % unit_micros) + unit_micros) % unit_micros  AS bucket,
    countIf(ifNull(position(request_path, '/rest') > 0, 0))               AS total_rest_requests,
    countIf(ifNull(position(request_path, '/storage') > 0, 0))            AS total_storage_requests,
    countIf(ifNull(position(request_path, '/auth') > 0, 0))               AS total_auth_requests,
    countIf(ifNull(position(request_path, '/realtime') > 0, 0))           AS total_realtime_requests
  FROM edge_logs
  WHERE timestamp >= {start:Int64}
    AND match(request_url, concat('(?-s)(?:', {project:String}, ')'))
  GROUP BY bucket
)
ORDER BY timestamp
LIMIT {max_rows:UInt32}
