SELECT prop_values[indexOf(prop_keys, ?)] AS fp, max(concat(toString(ts + 1000000000000000000), '|', prop_values[indexOf(prop_keys, ?)], '\x1f', prop_values[indexOf(prop_keys, ?)])), count() AS n, uniqExact(user_id), min(ts), max(ts), countIf(ts >= ? AND ts < ?), countIf(ts >= ? AND ts < ?)
  FROM `strata_golden`.events
  WHERE product_id = ? AND env = ? AND ts >= ? AND ts < ? AND is_bot = 0 AND event = ? AND (has(prop_keys, ?) AND prop_values[indexOf(prop_keys, ?)] = ?)
  GROUP BY fp
  ORDER BY n DESC, fp
  LIMIT ?;
-- 1: string $exception_fingerprint
-- 2: string $exception_type
-- 3: string $exception_message
-- 4: int64 1793577600000000
-- 5: int64 1793664000000000
-- 6: int64 1793664000000000
-- 7: int64 1793750400000000
-- 8: int64 1
-- 9: string live
-- 10: int64 1793577600000000
-- 11: int64 1794182400000000
-- 12: string $exception
-- 13: string $release
-- 14: string $release
-- 15: string 1.4.2
-- 16: int 50
