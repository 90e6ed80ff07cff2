SELECT toInt64(intDiv(ts, 3600000000)) AS k, toUInt64(0) AS r, '' AS bv, count()
  FROM `strata_golden`.events
  WHERE product_id = ? AND env = ? AND ts >= ? AND ts < ? AND is_bot = 0 AND event = ? AND (path != '' AND path = ?) AND (has(prop_keys, ?) AND ifNull(toFloat64OrNull(prop_values[indexOf(prop_keys, ?)]) = ?, 0)) AND NOT (has(prop_keys, ?) AND prop_values[indexOf(prop_keys, ?)] = ?) AND (url != '' AND positionCaseInsensitiveUTF8(url, ?) > 0) AND NOT (referrer != '' AND positionCaseInsensitiveUTF8(referrer, ?) > 0) AND (browser != '' AND match(browser, ?)) AND (has(prop_keys, ?) AND ifNull(toFloat64OrNull(prop_values[indexOf(prop_keys, ?)]) > ?, 0)) AND (has(prop_keys, ?) AND ifNull(toFloat64OrNull(prop_values[indexOf(prop_keys, ?)]) < ?, 0)) AND (has(prop_keys, ?)) AND NOT (has(prop_keys, ?))
  GROUP BY k, r, bv;
-- 1: int64 1
-- 2: string live
-- 3: int64 1793577600000000
-- 4: int64 1794182400000000
-- 5: string $pageview
-- 6: string /pricing
-- 7: string seats
-- 8: string seats
-- 9: float64 3
-- 10: string plan
-- 11: string plan
-- 12: string free
-- 13: string example
-- 14: string spam
-- 15: string (?:^Chr)
-- 16: string seats
-- 17: string seats
-- 18: float64 1
-- 19: string seats
-- 20: string seats
-- 21: float64 10
-- 22: string plan
-- 23: string coupon
