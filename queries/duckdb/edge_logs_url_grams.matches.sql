-- The origins of one stored edge_logs_url_grams file some URL of which may hold a text: those whose
-- trigram map holds every trigram of it (edge_logs_url_grams.sql numbers them). The engine keeps
-- the answer per stored file version and text and binds it in the file's place (the source's
-- `narrowedBy`, src/sources/edge-logs.ts): usage.api-counts then tests a few origins, not every map.
-- The test the statements made on every call before, over every map.
--
-- Relation `edge_logs_url_grams`: one stored file's rows (origin, grams).
-- Parameters:
--   $text  the statement's required literal ($project_required); one shorter than a trigram
--          matches no origin here (the statements then test no origin's map)
SELECT DISTINCT origin
FROM (SELECT origin, grams::BIT AS bits FROM edge_logs_url_grams) m,
  (SELECT list_transform(range(1, length($text) - 1), i ->
     ((unicode(substr($text, i, 1))::BIGINT * 961
       + unicode(substr($text, i + 1, 1))::BIGINT * 31
       + unicode(substr($text, i + 2, 1))) % 65536)::INTEGER) AS grams) r
-- A NULL map rules nothing out, as in the statements.
WHERE CASE WHEN m.bits IS NULL THEN true ELSE list_bool_and(list_transform(r.grams, g -> get_bit(m.bits, g) = 1)) END
ORDER BY origin
