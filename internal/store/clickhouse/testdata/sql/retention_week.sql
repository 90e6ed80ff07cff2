SELECT toInt64(intDiv(first + 259200000000, 604800000000)) AS cohort, arrayJoin(arrayConcat([cohort], arrayFilter((p, c) -> p > c, periods, arrayResize(emptyArrayInt64(), length(periods), cohort)))) AS period, count()
  FROM (SELECT minIf(ts, event = ? AND ts < ?) AS first, countIf(event = ? AND ts < ?) AS starts, groupUniqArrayIf(toInt64(intDiv(ts + 259200000000, 604800000000)), event = ? AND ts >= ?) AS periods
  FROM `strata_golden`.events
  WHERE product_id = ? AND env = ? AND ts >= ? AND ts < ? AND is_bot = 0 AND event IN (?, ?)
  GROUP BY user_id
  HAVING starts > 0)
  GROUP BY cohort, period;
-- 1: string signup
-- 2: int64 1794182400000000
-- 3: string signup
-- 4: int64 1794182400000000
-- 5: string $pageview
-- 6: int64 1794182400000000
-- 7: int64 1
-- 8: string live
-- 9: int64 1793577600000000
-- 10: int64 1794182400000000
-- 11: string signup
-- 12: string $pageview
