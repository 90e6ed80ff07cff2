SELECT prop_values[indexOf(prop_keys, ?)] AS v, count() AS n
  FROM `strata_golden`.events
  WHERE product_id = ? AND env = ? AND ts >= ? AND ts < ? AND is_bot = 0 AND event = ? AND visitParamExtractString(prop_values[indexOf(prop_keys, '$groups')], 'company') != ''
  GROUP BY v
  ORDER BY n DESC, v
  LIMIT ?;
-- 1: string plan
-- 2: int64 1
-- 3: string live
-- 4: int64 1793577600000000
-- 5: int64 1794182400000000
-- 6: string $pageview
-- 7: int 5

SELECT toInt64(intDiv(ts, 86400000000)) AS k, indexOf(?, prop_values[indexOf(prop_keys, ?)]) AS r, if(r = 0, '', prop_values[indexOf(prop_keys, ?)]) AS bv, count()
  FROM `strata_golden`.events
  WHERE product_id = ? AND env = ? AND ts >= ? AND ts < ? AND is_bot = 0 AND event = ? AND visitParamExtractString(prop_values[indexOf(prop_keys, '$groups')], 'company') != ''
  GROUP BY k, r, bv;
-- 1: []string [pro]
-- 2: string plan
-- 3: string plan
-- 4: int64 1
-- 5: string live
-- 6: int64 1793577600000000
-- 7: int64 1794182400000000
-- 8: string $pageview

SELECT prop_values[indexOf(prop_keys, ?)] AS v, uniqExact(visitParamExtractString(prop_values[indexOf(prop_keys, '$groups')], 'company')) AS n
  FROM `strata_golden`.events
  WHERE product_id = ? AND env = ? AND ts >= ? AND ts < ? AND is_bot = 0 AND event = ? AND visitParamExtractString(prop_values[indexOf(prop_keys, '$groups')], 'company') != ''
  GROUP BY v
  ORDER BY n DESC, v
  LIMIT ?;
-- 1: string plan
-- 2: int64 1
-- 3: string live
-- 4: int64 1793577600000000
-- 5: int64 1794182400000000
-- 6: string $pageview
-- 7: int 5

SELECT toInt64(intDiv(ts, 86400000000)) AS k, indexOf(?, prop_values[indexOf(prop_keys, ?)]) AS r, if(r = 0, '', prop_values[indexOf(prop_keys, ?)]) AS bv, uniqExact(visitParamExtractString(prop_values[indexOf(prop_keys, '$groups')], 'company'))
  FROM `strata_golden`.events
  WHERE product_id = ? AND env = ? AND ts >= ? AND ts < ? AND is_bot = 0 AND event = ? AND visitParamExtractString(prop_values[indexOf(prop_keys, '$groups')], 'company') != ''
  GROUP BY k, r, bv;
-- 1: []string [pro]
-- 2: string plan
-- 3: string plan
-- 4: int64 1
-- 5: string live
-- 6: int64 1793577600000000
-- 7: int64 1794182400000000
-- 8: string $pageview
