SELECT r_step, r_n, count() AS r_c
  FROM (SELECT arrayJoin(arrayFilter(z1 -> z1.3 = 1, [(toUInt8(1), pa_n1, pa_h1), (toUInt8(2), pa_n2, pa_h2), (toUInt8(3), pa_n3, pa_h3)])) AS r, r.1 AS r_step, r.2 AS r_n
  FROM (SELECT u, did, arrayMap(pq1 -> pq1.1, ev) AS a_t, arrayMap(pq2 -> pq2.2, ev) AS a_n, arrayMap((pq3, pq4) -> toUInt8(pq4 = 1 OR pq3 >= ?), arrayDifference(a_t), arrayEnumerate(a_t)) AS a_new, arrayPopBack(arrayPushFront(a_n, '')) AS a_prev, arrayMap((pq5, pq6, pq7) -> toUInt8(pq5 = 1 OR pq6 != pq7), a_new, a_n, a_prev) AS a_keep, arrayFilter((pq8, pq9) -> pq9 = 1, a_n, a_keep) AS k_n, arrayFilter((pq10, pq11) -> pq11 = 1, a_t, a_keep) AS k_t, arrayFilter((pq12, pq13) -> pq13 = 1, arrayCumSum(a_new), a_keep) AS k_v, toInt64(indexOf(k_n, ?)) AS pa_a, toUInt8(pa_a > 0 AND pa_a - 0 >= 1 AND pa_a - 0 <= length(k_n) AND k_v[pa_a - 0] = k_v[pa_a]) AS pa_h1, k_n[pa_a - 0] AS pa_n1, k_t[pa_a - 0] AS pa_t1, toUInt8(pa_a > 0 AND pa_a - 1 >= 1 AND pa_a - 1 <= length(k_n) AND k_v[pa_a - 1] = k_v[pa_a]) AS pa_h2, k_n[pa_a - 1] AS pa_n2, k_t[pa_a - 1] AS pa_t2, toUInt8(pa_a > 0 AND pa_a - 2 >= 1 AND pa_a - 2 <= length(k_n) AND k_v[pa_a - 2] = k_v[pa_a]) AS pa_h3, k_n[pa_a - 2] AS pa_n3, k_t[pa_a - 2] AS pa_t3
  FROM (SELECT user_id AS u, any(distinct_id) AS did, arraySort(groupArray((ts, event))) AS ev
  FROM `strata_golden`.events
  WHERE product_id = ? AND env = ? AND ts >= ? AND ts < ? AND is_bot = 0 AND (path != '' AND path = ?) AND (has(prop_keys, ?) AND ifNull(toFloat64OrNull(prop_values[indexOf(prop_keys, ?)]) = ?, 0))
  GROUP BY u)))
  GROUP BY r_step, r_n
  ORDER BY r_step, r_c DESC, r_n
  LIMIT ? BY r_step;
-- 1: int64 1800000000
-- 2: string purchase
-- 3: int64 1
-- 4: string live
-- 5: int64 1793577600000000
-- 6: int64 1794182400000000
-- 7: string /pricing
-- 8: string seats
-- 9: string seats
-- 10: float64 3
-- 11: int 2

SELECT r.1, r.2, r.3, r.4, r.5, r.6, count()
  FROM (SELECT arrayJoin(arrayFilter(z2 -> z2.7 = 1, [(toUInt8(0), toUInt8(1), if(has([?], pa_n1), pa_n1, ''), toUInt8(NOT has([?], pa_n1)), '', toUInt8(0), pa_h1), (toUInt8(1), toUInt8(1), if(has([?], pa_n1), pa_n1, ''), toUInt8(NOT has([?], pa_n1)), if(has(emptyArrayString(), pa_n2), pa_n2, ''), toUInt8(NOT has(emptyArrayString(), pa_n2)), pa_h2), (toUInt8(0), toUInt8(2), if(has(emptyArrayString(), pa_n2), pa_n2, ''), toUInt8(NOT has(emptyArrayString(), pa_n2)), '', toUInt8(0), pa_h2), (toUInt8(1), toUInt8(2), if(has(emptyArrayString(), pa_n2), pa_n2, ''), toUInt8(NOT has(emptyArrayString(), pa_n2)), if(has(emptyArrayString(), pa_n3), pa_n3, ''), toUInt8(NOT has(emptyArrayString(), pa_n3)), pa_h3), (toUInt8(0), toUInt8(3), if(has(emptyArrayString(), pa_n3), pa_n3, ''), toUInt8(NOT has(emptyArrayString(), pa_n3)), '', toUInt8(0), pa_h3)])) AS r
  FROM (SELECT u, did, arrayMap(pq1 -> pq1.1, ev) AS a_t, arrayMap(pq2 -> pq2.2, ev) AS a_n, arrayMap((pq3, pq4) -> toUInt8(pq4 = 1 OR pq3 >= ?), arrayDifference(a_t), arrayEnumerate(a_t)) AS a_new, arrayPopBack(arrayPushFront(a_n, '')) AS a_prev, arrayMap((pq5, pq6, pq7) -> toUInt8(pq5 = 1 OR pq6 != pq7), a_new, a_n, a_prev) AS a_keep, arrayFilter((pq8, pq9) -> pq9 = 1, a_n, a_keep) AS k_n, arrayFilter((pq10, pq11) -> pq11 = 1, a_t, a_keep) AS k_t, arrayFilter((pq12, pq13) -> pq13 = 1, arrayCumSum(a_new), a_keep) AS k_v, toInt64(indexOf(k_n, ?)) AS pa_a, toUInt8(pa_a > 0 AND pa_a - 0 >= 1 AND pa_a - 0 <= length(k_n) AND k_v[pa_a - 0] = k_v[pa_a]) AS pa_h1, k_n[pa_a - 0] AS pa_n1, k_t[pa_a - 0] AS pa_t1, toUInt8(pa_a > 0 AND pa_a - 1 >= 1 AND pa_a - 1 <= length(k_n) AND k_v[pa_a - 1] = k_v[pa_a]) AS pa_h2, k_n[pa_a - 1] AS pa_n2, k_t[pa_a - 1] AS pa_t2, toUInt8(pa_a > 0 AND pa_a - 2 >= 1 AND pa_a - 2 <= length(k_n) AND k_v[pa_a - 2] = k_v[pa_a]) AS pa_h3, k_n[pa_a - 2] AS pa_n3, k_t[pa_a - 2] AS pa_t3
  FROM (SELECT user_id AS u, any(distinct_id) AS did, arraySort(groupArray((ts, event))) AS ev
  FROM `strata_golden`.events
  WHERE product_id = ? AND env = ? AND ts >= ? AND ts < ? AND is_bot = 0 AND (path != '' AND path = ?) AND (has(prop_keys, ?) AND ifNull(toFloat64OrNull(prop_values[indexOf(prop_keys, ?)]) = ?, 0))
  GROUP BY u)))
  GROUP BY r.1, r.2, r.3, r.4, r.5, r.6;
-- 1: string purchase
-- 2: string purchase
-- 3: string purchase
-- 4: string purchase
-- 5: int64 1800000000
-- 6: string purchase
-- 7: int64 1
-- 8: string live
-- 9: int64 1793577600000000
-- 10: int64 1794182400000000
-- 11: string /pricing
-- 12: string seats
-- 13: string seats
-- 14: float64 3
