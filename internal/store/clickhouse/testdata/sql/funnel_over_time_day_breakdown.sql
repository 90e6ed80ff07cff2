SELECT toInt64(intDiv(t0, 86400000000)) AS k, NOT (bv IN (?, ?)) AS g_other, if(g_other, '', bv) AS g_value, countIf(r0), countIf(r1), countIf(r2)
  FROM (SELECT *
  FROM (SELECT r0, r1, r2, arrayReduce('min', arrayFilter((v, x, p) -> x = p, v0, ts0, arrayResize(emptyArrayInt64(), length(ts0), t0))) AS bv, t0, t1, t2, 0 AS out
  FROM (SELECT r0, t0, r1, t1, v0, ts0, arrayFilter((x, p) -> x > p AND x <= p + 86400000000, a2, arrayResize(emptyArrayInt64(), length(a2), t1)) AS f2, r1 AND notEmpty(f2) AS r2, arrayReduce('min', f2) AS t2
  FROM (SELECT r0, t0, v0, ts0, arrayFilter((x, p) -> x > p AND x <= p + 86400000000, a1, arrayResize(emptyArrayInt64(), length(a1), t0)) AS f1, r0 AND notEmpty(f1) AS r1, arrayReduce('min', f1) AS t1, a2
  FROM (SELECT countIf(event = ? AND ts >= ? AND ts < ?) > 0 AS r0, minIf(ts, event = ? AND ts >= ? AND ts < ?) AS t0, groupArrayIf(ts, event = ? AND ts < ?) AS a1, groupArrayIf(ts, event = ? AND ts < ?) AS a2, groupArrayIf(prop_values[indexOf(prop_keys, ?)], event = ? AND ts >= ? AND ts < ?) AS v0, groupArrayIf(ts, event = ? AND ts >= ? AND ts < ?) AS ts0
  FROM `strata_golden`.events
  WHERE product_id = ? AND env = ? AND ts >= ? AND ts < ? AND is_bot = 0 AND event IN (?, ?, ?)
  GROUP BY user_id)))
  WHERE r0)
  WHERE NOT out)
  GROUP BY k, g_other, g_value;
-- 1: string pro
-- 2: string free
-- 3: string $pageview
-- 4: int64 1793577600000000
-- 5: int64 1794182400000000
-- 6: string $pageview
-- 7: int64 1793577600000000
-- 8: int64 1794182400000000
-- 9: string signup
-- 10: int64 1794268800000000
-- 11: string purchase
-- 12: int64 1794355200000000
-- 13: string plan
-- 14: string $pageview
-- 15: int64 1793577600000000
-- 16: int64 1794182400000000
-- 17: string $pageview
-- 18: int64 1793577600000000
-- 19: int64 1794182400000000
-- 20: int64 1
-- 21: string live
-- 22: int64 1793577600000000
-- 23: int64 1794355200000000
-- 24: string $pageview
-- 25: string signup
-- 26: string purchase
