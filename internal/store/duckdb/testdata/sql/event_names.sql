SELECT n.name, c.hits
  FROM (SELECT eid, count(*) AS hits
  FROM events
  WHERE product_id = $1 AND env = $2 AND ts >= $3::TIMESTAMP AND ts < $4::TIMESTAMP AND NOT is_bot
  GROUP BY eid) c
  JOIN event_names n ON n.eid = c.eid
  ORDER BY c.hits DESC, n.name
  LIMIT $5;
-- 1: int64 1
-- 2: string live
-- 3: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 4: time.Time 2026-11-09 00:00:00 +0000 UTC
-- 5: int 50
