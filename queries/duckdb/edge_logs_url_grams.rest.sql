-- edge_logs_url_grams over the requests that have no stored rollup (an uncompacted tail), computed
-- on every query: each of their URL origins with a NULL trigram map, which rules the origin out of
-- nothing (usage.api-counts.rollups.sql then tests every URL of it). Computing the maps here
-- would cost more per query than the test they save: trigrams of every distinct URL.
SELECT DISTINCT
  split_part(request_url, '/', 3)                                       AS origin,
  CAST(NULL AS BLOB)                                                    AS grams
FROM edge_logs
WHERE request_url IS NOT NULL
