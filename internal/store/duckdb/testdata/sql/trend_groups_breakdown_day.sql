WITH base AS (SELECT date_trunc('day', ts) AS bucket, json_extract_string(properties, $1) AS g, coalesce(json_extract_string(properties, $2), '') AS v
  FROM events
  WHERE product_id = $3 AND env = $4 AND ts >= $5 AND ts < $6 AND NOT is_bot AND eid = $7 AND json_extract_string(properties, $1) IS NOT NULL), top AS (SELECT v, row_number() OVER (ORDER BY count(*) DESC, v) AS rank
  FROM base
  GROUP BY v
  ORDER BY rank
  LIMIT $8) SELECT bucket, coalesce(top.rank, 0) AS r, CASE WHEN top.rank IS NULL THEN '' ELSE base.v END AS bv, count(*)
  FROM base
  LEFT JOIN top USING (v)
  GROUP BY bucket, r, bv;
-- 1: string /$groups/company
-- 2: string /plan
-- 3: int64 1
-- 4: string live
-- 5: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 6: time.Time 2026-11-09 00:00:00 +0000 UTC
-- 7: uint32 0
-- 8: int 5

WITH base AS (SELECT date_trunc('day', ts) AS bucket, json_extract_string(properties, $1) AS g, coalesce(json_extract_string(properties, $2), '') AS v
  FROM events
  WHERE product_id = $3 AND env = $4 AND ts >= $5 AND ts < $6 AND NOT is_bot AND eid = $7 AND json_extract_string(properties, $1) IS NOT NULL), top AS (SELECT v, row_number() OVER (ORDER BY count(DISTINCT g) DESC, v) AS rank
  FROM base
  GROUP BY v
  ORDER BY rank
  LIMIT $8) SELECT bucket, coalesce(top.rank, 0) AS r, CASE WHEN top.rank IS NULL THEN '' ELSE base.v END AS bv, count(DISTINCT g)
  FROM base
  LEFT JOIN top USING (v)
  GROUP BY bucket, r, bv;
-- 1: string /$groups/company
-- 2: string /plan
-- 3: int64 1
-- 4: string live
-- 5: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 6: time.Time 2026-11-09 00:00:00 +0000 UTC
-- 7: uint32 0
-- 8: int 5
