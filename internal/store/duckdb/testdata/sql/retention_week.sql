WITH firsts AS (SELECT uid, date_trunc('week', min(ts)) AS cohort
  FROM events
  WHERE product_id = $1 AND env = $2 AND ts >= $3::TIMESTAMP AND ts < $4::TIMESTAMP AND NOT is_bot AND eid = $5::UINTEGER
  GROUP BY uid), returns AS (SELECT DISTINCT uid, date_trunc('week', ts) AS period
  FROM events
  WHERE product_id = $6 AND env = $7 AND ts >= $8::TIMESTAMP AND ts < $9::TIMESTAMP AND NOT is_bot AND eid = $10::UINTEGER) SELECT cohort, cohort, count(*)
  FROM firsts
  GROUP BY cohort
  UNION ALL SELECT f.cohort, r.period, count(*)
  FROM firsts f
  JOIN returns r ON r.uid = f.uid AND r.period > f.cohort
  GROUP BY f.cohort, r.period;
-- 1: int64 1
-- 2: string live
-- 3: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 4: time.Time 2026-11-09 00:00:00 +0000 UTC
-- 5: uint32 1
-- 6: int64 1
-- 7: string live
-- 8: time.Time 2026-11-09 00:00:00 +0000 UTC
-- 9: time.Time 2026-11-09 00:00:00 +0000 UTC
-- 10: uint32 0
