SELECT coalesce(json_extract_string(properties, $1), '') AS fp, max(CAST(epoch_us(ts) + 1000000000000000000 AS VARCHAR) || '|' || coalesce(json_extract_string(properties, $2), '') || chr(31) || coalesce(json_extract_string(properties, $3), '')), count(*) AS n, count(DISTINCT uid), min(ts), max(ts), count(*) FILTER (WHERE ts >= $4 AND ts < $5), count(*) FILTER (WHERE ts >= $6 AND ts < $7)
  FROM events
  WHERE product_id = $8 AND env = $9 AND ts >= $10 AND ts < $11 AND NOT is_bot AND eid = $12 AND coalesce(json_extract_string(properties, $13) = $14, false)
  GROUP BY fp
  ORDER BY n DESC, fp
  LIMIT $15;
-- 1: string /$exception_fingerprint
-- 2: string /$exception_type
-- 3: string /$exception_message
-- 4: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 5: time.Time 2026-11-03 00:00:00 +0000 UTC
-- 6: time.Time 2026-11-03 00:00:00 +0000 UTC
-- 7: time.Time 2026-11-04 00:00:00 +0000 UTC
-- 8: int64 1
-- 9: string live
-- 10: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 11: time.Time 2026-11-09 00:00:00 +0000 UTC
-- 12: uint32 4294967295
-- 13: string /$release
-- 14: string 1.4.2
-- 15: int 50
