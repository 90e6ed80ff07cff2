WITH e AS (SELECT uid, coalesce(json_extract_string(properties, $1), '') AS sid, ts, coalesce(path, '') AS path, CASE WHEN eid = $2::UINTEGER THEN 0 WHEN eid IN ($3::UINTEGER, $4::UINTEGER) THEN 1 ELSE 2 END AS kind, true AS m
  FROM events
  WHERE product_id = $5 AND env = $6 AND ts >= $7::TIMESTAMP AND ts < $8::TIMESTAMP AND NOT is_bot), g AS (SELECT *, CASE WHEN epoch_us(ts) - epoch_us(lag(ts) OVER w) < $9 THEN 0 ELSE 1 END AS new
  FROM e WINDOW w AS (PARTITION BY uid, sid
  ORDER BY ts)), n AS (SELECT *, sum(new) OVER (PARTITION BY uid, sid
  ORDER BY ts) AS vn
  FROM g), v AS MATERIALIZED (SELECT uid, min(ts) AS start, epoch_us(max(ts)) - epoch_us(min(ts)) AS dur, count(*) FILTER (WHERE kind = 0) AS pv, (count(*) FILTER (WHERE kind = 0) <= 1 AND count(*) FILTER (WHERE kind = 2) = 0)::BIGINT AS bounce, arg_min(path, (ts, path)) FILTER (WHERE kind = 0) AS entry, arg_max(path, (ts, path)) FILTER (WHERE kind = 0) AS exit
  FROM n
  GROUP BY uid, sid, vn
  HAVING min(ts) >= $10::TIMESTAMP AND min(ts) < $11::TIMESTAMP AND bool_or(m)), c AS MATERIALIZED (SELECT bucket, entry, exit, count(*) AS n, sum(bounce)::BIGINT AS bounces, sum(pv)::BIGINT AS pv, sum(dur)::BIGINT AS dur
  FROM (SELECT date_trunc('day', start) AS bucket, entry, exit, bounce, pv, dur
  FROM v)
  GROUP BY bucket, entry, exit), a AS MATERIALIZED (SELECT GROUPING(bucket, entry, exit) AS gs, bucket, coalesce(entry, exit) AS path, sum(n)::BIGINT AS n, sum(bounces)::BIGINT AS bounces, sum(pv)::BIGINT AS pv, sum(dur)::BIGINT AS dur
  FROM c
  GROUP BY GROUPING SETS ((bucket), (entry), (exit))) SELECT 0 AS part, NULL::TIMESTAMP, '', 0, 0, 0, 0, coalesce(bit_count(bitstring_agg(uid, 0, 65538)), 0)
  FROM v
  UNION ALL SELECT 1, bucket, '', n, bounces, pv, dur, 0
  FROM a
  WHERE gs = 3
  UNION ALL (SELECT 2, NULL::TIMESTAMP, path, n, bounces, pv, dur, 0
  FROM a
  WHERE gs = 5 AND path IS NOT NULL
  ORDER BY n DESC, path
  LIMIT $12)
  UNION ALL (SELECT 3, NULL::TIMESTAMP, path, n, bounces, pv, dur, 0
  FROM a
  WHERE gs = 6 AND path IS NOT NULL
  ORDER BY n DESC, path
  LIMIT $13);
-- 1: string /$session_id
-- 2: uint32 0
-- 3: uint32 4294967295
-- 4: uint32 4294967295
-- 5: int64 1
-- 6: string live
-- 7: time.Time 2026-11-01 23:30:00 +0000 UTC
-- 8: time.Time 2026-11-10 00:00:00 +0000 UTC
-- 9: int64 1800000000
-- 10: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 11: time.Time 2026-11-09 00:00:00 +0000 UTC
-- 12: int 10
-- 13: int 10
