SELECT bot_name, bot_category, count() AS hits, max(ts)
  FROM `strata_golden`.events
  WHERE product_id = ? AND env = ? AND ts >= ? AND ts < ? AND event = ? AND bot_name != ''
  GROUP BY bot_name, bot_category
  ORDER BY hits DESC, bot_name;
-- 1: int64 1
-- 2: string live
-- 3: int64 1793577600000000
-- 4: int64 1794182400000000
-- 5: string $bot_pageview

SELECT url, count() AS hits, uniqExact(bot_name)
  FROM `strata_golden`.events
  WHERE product_id = ? AND env = ? AND ts >= ? AND ts < ? AND event = ? AND url != ''
  GROUP BY url
  ORDER BY hits DESC, url
  LIMIT ?;
-- 1: int64 1
-- 2: string live
-- 3: int64 1793577600000000
-- 4: int64 1794182400000000
-- 5: string $bot_pageview
-- 6: int 10
