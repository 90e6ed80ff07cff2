SELECT bot_name, bot_category, count(*) AS hits, max(ts)
  FROM events
  WHERE product_id = $1 AND env = $2 AND ts >= $3::TIMESTAMP AND ts < $4::TIMESTAMP AND eid = $5::UINTEGER AND bot_name IS NOT NULL
  GROUP BY bot_name, bot_category
  ORDER BY hits DESC, bot_name;
-- 1: int64 1
-- 2: string live
-- 3: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 4: time.Time 2026-11-09 00:00:00 +0000 UTC
-- 5: uint32 3

SELECT url, count(*) AS hits, count(DISTINCT bot_name)
  FROM events
  WHERE product_id = $1 AND env = $2 AND ts >= $3::TIMESTAMP AND ts < $4::TIMESTAMP AND eid = $5::UINTEGER AND url IS NOT NULL
  GROUP BY url
  ORDER BY hits DESC, url
  LIMIT $6;
-- 1: int64 1
-- 2: string live
-- 3: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 4: time.Time 2026-11-09 00:00:00 +0000 UTC
-- 5: uint32 3
-- 6: int 10
