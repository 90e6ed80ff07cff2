WITH base AS (SELECT date_trunc('hour', ts) AS bucket, uid, '' AS v
  FROM events
  WHERE product_id = $1 AND env = $2 AND ts >= $3::TIMESTAMP AND ts < $4::TIMESTAMP AND NOT is_bot AND eid = $5::UINTEGER AND coalesce(path = $6, false) AND coalesce(TRY_CAST(json_extract_string(properties, $7) AS DOUBLE) = $8, false) AND NOT coalesce(json_extract_string(properties, $9) = $10, false) AND coalesce(contains(lower(url), lower($11)), false) AND NOT coalesce(contains(lower(referrer), lower($12)), false) AND coalesce(regexp_matches(browser, $13), false) AND coalesce(TRY_CAST(json_extract_string(properties, $14) AS DOUBLE) > $15, false) AND coalesce(TRY_CAST(json_extract_string(properties, $16) AS DOUBLE) < $17, false) AND json_extract_string(properties, $18) IS NOT NULL AND json_extract_string(properties, $19) IS NULL) SELECT bucket, 0, '', count(*)
  FROM base
  GROUP BY bucket;
-- 1: int64 1
-- 2: string live
-- 3: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 4: time.Time 2026-11-09 00:00:00 +0000 UTC
-- 5: uint32 0
-- 6: string /pricing
-- 7: string /seats
-- 8: float64 3
-- 9: string /plan
-- 10: string free
-- 11: string example
-- 12: string spam
-- 13: string ^Chr
-- 14: string /seats
-- 15: float64 1
-- 16: string /seats
-- 17: float64 10
-- 18: string /plan
-- 19: string /coupon
