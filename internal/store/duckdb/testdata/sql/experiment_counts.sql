WITH x AS (SELECT uid, min(t) AS t0, min(v) AS v, count(*) AS n
  FROM (SELECT uid, v, min(t) AS t
  FROM (SELECT uid, epoch_us(ts) AS t, coalesce(json_extract_string(properties, $1), '') AS v
  FROM events
  WHERE product_id = $2 AND env = $3 AND ts >= $4::TIMESTAMP AND ts < $5::TIMESTAMP AND NOT is_bot AND eid = $6::UINTEGER AND coalesce(TRY_CAST(json_extract_string(properties, $7) AS DOUBLE) = $8, false))
  GROUP BY uid, v)
  GROUP BY uid), m0 AS (SELECT e.uid, min(epoch_us(e.ts)) AS t
  FROM events e
  JOIN x ON e.uid = x.uid
  WHERE e.product_id = $9 AND e.env = $10 AND e.ts >= $11::TIMESTAMP AND e.ts < $12::TIMESTAMP AND NOT e.is_bot AND x.n = 1 AND epoch_us(e.ts) - x.t0 >= 0 AND coalesce(TRY_CAST(json_extract_string(properties, $13) AS DOUBLE) = $14, false)
  GROUP BY e.uid), m1 AS (SELECT e.uid, min(epoch_us(e.ts)) AS t
  FROM events e
  JOIN x ON e.uid = x.uid
  WHERE e.product_id = $15 AND e.env = $16 AND e.ts >= $17::TIMESTAMP AND e.ts < $18::TIMESTAMP AND NOT e.is_bot AND x.n = 1 AND epoch_us(e.ts) - x.t0 >= 0 AND e.eid = $19::UINTEGER
  GROUP BY e.uid) SELECT -1, CASE WHEN n > 1 THEN '' ELSE v END AS arm, n > 1 AS mixed, epoch_us(make_timestamp(t0)) // 86400000000 AS day, count(*)
  FROM x
  GROUP BY arm, mixed, day
  UNION ALL SELECT 0, x.v, false, epoch_us(make_timestamp(m0.t)) // 86400000000 AS day, count(*)
  FROM m0
  JOIN x ON x.uid = m0.uid
  GROUP BY x.v, day
  UNION ALL SELECT 1, x.v, false, epoch_us(make_timestamp(m1.t)) // 86400000000 AS day, count(*)
  FROM m1
  JOIN x ON x.uid = m1.uid
  GROUP BY x.v, day;
-- 1: string /variant
-- 2: int64 1
-- 3: string live
-- 4: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 5: time.Time 2026-11-09 00:00:00 +0000 UTC
-- 6: uint32 4294967295
-- 7: string /experiment_id
-- 8: float64 7
-- 9: int64 1
-- 10: string live
-- 11: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 12: time.Time 2026-11-09 00:00:00 +0000 UTC
-- 13: string /converted
-- 14: float64 1
-- 15: int64 1
-- 16: string live
-- 17: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 18: time.Time 2026-11-09 00:00:00 +0000 UTC
-- 19: uint32 2
