SELECT uniqExact(user_id)
  FROM `strata_golden`.events
  WHERE product_id = ? AND env = ? AND ts >= ? AND ts < ? AND is_bot = 0;
-- 1: int64 1
-- 2: string live
-- 3: int64 1793581200000000
-- 4: int64 1793581560000000
