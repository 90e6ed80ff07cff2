SELECT countIf(r0), countIf(r1), countIf(r2)
  FROM (SELECT r0, r1, arrayFilter((x, p) -> x > p AND x <= p + 86400000000, a2, arrayResize(emptyArrayInt64(), length(a2), t1)) AS f2, r1 AND notEmpty(f2) AS r2, arrayReduce('min', f2) AS t2
  FROM (SELECT r0, arrayFilter((x, p) -> x > p AND x <= p + 86400000000, a1, arrayResize(emptyArrayInt64(), length(a1), t0)) AS f1, r0 AND notEmpty(f1) AS r1, arrayReduce('min', f1) AS t1, a2
  FROM (SELECT countIf(event = ? AND ts >= ? AND ts < ? AND (path != '' AND path = ?)) > 0 AS r0, minIf(ts, event = ? AND ts >= ? AND ts < ? AND (path != '' AND path = ?)) AS t0, groupArrayIf(ts, event = ? AND ts < ? AND (path != '' AND path = ?)) AS a1, groupArrayIf(ts, event = ? AND ts < ? AND (has(prop_keys, ?))) AS a2
  FROM `strata_golden`.events
  WHERE product_id = ? AND env = ? AND ts >= ? AND ts < ? AND is_bot = 0 AND event IN (?, ?, ?)
  GROUP BY user_id)));
-- 1: string $pageview
-- 2: int64 1793577600000000
-- 3: int64 1794182400000000
-- 4: string /pricing
-- 5: string $pageview
-- 6: int64 1793577600000000
-- 7: int64 1794182400000000
-- 8: string /pricing
-- 9: string $pageview
-- 10: int64 1794268800000000
-- 11: string /signup
-- 12: string purchase
-- 13: int64 1794355200000000
-- 14: string plan
-- 15: int64 1
-- 16: string live
-- 17: int64 1793577600000000
-- 18: int64 1794355200000000
-- 19: string $pageview
-- 20: string $pageview
-- 21: string purchase
