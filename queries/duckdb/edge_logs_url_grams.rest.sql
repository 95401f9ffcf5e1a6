-- edge_logs_url_grams over the requests that have no stored rollup (an uncompacted tail), computed
-- on every query: each of their distinct URLs with its origin and a NULL trigram map. Computing
-- the maps here would cost more per query than they save (trigrams of every distinct URL); the
-- endpoint tests these URLs themselves instead (usage.api-counts.rollups.sql), so an origin of the
-- tail is a candidate only when one of its URLs holds the literal. A map that ruled nothing out
-- made every origin of the tail a candidate, and the stored rollups were then read for every
-- origin too: the managed storage's queries while ingesting, whose tail holds every project.
--
-- Stored rows have no `request_url` (NULL in the union): their map stands for their URLs.
SELECT DISTINCT
  split_part(request_url, '/', 3)                                       AS origin,
  CAST(NULL AS BLOB)                                                    AS grams,
  request_url
FROM edge_logs
WHERE request_url IS NOT NULL
