WITH m AS (SELECT uid, bit_or(1::UBIGINT << ((epoch_us(ts) - $1) // 604800000000)::UBIGINT) AS mask
  FROM events
  WHERE product_id = $2 AND env = $3 AND ts >= $4::TIMESTAMP AND ts < $5::TIMESTAMP AND NOT is_bot AND eid = $6::UINTEGER
  GROUP BY uid) SELECT 0, '', mask, count(*)
  FROM m
  GROUP BY mask;
-- 1: int64 1793577600000000
-- 2: int64 1
-- 3: string live
-- 4: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 5: time.Time 2026-11-09 00:00:00 +0000 UTC
-- 6: uint32 1
