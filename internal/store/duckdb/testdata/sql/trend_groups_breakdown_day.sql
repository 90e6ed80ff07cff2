WITH agg AS (SELECT date_trunc('day', ts) AS bucket, coalesce(json_extract_string(properties, $2), '') AS v, count(*) AS c
  FROM events
  WHERE product_id = $3 AND env = $4 AND ts >= $5::TIMESTAMP AND ts < $6::TIMESTAMP AND NOT is_bot AND eid = $7::UINTEGER AND json_extract_string(properties, $1) IS NOT NULL
  GROUP BY bucket, v), top AS (SELECT v, row_number() OVER (ORDER BY sum(c) DESC, v) AS rank
  FROM agg
  GROUP BY v
  ORDER BY rank
  LIMIT $8) SELECT bucket, coalesce(top.rank, 0) AS r, CASE WHEN top.rank IS NULL THEN '' ELSE agg.v END AS bv, sum(c)::BIGINT
  FROM agg
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

WITH m AS (SELECT json_extract_string(properties, $1) AS g, coalesce(json_extract_string(properties, $2), '') AS v, bit_or(1::UBIGINT << ((epoch_us(ts) - $3) // 86400000000)::UBIGINT) AS mask
  FROM events
  WHERE product_id = $4 AND env = $5 AND ts >= $6::TIMESTAMP AND ts < $7::TIMESTAMP AND NOT is_bot AND eid = $8::UINTEGER AND json_extract_string(properties, $1) IS NOT NULL
  GROUP BY g, v), top AS (SELECT v, row_number() OVER (ORDER BY count(*) DESC, v) AS rank
  FROM m
  GROUP BY v
  ORDER BY rank
  LIMIT $9), r AS (SELECT top.rank AS r, m.v AS bv, mask
  FROM m
  JOIN top USING (v)
  UNION ALL SELECT 0, '', bit_or(mask)
  FROM m ANTI
  JOIN top USING (v)
  GROUP BY g) SELECT r, bv, mask, count(*)
  FROM r
  GROUP BY r, bv, mask;
-- 1: string /$groups/company
-- 2: string /plan
-- 3: int64 1793577600000000
-- 4: int64 1
-- 5: string live
-- 6: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 7: time.Time 2026-11-09 00:00:00 +0000 UTC
-- 8: uint32 0
-- 9: int 5
