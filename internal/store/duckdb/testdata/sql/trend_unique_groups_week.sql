WITH m AS (SELECT json_extract_string(properties, $1) AS g, bit_or(1::UBIGINT << ((epoch_us(ts) - $2) // 604800000000)::UBIGINT) AS mask
  FROM events
  WHERE product_id = $3 AND env = $4 AND ts >= $5::TIMESTAMP AND ts < $6::TIMESTAMP AND NOT is_bot AND eid = $7::UINTEGER AND json_extract_string(properties, $1) IS NOT NULL
  GROUP BY g) SELECT 0, '', mask, count(*)
  FROM m
  GROUP BY mask;
-- 1: string /$groups/company
-- 2: int64 1793577600000000
-- 3: int64 1
-- 4: string live
-- 5: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 6: time.Time 2026-11-09 00:00:00 +0000 UTC
-- 7: uint32 1
