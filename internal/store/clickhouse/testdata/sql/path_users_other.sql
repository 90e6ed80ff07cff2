SELECT r_step, r_n, count() AS r_c
  FROM (SELECT arrayJoin(arrayFilter(z1 -> z1.3 = 1, [(toUInt8(1), pa_n1, pa_h1), (toUInt8(2), pa_n2, pa_h2)])) AS r, r.1 AS r_step, r.2 AS r_n
  FROM (SELECT u, did, arrayMap(pq1 -> pq1.1, ev) AS a_t, arrayMap(pq2 -> pq2.2, ev) AS a_n, arrayMap((pq3, pq4) -> toUInt8(pq4 = 1 OR pq3 >= ?), arrayDifference(a_t), arrayEnumerate(a_t)) AS a_new, arrayPopBack(arrayPushFront(a_n, '')) AS a_prev, arrayMap((pq5, pq6, pq7) -> toUInt8(pq5 = 1 OR pq6 != pq7), a_new, a_n, a_prev) AS a_keep, arrayFilter((pq8, pq9) -> pq9 = 1, a_n, a_keep) AS k_n, arrayFilter((pq10, pq11) -> pq11 = 1, a_t, a_keep) AS k_t, arrayFilter((pq12, pq13) -> pq13 = 1, arrayCumSum(a_new), a_keep) AS k_v, toInt64(notEmpty(k_n)) AS pa_a, toUInt8(pa_a > 0 AND pa_a + 0 >= 1 AND pa_a + 0 <= length(k_n) AND k_v[pa_a + 0] = k_v[pa_a]) AS pa_h1, k_n[pa_a + 0] AS pa_n1, k_t[pa_a + 0] AS pa_t1, toUInt8(pa_a > 0 AND pa_a + 1 >= 1 AND pa_a + 1 <= length(k_n) AND k_v[pa_a + 1] = k_v[pa_a]) AS pa_h2, k_n[pa_a + 1] AS pa_n2, k_t[pa_a + 1] AS pa_t2
  FROM (SELECT user_id AS u, any(distinct_id) AS did, arraySort(groupArray((ts, path))) AS ev
  FROM `strata_golden`.events
  WHERE product_id = ? AND env = ? AND ts >= ? AND ts < ? AND is_bot = 0 AND event = ? AND path != ''
  GROUP BY u)))
  GROUP BY r_step, r_n
  ORDER BY r_step, r_c DESC, r_n
  LIMIT ? BY r_step;
-- 1: int64 1800000000
-- 2: int64 1
-- 3: string live
-- 4: int64 1793577600000000
-- 5: int64 1794182400000000
-- 6: string $pageview
-- 7: int 1

SELECT did, pa_t2 AS u_t
  FROM (SELECT u, did, arrayMap(pq1 -> pq1.1, ev) AS a_t, arrayMap(pq2 -> pq2.2, ev) AS a_n, arrayMap((pq3, pq4) -> toUInt8(pq4 = 1 OR pq3 >= ?), arrayDifference(a_t), arrayEnumerate(a_t)) AS a_new, arrayPopBack(arrayPushFront(a_n, '')) AS a_prev, arrayMap((pq5, pq6, pq7) -> toUInt8(pq5 = 1 OR pq6 != pq7), a_new, a_n, a_prev) AS a_keep, arrayFilter((pq8, pq9) -> pq9 = 1, a_n, a_keep) AS k_n, arrayFilter((pq10, pq11) -> pq11 = 1, a_t, a_keep) AS k_t, arrayFilter((pq12, pq13) -> pq13 = 1, arrayCumSum(a_new), a_keep) AS k_v, toInt64(notEmpty(k_n)) AS pa_a, toUInt8(pa_a > 0 AND pa_a + 0 >= 1 AND pa_a + 0 <= length(k_n) AND k_v[pa_a + 0] = k_v[pa_a]) AS pa_h1, k_n[pa_a + 0] AS pa_n1, k_t[pa_a + 0] AS pa_t1, toUInt8(pa_a > 0 AND pa_a + 1 >= 1 AND pa_a + 1 <= length(k_n) AND k_v[pa_a + 1] = k_v[pa_a]) AS pa_h2, k_n[pa_a + 1] AS pa_n2, k_t[pa_a + 1] AS pa_t2
  FROM (SELECT user_id AS u, any(distinct_id) AS did, arraySort(groupArray((ts, path))) AS ev
  FROM `strata_golden`.events
  WHERE product_id = ? AND env = ? AND ts >= ? AND ts < ? AND is_bot = 0 AND event = ? AND path != ''
  GROUP BY u))
  WHERE pa_h2 = 1 AND NOT has(emptyArrayString(), pa_n2) AND (u_t < ? OR (u_t = ? AND did > ?))
  ORDER BY u_t DESC, did
  LIMIT ?;
-- 1: int64 1800000000
-- 2: int64 1
-- 3: string live
-- 4: int64 1793577600000000
-- 5: int64 1794182400000000
-- 6: string $pageview
-- 7: int64 1793581200000000
-- 8: int64 1793581200000000
-- 9: string u1
-- 10: int 51
