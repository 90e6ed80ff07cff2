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
  FROM s1 a
  JOIN s2 c ON c.uid = a.uid
  JOIN events e ON e.uid = a.uid
  WHERE e.product_id = $17 AND e.env = $18 AND e.ts >= $19::TIMESTAMP AND e.ts < $20::TIMESTAMP AND NOT e.is_bot AND e.eid = $21::UINTEGER AND epoch_us(e.ts) > a.t AND epoch_us(e.ts) < c.t), v AS (SELECT e.uid, min(coalesce(browser, '')) AS bv
  FROM events e
  JOIN s0 p ON e.uid = p.uid
  WHERE e.product_id = $22 AND e.env = $23 AND e.ts >= $24::TIMESTAMP AND e.ts < $25::TIMESTAMP AND NOT e.is_bot AND e.eid = $26::UINTEGER AND epoch_us(e.ts) - p.t = 0
  GROUP BY e.uid), top AS (SELECT v.bv
  FROM s0 ANTI
  JOIN x0 ON x0.uid = s0.uid
  JOIN v ON v.uid = s0.uid
  GROUP BY v.bv
  ORDER BY count(*) DESC, v.bv
  LIMIT $27), bg AS (SELECT uid, CASE WHEN bv IN (SELECT bv
  FROM top) THEN bv END AS bv
  FROM v) SELECT grouping(bv) = 1, bv, count(*), count(d1), quantile_disc(d1, 0.5), histogram(b1), count(d2), quantile_disc(d2, 0.5), histogram(b2)
  FROM (SELECT bg.bv AS bv, s1.t - s0.t AS d1, CASE WHEN s1.t - s0.t >= 604800000000 THEN 10 WHEN s1.t - s0.t >= 259200000000 THEN 9 WHEN s1.t - s0.t >= 86400000000 THEN 8 WHEN s1.t - s0.t >= 10800000000 THEN 7 WHEN s1.t - s0.t >= 3600000000 THEN 6 WHEN s1.t - s0.t >= 1800000000 THEN 5 WHEN s1.t - s0.t >= 300000000 THEN 4 WHEN s1.t - s0.t >= 60000000 THEN 3 WHEN s1.t - s0.t >= 30000000 THEN 2 WHEN s1.t - s0.t >= 10000000 THEN 1 WHEN s1.t - s0.t >= 0 THEN 0 END AS b1, s2.t - s1.t AS d2, CASE WHEN s2.t - s1.t >= 604800000000 THEN 10 WHEN s2.t - s1.t >= 259200000000 THEN 9 WHEN s2.t - s1.t >= 86400000000 THEN 8 WHEN s2.t - s1.t >= 10800000000 THEN 7 WHEN s2.t - s1.t >= 3600000000 THEN 6 WHEN s2.t - s1.t >= 1800000000 THEN 5 WHEN s2.t - s1.t >= 300000000 THEN 4 WHEN s2.t - s1.t >= 60000000 THEN 3 WHEN s2.t - s1.t >= 30000000 THEN 2 WHEN s2.t - s1.t >= 10000000 THEN 1 WHEN s2.t - s1.t >= 0 THEN 0 END AS b2
  FROM s0
  LEFT JOIN s1 ON s1.uid = s0.uid
  LEFT JOIN s2 ON s2.uid = s0.uid ANTI
  JOIN x0 ON x0.uid = s0.uid
  JOIN bg ON bg.uid = s0.uid)
  GROUP BY GROUPING SETS ((bv), ());
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
-- 27: int 3
