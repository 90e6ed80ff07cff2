SELECT event, count() AS hits
  FROM `strata_golden`.events
  WHERE product_id = ? AND env = ? AND ts >= ? AND ts < ? AND is_bot = 0
  GROUP BY event
  ORDER BY hits DESC, event
  LIMIT ?;
-- 1: int64 1
-- 2: string live
-- 3: int64 1793577600000000
-- 4: int64 1794182400000000
-- 5: int 50
