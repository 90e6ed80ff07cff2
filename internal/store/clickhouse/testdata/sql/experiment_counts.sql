SELECT toInt64(i) - 2 AS metric, if(length(vs) > 1, '', vs[1]) AS arm, length(vs) > 1 AS mixed, toInt64(intDiv(arr[i], 86400000000)) AS day, count()
  FROM (SELECT vs, [t0, f0, f1] AS arr
  FROM (SELECT vs, t0, arrayReduce('min', arrayFilter((x, p) -> x >= p, c0, arrayResize(emptyArrayInt64(), length(c0), t0))) AS f0, arrayReduce('min', arrayFilter((x, p) -> x >= p, c1, arrayResize(emptyArrayInt64(), length(c1), t0))) AS f1
  FROM (SELECT groupUniqArrayIf(prop_values[indexOf(prop_keys, ?)], event = ? AND (has(prop_keys, ?) AND ifNull(toFloat64OrNull(prop_values[indexOf(prop_keys, ?)]) = ?, 0))) AS vs, minIf(ts, event = ? AND (has(prop_keys, ?) AND ifNull(toFloat64OrNull(prop_values[indexOf(prop_keys, ?)]) = ?, 0))) AS t0, groupArrayIf(ts, (has(prop_keys, ?) AND ifNull(toFloat64OrNull(prop_values[indexOf(prop_keys, ?)]) = ?, 0))) AS c0, groupArrayIf(ts, event = ?) AS c1, countIf(event = ? AND (has(prop_keys, ?) AND ifNull(toFloat64OrNull(prop_values[indexOf(prop_keys, ?)]) = ?, 0))) AS exposures
  FROM `strata_golden`.events
  WHERE product_id = ? AND env = ? AND ts >= ? AND ts < ? AND is_bot = 0 AND ((event = ? AND (has(prop_keys, ?) AND ifNull(toFloat64OrNull(prop_values[indexOf(prop_keys, ?)]) = ?, 0))) OR ((has(prop_keys, ?) AND ifNull(toFloat64OrNull(prop_values[indexOf(prop_keys, ?)]) = ?, 0))) OR (event = ?))
  GROUP BY user_id
  HAVING exposures > 0))) ARRAY
  JOIN arrayEnumerate(arr) AS i
  WHERE arr[i] > 0 AND (i = 1 OR length(vs) = 1)
  GROUP BY metric, arm, mixed, day;
-- 1: string variant
-- 2: string $exposure
-- 3: string experiment_id
-- 4: string experiment_id
-- 5: float64 7
-- 6: string $exposure
-- 7: string experiment_id
-- 8: string experiment_id
-- 9: float64 7
-- 10: string converted
-- 11: string converted
-- 12: float64 1
-- 13: string purchase
-- 14: string $exposure
-- 15: string experiment_id
-- 16: string experiment_id
-- 17: float64 7
-- 18: int64 1
-- 19: string live
-- 20: int64 1793577600000000
-- 21: int64 1794182400000000
-- 22: string $exposure
-- 23: string experiment_id
-- 24: string experiment_id
-- 25: float64 7
-- 26: string converted
-- 27: string converted
-- 28: float64 1
-- 29: string purchase
