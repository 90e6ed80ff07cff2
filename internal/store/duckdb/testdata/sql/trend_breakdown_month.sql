WITH agg AS (SELECT CASE WHEN ts < $2::TIMESTAMP THEN date_trunc('month', ts) WHEN ts < $4::TIMESTAMP THEN $3::TIMESTAMP ELSE date_trunc('month', ts) END AS bucket, coalesce(json_extract_string(properties, $1), '') AS v, count(*) AS c
  FROM events
  WHERE product_id = $5 AND env = $6 AND ts >= $7::TIMESTAMP AND ts < $8::TIMESTAMP AND NOT is_bot AND eid = $9::UINTEGER
  GROUP BY bucket, v), top AS (SELECT v, row_number() OVER (ORDER BY sum(c) DESC, v) AS rank
  FROM agg
  GROUP BY v
  ORDER BY rank
  LIMIT $10) SELECT bucket, coalesce(top.rank, 0) AS r, CASE WHEN top.rank IS NULL THEN '' ELSE agg.v END AS bv, sum(c)::BIGINT
  FROM agg
  LEFT JOIN top USING (v)
  GROUP BY bucket, r, bv;
-- 1: string /plan
-- 2: time.Time 2026-11-01 00:00:00 +0000 UTC
-- 3: time.Time 2026-11-01 00:00:00 +0000 UTC
-- 4: time.Time 2026-12-01 00:00:00 +0000 UTC
-- 5: int64 1
-- 6: string live
-- 7: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 8: time.Time 2026-11-09 00:00:00 +0000 UTC
-- 9: uint32 0
-- 10: int 5

WITH m AS (SELECT uid, coalesce(json_extract_string(properties, $1), '') AS v, bit_or(1::UBIGINT << (CASE WHEN ts < $4::TIMESTAMP THEN (year(ts) - $2) * 12 + month(ts) - $3 WHEN ts < $5::TIMESTAMP THEN 0 ELSE (year(ts) - $2) * 12 + month(ts) - $3 END)::UBIGINT) AS mask
  FROM events
  WHERE product_id = $6 AND env = $7 AND ts >= $8::TIMESTAMP AND ts < $9::TIMESTAMP AND NOT is_bot AND eid = $10::UINTEGER
  GROUP BY uid, v), top AS (SELECT v, row_number() OVER (ORDER BY count(*) DESC, v) AS rank
  FROM m
  GROUP BY v
  ORDER BY rank
  LIMIT $11), r AS (SELECT top.rank AS r, m.v AS bv, mask
  FROM m
  JOIN top USING (v)
  UNION ALL SELECT 0, '', bit_or(mask)
  FROM m ANTI
  JOIN top USING (v)
  GROUP BY uid) SELECT r, bv, mask, count(*)
  FROM r
  GROUP BY r, bv, mask;
-- 1: string /plan
-- 2: int 2026
-- 3: int 11
-- 4: time.Time 2026-11-01 00:00:00 +0000 UTC
-- 5: time.Time 2026-12-01 00:00:00 +0000 UTC
-- 6: int64 1
-- 7: string live
-- 8: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 9: time.Time 2026-11-09 00:00:00 +0000 UTC
-- 10: uint32 0
-- 11: int 5
