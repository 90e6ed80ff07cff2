WITH s0 AS (SELECT uid, min(epoch_us(ts)) AS t
  FROM events
  WHERE product_id = $2 AND env = $3 AND ts >= $4::TIMESTAMP AND ts < $5::TIMESTAMP AND NOT is_bot AND eid = $6::UINTEGER
  GROUP BY uid), s1 AS (SELECT e.uid, min(epoch_us(e.ts)) AS t
  FROM events e
  JOIN s0 p ON e.uid = p.uid
  WHERE e.product_id = $7 AND e.env = $8 AND e.ts >= $9::TIMESTAMP AND e.ts < $10::TIMESTAMP AND NOT e.is_bot AND e.eid = $11::UINTEGER AND epoch_us(e.ts) - p.t BETWEEN 1 AND $1
  GROUP BY e.uid), s2 AS (SELECT e.uid, min(epoch_us(e.ts)) AS t
  FROM events e
  JOIN s1 p ON e.uid = p.uid
  WHERE e.product_id = $12 AND e.env = $13 AND e.ts >= $14::TIMESTAMP AND e.ts < $15::TIMESTAMP AND NOT e.is_bot AND e.eid = $16::UINTEGER AND epoch_us(e.ts) - p.t BETWEEN 1 AND $1
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
-- 7: int64 1
-- 8: string live
-- 9: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 10: time.Time 2026-11-10 00:00:00 +0000 UTC
-- 11: uint32 1
-- 12: int64 1
-- 13: string live
-- 14: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 15: time.Time 2026-11-11 00:00:00 +0000 UTC
-- 16: uint32 2
