SELECT prop_values[indexOf(prop_keys, ?)] AS fp, max(concat(toString(ts + 1000000000000000000), '|', prop_values[indexOf(prop_keys, ?)], '\x1f', prop_values[indexOf(prop_keys, ?)])), countIf(ts >= ?), uniqExactIf(user_id, ts >= ?), countIf(ts < ?), min(ts)
  FROM `strata_golden`.events
  WHERE product_id = ? AND env = ? AND ts >= ? AND ts < ? AND is_bot = 0 AND event = ?
  GROUP BY fp
  HAVING countIf(ts >= ?) >= ? AND countIf(ts < ?) = 0
  ORDER BY fp;
-- 1: string $exception_fingerprint
-- 2: string $exception_type
-- 3: string $exception_message
-- 4: int64 1794182400000000
-- 5: int64 1794182400000000
-- 6: int64 1794182400000000
-- 7: int64 1
-- 8: string live
-- 9: int64 1793577600000000
-- 10: int64 1794186000000000
-- 11: string $exception
-- 12: int64 1794182400000000
-- 13: int64 10
-- 14: int64 1794182400000000
