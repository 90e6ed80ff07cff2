SELECT part, k, page, count() AS visits, sum(r_bounce), sum(r_pv), sum(r_dur), uniqExactIf(u, part = 0)
  FROM (SELECT u, arrayMap(q1 -> q1.1, ev) AS a_t, arrayMap(q2 -> q2.3, ev) AS a_k, arrayMap((q3, q4) -> toUInt8(q4 = 1 OR q3 >= ?), arrayDifference(a_t), arrayEnumerate(a_t)) AS a_new, arrayPushBack(arraySlice(a_new, 2), toUInt8(1)) AS a_fin, arrayMap(q5 -> toUInt64(q5 = 0), a_k) AS a_pv, arrayCumSum(a_pv) AS c_pv, arrayCumSum(arrayMap(q6 -> toUInt64(q6 = 2), a_k)) AS c_int, arrayCumSum(arrayMap(q7 -> toUInt64(q7.4), ev)) AS c_m, arrayPushFront(arrayPopBack(arrayFilter((q8, q9) -> q9 = 1, c_pv, a_fin)), toUInt64(0)) AS b_pv, arrayPushFront(arrayPopBack(arrayFilter((q10, q11) -> q11 = 1, c_int, a_fin)), toUInt64(0)) AS b_int, arrayPushFront(arrayPopBack(arrayFilter((q12, q13) -> q13 = 1, c_m, a_fin)), toUInt64(0)) AS b_m, arrayFilter((q14, q15) -> q15 = 1, a_t, a_new) AS v_start, arrayMap((q16, q17) -> q17 - q16, v_start, arrayFilter((q18, q19) -> q19 = 1, a_t, a_fin)) AS v_dur, arrayMap((q20, q21) -> toUInt64(q20 - q21), arrayFilter((q22, q23) -> q23 = 1, c_pv, a_fin), b_pv) AS v_pv, arrayMap((q24, q25) -> toUInt64(q24 - q25), arrayFilter((q26, q27) -> q27 = 1, c_int, a_fin), b_int) AS v_int, arrayMap((q28, q29, q30) -> toUInt8(q28 >= ? AND q28 < ? AND q29 > q30), v_start, arrayFilter((q31, q32) -> q32 = 1, c_m, a_fin), b_m) AS v_keep, arrayMap((q33, q34) -> toUInt64(q33 <= 1 AND q34 = 0), v_pv, v_int) AS v_bounce, arrayFilter((q35, q36) -> q36 = 0, arrayCumSum(arrayMap(q37 -> toUInt64(q37), a_new)), a_k) AS p_vn, arrayMap(q38 -> q38.2, arrayFilter(q39 -> q39.3 = 0, ev)) AS p_path, arrayMap((q40, q41) -> toUInt8(q41 = 1 OR q40 != 0), arrayDifference(p_vn), arrayEnumerate(p_vn)) AS p_first, arraySlice(arrayPushBack(arraySlice(p_first, 2), toUInt8(1)), 1, length(p_first)) AS p_last, arrayFilter((w1, w2) -> w2 > 0, v_keep, v_pv) AS w_keep, arrayFilter((w1, w2) -> w2 > 0, v_bounce, v_pv) AS w_bounce, arrayFilter((w1, w2) -> w2 > 0, v_pv, v_pv) AS w_pv, arrayFilter((w1, w2) -> w2 > 0, v_dur, v_pv) AS w_dur, arrayJoin(arrayConcat([(toUInt8(0), toInt64(0), '', toUInt64(0), toUInt64(0), toInt64(0), toUInt8(arrayExists(x0 -> x0 = 1, v_keep)))], arrayMap((x1, x2, x3, x4, x5) -> (toUInt8(1), toInt64(intDiv(x1, 86400000000)), '', x2, x3, x4, x5), v_start, v_bounce, v_pv, v_dur, v_keep), arrayMap((x6, x7, x8, x9, x10) -> (toUInt8(2), toInt64(0), x6, x7, x8, x9, x10), arrayFilter((x11, x12) -> x12 = 1, p_path, p_first), w_bounce, w_pv, w_dur, w_keep), arrayMap((x13, x14, x15, x16, x17) -> (toUInt8(3), toInt64(0), x13, x14, x15, x16, x17), arrayFilter((x18, x19) -> x19 = 1, p_path, p_last), w_bounce, w_pv, w_dur, w_keep))) AS r, r.1 AS part, r.2 AS k, r.3 AS page, r.4 AS r_bounce, r.5 AS r_pv, r.6 AS r_dur, r.7 AS r_keep
  FROM (SELECT user_id AS u, prop_values[indexOf(prop_keys, ?)] AS sid, arraySort(groupArray((ts, path, multiIf(event = ?, toUInt8(0), event IN (?, ?), toUInt8(1), toUInt8(2)), toUInt8(1)))) AS ev
  FROM `strata_golden`.events
  WHERE product_id = ? AND env = ? AND ts >= ? AND ts < ? AND is_bot = 0
  GROUP BY u, sid))
  WHERE r_keep = 1
  GROUP BY part, k, page
  ORDER BY part, visits DESC, page
  LIMIT ? BY part;
-- 1: int64 1800000000
-- 2: int64 1793577600000000
-- 3: int64 1794182400000000
-- 4: string $session_id
-- 5: string $pageview
-- 6: string $identify
-- 7: string $exposure
-- 8: int64 1
-- 9: string live
-- 10: int64 1793575800000000
-- 11: int64 1794268800000000
-- 12: int 10
