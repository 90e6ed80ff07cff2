SELECT ts, distinct_id, browser, os, url, properties
  FROM `strata_golden`.events
  WHERE product_id = ? AND env = ? AND ts >= ? AND ts < ? AND is_bot = 0 AND event = ? AND (has(prop_keys, ?) AND prop_values[indexOf(prop_keys, ?)] = ?)
  ORDER BY ts DESC, distinct_id, properties
  LIMIT ?;
-- 1: int64 1
-- 2: string live
-- 3: int64 1793577600000000
-- 4: int64 1794182400000000
-- 5: string $exception
-- 6: string $exception_fingerprint
-- 7: string $exception_fingerprint
-- 8: string f1
-- 9: int 50
