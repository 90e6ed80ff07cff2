WITH e AS MATERIALIZED (SELECT uid, epoch_us(ts) AS t, eid AS n
  FROM events
  WHERE product_id = $1 AND env = $2 AND ts >= $3::TIMESTAMP AND ts < $4::TIMESTAMP AND NOT is_bot AND coalesce(path = $5, false) AND coalesce(TRY_CAST(json_extract_string(properties, $6) AS DOUBLE) = $7, false)), d AS MATERIALIZED (SELECT eid, name AS n, (row_number() OVER (ORDER BY name))::INTEGER AS k
  FROM event_names), a AS (SELECT uid, min(t) AS ta
  FROM e
  WHERE n = $8::UINTEGER
  GROUP BY uid), s AS (SELECT e.uid, e.t, d.k
  FROM e
  JOIN a ON e.uid = a.uid
  LEFT JOIN d ON d.eid = e.n
  WHERE (e.t < a.ta OR (e.t = a.ta AND d.n <= $9)) AND e.t > a.ta - $10), w0 AS MATERIALIZED (SELECT uid, t, k, f, z, rs, re, sum(vs::INTEGER) OVER wn AS gv, sum(rs::INTEGER) OVER wn AS gc
  FROM (SELECT uid, t, k, f, z, f OR abs(t - pt) >= $11 AS vs, f OR abs(t - pt) >= $11 OR k <> pk AS rs, z OR abs(nt - t) >= $11 OR nk <> k AS re
  FROM (SELECT uid, t, k, lag(uid) OVER wl IS DISTINCT
  FROM uid AS f, lead(uid) OVER wl IS DISTINCT
  FROM uid AS z, lag(t) OVER wl AS pt, lag(k) OVER wl AS pk, lead(t) OVER wl AS nt, lead(k) OVER wl AS nk
  FROM s WINDOW wl AS (ORDER BY uid, t DESC, k DESC))) WINDOW wn AS (ORDER BY uid, t DESC, k DESC ROWS UNBOUNDED PRECEDING)), w AS (SELECT x.uid, x.t, x.k, x.z, x.rs, x.re, x.gv - m.gv + 1 AS v, x.gc - m.gc + 1 AS c, m.t AS t0
  FROM w0 x
  JOIN (SELECT uid, t, gv, gc
  FROM w0
  WHERE f) m ON m.uid = x.uid), i AS MATERIALIZED (SELECT uid, any_value(t0) AS ta
  FROM w
  WHERE z AND v = 1 AND c <= $12 AND abs(t - t0) > $10 - $11
  GROUP BY uid), w20 AS MATERIALIZED (SELECT uid, t, k, f, z, rs, re, sum(vs::INTEGER) OVER wn AS gv, sum(rs::INTEGER) OVER wn AS gc
  FROM (SELECT uid, t, k, f, z, f OR abs(t - pt) >= $11 AS vs, f OR abs(t - pt) >= $11 OR k <> pk AS rs, z OR abs(nt - t) >= $11 OR nk <> k AS re
  FROM (SELECT uid, t, k, lag(uid) OVER wl IS DISTINCT
  FROM uid AS f, lead(uid) OVER wl IS DISTINCT
  FROM uid AS z, lag(t) OVER wl AS pt, lag(k) OVER wl AS pk, lead(t) OVER wl AS nt, lead(k) OVER wl AS nk
  FROM (SELECT e.uid, e.t, d.k
  FROM e
  JOIN i a ON e.uid = a.uid
  LEFT JOIN d ON d.eid = e.n
  WHERE (e.t < a.ta OR (e.t = a.ta AND d.n <= $9))) WINDOW wl AS (ORDER BY uid, t DESC, k DESC))) WINDOW wn AS (ORDER BY uid, t DESC, k DESC ROWS UNBOUNDED PRECEDING)), w2 AS (SELECT x.uid, x.t, x.k, x.z, x.rs, x.re, x.gv - m.gv + 1 AS v, x.gc - m.gc + 1 AS c, m.t AS t0
  FROM w20 x
  JOIN (SELECT uid, t, gv, gc
  FROM w20
  WHERE f) m ON m.uid = x.uid), l AS (SELECT uid, c AS step, t, k
  FROM (SELECT *
  FROM w
  WHERE uid NOT IN (SELECT uid
  FROM i)
  UNION ALL SELECT *
  FROM w2)
  WHERE v = 1 AND c <= $12 AND re), r AS (SELECT step, k, row_number() OVER (PARTITION BY step
  ORDER BY count(*) DESC, k) AS rk
  FROM l
  GROUP BY step, k), gl AS (SELECT l.uid, l.step, l.t, CASE WHEN r.rk <= $13 THEN l.k END AS g
  FROM l
  JOIN r ON r.step = l.step AND r.k = l.k) SELECT x.p, x.step, f.n, t.n, x.users
  FROM (SELECT 0 AS p, step, g AS g1, NULL::INTEGER AS g2, count(*) AS users
  FROM gl
  GROUP BY step, g
  UNION ALL SELECT 1, a.step, a.g, z.g, count(*)
  FROM gl a
  JOIN gl z ON z.uid = a.uid AND z.step = a.step + 1
  GROUP BY a.step, a.g, z.g) x
  LEFT JOIN d f ON f.k = x.g1
  LEFT JOIN d t ON t.k = x.g2;
-- 1: int64 1
-- 2: string live
-- 3: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 4: time.Time 2026-11-09 00:00:00 +0000 UTC
-- 5: string /pricing
-- 6: string /seats
-- 7: float64 3
-- 8: uint32 2
-- 9: string purchase
-- 10: int64 7200000000
-- 11: int64 1800000000
-- 12: int 3
-- 13: int 2
