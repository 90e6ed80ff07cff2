SELECT toInt64(intDiv(t0 + 259200000000, 604800000000)) AS k, countIf(r0), countIf(r1), countIf(r2)
  FROM (SELECT *
  FROM (SELECT r0, r1, r2, '' AS bv, t0, t1, t2, 0 AS out
  FROM (SELECT r0, t0, r1, t1, arrayFilter((x, p) -> x > p AND x <= p + 86400000000, a2, arrayResize(emptyArrayInt64(), length(a2), t1)) AS f2, r1 AND notEmpty(f2) AS r2, arrayReduce('min', f2) AS t2
  FROM (SELECT r0, t0, arrayFilter((x, p) -> x > p AND x <= p + 86400000000, a1, arrayResize(emptyArrayInt64(), length(a1), t0)) AS f1, r0 AND notEmpty(f1) AS r1, arrayReduce('min', f1) AS t1, a2
  FROM (SELECT countIf(event = ? AND ts >= ? AND ts < ?) > 0 AS r0, minIf(ts, event = ? AND ts >= ? AND ts < ?) AS t0, groupArrayIf(ts, event = ? AND ts < ?) AS a1, groupArrayIf(ts, event = ? AND ts < ?) AS a2
  FROM `strata_golden`.events
  WHERE product_id = ? AND env = ? AND ts >= ? AND ts < ? AND is_bot = 0 AND event IN (?, ?, ?)
  GROUP BY user_id)))
  WHERE r0)
  WHERE NOT out)
  GROUP BY k;
-- 1: string $pageview
-- 2: int64 1793577600000000
-- 3: int64 1794182400000000
-- 4: string $pageview
-- 5: int64 1793577600000000
-- 6: int64 1794182400000000
-- 7: string signup
-- 8: int64 1794268800000000
-- 9: string purchase
-- 10: int64 1794355200000000
-- 11: int64 1
-- 12: string live
-- 13: int64 1793577600000000
-- 14: int64 1794355200000000
-- 15: string $pageview
-- 16: string signup
-- 17: string purchase
