WITH x AS (SELECT ts, uid, json_extract_string(properties, ['/$exception_fingerprint', '/$exception_type', '/$exception_message']) AS p
  FROM events
  WHERE product_id = $1 AND env = $2 AND ts >= $3::TIMESTAMP AND ts < $4::TIMESTAMP AND NOT is_bot AND eid = $5::UINTEGER AND coalesce(json_extract_string(properties, $6) = $7, false)), g AS (SELECT coalesce(p[1], '') AS fp, max({'t': ts, 'ty': coalesce(p[2], ''), 'm': coalesce(p[3], '')}) AS latest, count(*) AS n, count(DISTINCT uid) AS users, min(ts) AS first, count(*) FILTER (WHERE ts >= $8::TIMESTAMP AND ts < $9::TIMESTAMP) AS d0, count(*) FILTER (WHERE ts >= $10::TIMESTAMP AND ts < $11::TIMESTAMP) AS d1
  FROM x
  GROUP BY fp) SELECT fp, latest.ty, latest.m, n, users, first, latest.t, d0, d1
  FROM g
  ORDER BY n DESC, fp
  LIMIT $12;
-- 1: int64 1
-- 2: string live
-- 3: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 4: time.Time 2026-11-09 00:00:00 +0000 UTC
-- 5: uint32 4294967295
-- 6: string /$release
-- 7: string 1.4.2
-- 8: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 9: time.Time 2026-11-03 00:00:00 +0000 UTC
-- 10: time.Time 2026-11-03 00:00:00 +0000 UTC
-- 11: time.Time 2026-11-04 00:00:00 +0000 UTC
-- 12: int 50
