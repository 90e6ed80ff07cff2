SELECT count(DISTINCT uid)
  FROM events
  WHERE product_id = $1 AND env = $2 AND ts >= $3::TIMESTAMP AND ts < $4::TIMESTAMP AND NOT is_bot;
-- 1: int64 1
-- 2: string live
-- 3: time.Time 2026-11-02 01:00:00 +0000 UTC
-- 4: time.Time 2026-11-02 01:06:00 +0000 UTC
