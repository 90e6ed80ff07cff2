WITH s0 AS (SELECT json_extract_string(properties, $1) AS g, min(epoch_us(ts)) AS t
  FROM events
  WHERE product_id = $3 AND env = $4 AND ts >= $5::TIMESTAMP AND ts < $6::TIMESTAMP AND NOT is_bot AND eid = $7::UINTEGER AND json_extract_string(properties, $1) IS NOT NULL
  GROUP BY g), s1 AS (SELECT p.g, min(epoch_us(e.ts)) AS t
  FROM events e
  JOIN s0 p ON json_extract_string(e.properties, $1) = p.g
  WHERE e.product_id = $8 AND e.env = $9 AND e.ts >= $10::TIMESTAMP AND e.ts < $11::TIMESTAMP AND NOT e.is_bot AND e.eid = $12::UINTEGER AND epoch_us(e.ts) - p.t BETWEEN 1 AND $2
  GROUP BY p.g), s2 AS (SELECT p.g, min(epoch_us(e.ts)) AS t
  FROM events e
  JOIN s1 p ON json_extract_string(e.properties, $1) = p.g
  WHERE e.product_id = $13 AND e.env = $14 AND e.ts >= $15::TIMESTAMP AND e.ts < $16::TIMESTAMP AND NOT e.is_bot AND e.eid = $17::UINTEGER AND epoch_us(e.ts) - p.t BETWEEN 1 AND $2
  GROUP BY p.g) SELECT (SELECT count(*)
  FROM s0), (SELECT count(*)
  FROM s1), (SELECT count(*)
  FROM s2);
-- 1: string /$groups/company
-- 2: int64 86400000000
-- 3: int64 1
-- 4: string live
-- 5: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 6: time.Time 2026-11-09 00:00:00 +0000 UTC
-- 7: uint32 0
-- 8: int64 1
-- 9: string live
-- 10: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 11: time.Time 2026-11-10 00:00:00 +0000 UTC
-- 12: uint32 1
-- 13: int64 1
-- 14: string live
-- 15: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 16: time.Time 2026-11-11 00:00:00 +0000 UTC
-- 17: uint32 2
