SELECT uuid, ts, event, coalesce(url, ''), coalesce(path, ''), coalesce(browser, ''), coalesce(os, ''), coalesce(device_type, ''), coalesce(json_extract_string(properties, $1), ''), properties
  FROM events
  WHERE product_id = $2 AND env = $3 AND uid = $4::UINTEGER AND ts < $5::TIMESTAMP AND NOT is_bot
  ORDER BY ts DESC, uuid
  LIMIT $6;
-- 1: string /$session_id
-- 2: int64 1
-- 3: string live
-- 4: uint32 0
-- 5: time.Time 2026-11-02 02:00:00 +0000 UTC
-- 6: int 101
