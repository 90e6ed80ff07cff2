SELECT path AS v, count() AS n
  FROM `strata_golden`.events
  WHERE product_id = ? AND env = ? AND ts >= ? AND ts < ? AND is_bot = 0 AND event = ?
  GROUP BY v
  ORDER BY n DESC, v
  LIMIT ?;
-- 1: int64 1
-- 2: string live
-- 3: int64 1793577600000000
-- 4: int64 1794182400000000
-- 5: string purchase
-- 6: int 5

SELECT toInt64(intDiv(ts, 86400000000)) AS k, indexOf(?, path) AS r, if(r = 0, '', path) AS bv, count()
  FROM `strata_golden`.events
  WHERE product_id = ? AND env = ? AND ts >= ? AND ts < ? AND is_bot = 0 AND event = ?
  GROUP BY k, r, bv;
-- 1: []string [/pricing]
-- 2: int64 1
-- 3: string live
-- 4: int64 1793577600000000
-- 5: int64 1794182400000000
-- 6: string purchase
