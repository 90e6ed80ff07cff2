SELECT ts, distinct_id, coalesce(browser, ''), coalesce(os, ''), coalesce(url, ''), properties
  FROM events
  WHERE product_id = $1 AND env = $2 AND ts >= $3::TIMESTAMP AND ts < $4::TIMESTAMP AND NOT is_bot AND eid = $5::UINTEGER AND coalesce(json_extract_string(properties, $6) = $7, false)
  ORDER BY ts DESC, distinct_id, properties
  LIMIT $8;
-- 1: int64 1
-- 2: string live
-- 3: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 4: time.Time 2026-11-09 00:00:00 +0000 UTC
-- 5: uint32 4294967295
-- 6: string /$exception_fingerprint
-- 7: string f1
-- 8: int 50
