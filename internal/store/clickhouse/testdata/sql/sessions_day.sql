SELECT part, k, page, count() AS visits, sum(bounce), sum(pv), sum(dur), uniqExact(u)
  FROM (SELECT u, dur, pv, bounce, arrayJoin([(toUInt8(0), toInt64(0), ''), (toUInt8(1), toInt64(intDiv(start, 86400000000)), ''), (toUInt8(2), toInt64(0), entry), (toUInt8(3), toInt64(0), exit)]) AS t, t.1 AS part, t.2 AS k, t.3 AS page
  FROM (SELECT u, min(x.1) AS start, max(x.1) - min(x.1) AS dur, countIf(x.3 = 0) AS pv, toUInt64(pv <= 1 AND countIf(x.3 = 2) = 0) AS bounce, tupleElement(minIf((x.1, x.2), x.3 = 0), 2) AS entry, tupleElement(maxIf((x.1, x.2), x.3 = 0), 2) AS exit, max(x.4) AS m
  FROM (SELECT u, sid, arrayJoin(arrayMap((e, v) -> (e, v), ev, arrayCumSum(arrayMap((d, i) -> toUInt32(i = 1 OR d >= ?), arrayDifference(arrayMap(e -> e.1, ev)), arrayEnumerate(ev))))) AS xn, xn.1 AS x, xn.2 AS n
  FROM (SELECT user_id AS u, prop_values[indexOf(prop_keys, ?)] AS sid, arraySort(groupArray((ts, path, multiIf(event = ?, toUInt8(0), event IN (?, ?), toUInt8(1), toUInt8(2)), toUInt8(1)))) AS ev
  FROM `strata_golden`.events
  WHERE product_id = ? AND env = ? AND ts >= ? AND ts < ? AND is_bot = 0
  GROUP BY u, sid))
  GROUP BY u, sid, n
  HAVING start >= ? AND start < ? AND m = 1))
  WHERE part < 2 OR pv > 0
  GROUP BY part, k, page
  ORDER BY part, visits DESC, page
  LIMIT ? BY part;
-- 1: int64 1800000000
-- 2: string $session_id
-- 3: string $pageview
-- 4: string $identify
-- 5: string $exposure
-- 6: int64 1
-- 7: string live
-- 8: int64 1793575800000000
-- 9: int64 1794268800000000
-- 10: int64 1793577600000000
-- 11: int64 1794182400000000
-- 12: int 10
