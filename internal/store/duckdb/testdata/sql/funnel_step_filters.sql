WITH s0 AS (SELECT uid, min(epoch_us(ts)) AS t
  FROM events
  WHERE product_id = $2 AND env = $3 AND ts >= $4::TIMESTAMP AND ts < $5::TIMESTAMP AND NOT is_bot AND eid = $6::UINTEGER AND coalesce(path = $7, false)
  GROUP BY uid), s1 AS (SELECT e.uid, min(epoch_us(e.ts)) AS t
  FROM events e
  JOIN s0 p ON e.uid = p.uid
  WHERE e.product_id = $8 AND e.env = $9 AND e.ts >= $10::TIMESTAMP AND e.ts < $11::TIMESTAMP AND NOT e.is_bot AND e.eid = $12::UINTEGER AND epoch_us(e.ts) - p.t BETWEEN 1 AND $1 AND coalesce(path = $13, false)
  GROUP BY e.uid), s2 AS (SELECT e.uid, min(epoch_us(e.ts)) AS t
  FROM events e
  JOIN s1 p ON e.uid = p.uid
  WHERE e.product_id = $14 AND e.env = $15 AND e.ts >= $16::TIMESTAMP AND e.ts < $17::TIMESTAMP AND NOT e.is_bot AND e.eid = $18::UINTEGER AND epoch_us(e.ts) - p.t BETWEEN 1 AND $1 AND json_extract_string(properties, $19) IS NOT NULL
  GROUP BY e.uid) SELECT (SELECT count(*)
  FROM s0), (SELECT count(*)
  FROM s1), (SELECT count(*)
  FROM s2);
-- 1: int64 86400000000
-- 2: int64 1
-- 3: string live
-- 4: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 5: time.Time 2026-11-09 00:00:00 +0000 UTC
-- 6: uint32 0
-- 7: string /pricing
-- 8: int64 1
-- 9: string live
-- 10: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 11: time.Time 2026-11-10 00:00:00 +0000 UTC
-- 12: uint32 0
-- 13: string /signup
-- 14: int64 1
-- 15: string live
-- 16: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 17: time.Time 2026-11-11 00:00:00 +0000 UTC
-- 18: uint32 2
-- 19: string /plan
