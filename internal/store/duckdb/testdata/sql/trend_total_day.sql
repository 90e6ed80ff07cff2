WITH base AS (SELECT date_trunc('day', ts) AS bucket, uid, '' AS v
  FROM events
  WHERE product_id = $1 AND env = $2 AND ts >= $3::TIMESTAMP AND ts < $4::TIMESTAMP AND NOT is_bot AND eid = $5::UINTEGER) SELECT bucket, 0, '', count(*)
  FROM base
  GROUP BY bucket;
-- 1: int64 1
-- 2: string live
-- 3: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 4: time.Time 2026-11-09 00:00:00 +0000 UTC
-- 5: uint32 0
