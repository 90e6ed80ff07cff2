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
  GROUP BY e.uid), x0 AS (SELECT DISTINCT a.uid
  FROM s0 a
  JOIN s2 c ON c.uid = a.uid
  JOIN events e ON e.uid = a.uid
  WHERE e.product_id = $17 AND e.env = $18 AND e.ts >= $19::TIMESTAMP AND e.ts < $20::TIMESTAMP AND NOT e.is_bot AND e.eid = $21::UINTEGER AND epoch_us(e.ts) > a.t AND epoch_us(e.ts) < c.t), v AS (SELECT e.uid, min(coalesce(browser, '')) AS bv
  FROM events e
  JOIN s0 p ON e.uid = p.uid
  WHERE e.product_id = $22 AND e.env = $23 AND e.ts >= $24::TIMESTAMP AND e.ts < $25::TIMESTAMP AND NOT e.is_bot AND e.eid = $26::UINTEGER AND epoch_us(e.ts) - p.t = 0
  GROUP BY e.uid) SELECT u.distinct_id, s1.t, s2.t
  FROM s0
  LEFT JOIN s1 ON s1.uid = s0.uid
  LEFT JOIN s2 ON s2.uid = s0.uid ANTI
  JOIN x0 ON x0.uid = s0.uid
  JOIN v ON v.uid = s0.uid
  JOIN users u ON u.product_id = $27 AND u.uid = s0.uid
  WHERE s1.t IS NOT NULL AND s2.t IS NULL AND v.bv = $28 AND (s1.t < $29 OR (s1.t = $30 AND u.distinct_id > $31))
  ORDER BY s1.t DESC, u.distinct_id
  LIMIT $32;
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
-- 17: int64 1
-- 18: string live
-- 19: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 20: time.Time 2026-11-11 00:00:00 +0000 UTC
-- 21: uint32 4294967295
-- 22: int64 1
-- 23: string live
-- 24: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 25: time.Time 2026-11-09 00:00:00 +0000 UTC
-- 26: uint32 0
-- 27: int64 1
-- 28: string Firefox
-- 29: int64 1780000000000000
-- 30: int64 1780000000000000
-- 31: string u9
-- 32: int 51
