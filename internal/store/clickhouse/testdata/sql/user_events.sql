SELECT uuid, ts, event, url, path, browser, os, device_type, prop_values[indexOf(prop_keys, ?)], properties
  FROM `strata_golden`.events
  WHERE product_id = ? AND env = ? AND distinct_id = ? AND ts < ? AND is_bot = 0
  ORDER BY ts DESC, uuid
  LIMIT ?;
-- 1: string $session_id
-- 2: int64 1
-- 3: string live
-- 4: string u1
-- 5: int64 1793584800000000
-- 6: int 101
