SELECT toInt64(intDiv(ts + 259200000000, 604800000000)) AS k, toUInt64(0) AS r, '' AS bv, uniqExact(visitParamExtractString(prop_values[indexOf(prop_keys, '$groups')], 'company'))
  FROM `strata_golden`.events
  WHERE product_id = ? AND env = ? AND ts >= ? AND ts < ? AND is_bot = 0 AND event = ? AND visitParamExtractString(prop_values[indexOf(prop_keys, '$groups')], 'company') != ''
  GROUP BY k, r, bv;
-- 1: int64 1
-- 2: string live
-- 3: int64 1793577600000000
-- 4: int64 1794182400000000
-- 5: string signup

SELECT uniqExact(visitParamExtractString(prop_values[indexOf(prop_keys, '$groups')], 'company'))
  FROM `strata_golden`.events
  WHERE product_id = ? AND env = ? AND ts >= ? AND ts < ? AND is_bot = 0 AND event = ? AND visitParamExtractString(prop_values[indexOf(prop_keys, '$groups')], 'company') != '';
-- 1: int64 1
-- 2: string live
-- 3: int64 1793577600000000
-- 4: int64 1794182400000000
-- 5: string signup
