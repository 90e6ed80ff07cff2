SELECT coalesce(json_extract_string(properties, $2), '') AS fp, max(CAST(epoch_us(ts) + 1000000000000000000 AS VARCHAR) || '|' || coalesce(json_extract_string(properties, $3), '') || chr(31) || coalesce(json_extract_string(properties, $4), '')), count(*) FILTER (WHERE ts >= $1::TIMESTAMP), count(DISTINCT uid) FILTER (WHERE ts >= $1::TIMESTAMP), count(*) FILTER (WHERE ts < $1::TIMESTAMP), min(ts)
  FROM events
  WHERE product_id = $5 AND env = $6 AND ts >= $7::TIMESTAMP AND ts < $8::TIMESTAMP AND NOT is_bot AND eid = $9::UINTEGER
  GROUP BY fp
  HAVING count(*) FILTER (WHERE ts >= $1::TIMESTAMP) >= $10 AND count(*) FILTER (WHERE ts < $1::TIMESTAMP) = 0
  ORDER BY fp;
-- 1: time.Time 2026-11-09 00:00:00 +0000 UTC
-- 2: string /$exception_fingerprint
-- 3: string /$exception_type
-- 4: string /$exception_message
-- 5: int64 1
-- 6: string live
-- 7: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 8: time.Time 2026-11-09 01:00:00 +0000 UTC
-- 9: uint32 4294967295
-- 10: int64 10
