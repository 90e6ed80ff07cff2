WITH base AS (SELECT date_trunc('month', ts) AS bucket, uid, coalesce(json_extract_string(properties, $1), '') AS v
  FROM events
  WHERE product_id = $2 AND env = $3 AND ts >= $4 AND ts < $5 AND NOT is_bot AND eid = $6), top AS (SELECT v, row_number() OVER (ORDER BY count(*) DESC, v) AS rank
  FROM base
  GROUP BY v
  ORDER BY rank
  LIMIT $7) SELECT bucket, coalesce(top.rank, 0) AS r, CASE WHEN top.rank IS NULL THEN '' ELSE base.v END AS bv, count(*)
  FROM base
  LEFT JOIN top USING (v)
  GROUP BY bucket, r, bv;
-- 1: string /plan
-- 2: int64 1
-- 3: string live
-- 4: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 5: time.Time 2026-11-09 00:00:00 +0000 UTC
-- 6: uint32 0
-- 7: int 5

WITH base AS (SELECT date_trunc('month', ts) AS bucket, uid, coalesce(json_extract_string(properties, $1), '') AS v
  FROM events
  WHERE product_id = $2 AND env = $3 AND ts >= $4 AND ts < $5 AND NOT is_bot AND eid = $6), top AS (SELECT v, row_number() OVER (ORDER BY count(DISTINCT uid) DESC, v) AS rank
  FROM base
  GROUP BY v
  ORDER BY rank
  LIMIT $7) SELECT bucket, coalesce(top.rank, 0) AS r, CASE WHEN top.rank IS NULL THEN '' ELSE base.v END AS bv, bit_count(bitstring_agg(uid, 0, 65538))
  FROM base
  LEFT JOIN top USING (v)
  GROUP BY bucket, r, bv;
-- 1: string /plan
-- 2: int64 1
-- 3: string live
-- 4: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 5: time.Time 2026-11-09 00:00:00 +0000 UTC
-- 6: uint32 0
-- 7: int 5
