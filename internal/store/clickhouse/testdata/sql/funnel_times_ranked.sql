SELECT tupleElement(g, 1) AS g_whole, tupleElement(g, 2) AS g_other, tupleElement(g, 3) AS g_value, countIf(r0), countIf(r1), arrayElement(arraySort(groupArrayIf((t1 - t0), r1)), intDiv(toInt64(countIf(r1)) + 1, 2)), countIf(r1 AND (t1 - t0) >= 0 AND (t1 - t0) < 10000000), countIf(r1 AND (t1 - t0) >= 10000000 AND (t1 - t0) < 30000000), countIf(r1 AND (t1 - t0) >= 30000000 AND (t1 - t0) < 60000000), countIf(r1 AND (t1 - t0) >= 60000000 AND (t1 - t0) < 300000000), countIf(r1 AND (t1 - t0) >= 300000000 AND (t1 - t0) < 1800000000), countIf(r1 AND (t1 - t0) >= 1800000000 AND (t1 - t0) < 3600000000), countIf(r1 AND (t1 - t0) >= 3600000000 AND (t1 - t0) < 10800000000), countIf(r1 AND (t1 - t0) >= 10800000000 AND (t1 - t0) < 86400000000), countIf(r1 AND (t1 - t0) >= 86400000000 AND (t1 - t0) < 259200000000), countIf(r1 AND (t1 - t0) >= 259200000000 AND (t1 - t0) < 604800000000), countIf(r1 AND (t1 - t0) >= 604800000000), countIf(r2), arrayElement(arraySort(groupArrayIf((t2 - t1), r2)), intDiv(toInt64(countIf(r2)) + 1, 2)), countIf(r2 AND (t2 - t1) >= 0 AND (t2 - t1) < 10000000), countIf(r2 AND (t2 - t1) >= 10000000 AND (t2 - t1) < 30000000), countIf(r2 AND (t2 - t1) >= 30000000 AND (t2 - t1) < 60000000), countIf(r2 AND (t2 - t1) >= 60000000 AND (t2 - t1) < 300000000), countIf(r2 AND (t2 - t1) >= 300000000 AND (t2 - t1) < 1800000000), countIf(r2 AND (t2 - t1) >= 1800000000 AND (t2 - t1) < 3600000000), countIf(r2 AND (t2 - t1) >= 3600000000 AND (t2 - t1) < 10800000000), countIf(r2 AND (t2 - t1) >= 10800000000 AND (t2 - t1) < 86400000000), countIf(r2 AND (t2 - t1) >= 86400000000 AND (t2 - t1) < 259200000000), countIf(r2 AND (t2 - t1) >= 259200000000 AND (t2 - t1) < 604800000000), countIf(r2 AND (t2 - t1) >= 604800000000)
  FROM (SELECT *, toUInt8(1) AS o
  FROM (SELECT *
  FROM (SELECT r0, r1, r2, arrayReduce('min', arrayFilter((v, x, p) -> x = p, v0, ts0, arrayResize(emptyArrayInt64(), length(ts0), t0))) AS bv, t0, t1, t2, 0 OR (r2 AND arrayExists((x, a, c) -> x > a AND x < c, x0, arrayResize(emptyArrayInt64(), length(x0), t1), arrayResize(emptyArrayInt64(), length(x0), t2))) AS out
  FROM (SELECT r0, t0, r1, t1, x0, v0, ts0, arrayFilter((x, p) -> x > p AND x <= p + 86400000000, a2, arrayResize(emptyArrayInt64(), length(a2), t1)) AS f2, r1 AND notEmpty(f2) AS r2, arrayReduce('min', f2) AS t2
  FROM (SELECT r0, t0, x0, v0, ts0, arrayFilter((x, p) -> x > p AND x <= p + 86400000000, a1, arrayResize(emptyArrayInt64(), length(a1), t0)) AS f1, r0 AND notEmpty(f1) AS r1, arrayReduce('min', f1) AS t1, a2
  FROM (SELECT countIf(event = ? AND ts >= ? AND ts < ?) > 0 AS r0, minIf(ts, event = ? AND ts >= ? AND ts < ?) AS t0, groupArrayIf(ts, event = ? AND ts < ?) AS a1, groupArrayIf(ts, event = ? AND ts < ?) AS a2, groupArrayIf(ts, event = ? AND ts < ?) AS x0, groupArrayIf(browser, event = ? AND ts >= ? AND ts < ?) AS v0, groupArrayIf(ts, event = ? AND ts >= ? AND ts < ?) AS ts0
  FROM `strata_golden`.events
  WHERE product_id = ? AND env = ? AND ts >= ? AND ts < ? AND is_bot = 0 AND event IN (?, ?, ?, ?)
  GROUP BY user_id)))
  WHERE r0)
  WHERE NOT out)) ARRAY
  JOIN [(toUInt8(1), toUInt8(0), ''), (toUInt8(0), o, if(o, '', bv))] AS g
  GROUP BY g_whole, g_other, g_value;
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
-- 11: string logout
-- 12: int64 1794355200000000
-- 13: string $pageview
-- 14: int64 1793577600000000
-- 15: int64 1794182400000000
-- 16: string $pageview
-- 17: int64 1793577600000000
-- 18: int64 1794182400000000
-- 19: int64 1
-- 20: string live
-- 21: int64 1793577600000000
-- 22: int64 1794355200000000
-- 23: string $pageview
-- 24: string signup
-- 25: string purchase
-- 26: string logout
