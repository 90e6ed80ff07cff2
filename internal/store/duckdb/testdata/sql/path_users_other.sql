WITH e AS MATERIALIZED (SELECT uid, epoch_us(ts) AS t, path AS n
  FROM events
  WHERE product_id = $2 AND env = $3 AND ts >= $4::TIMESTAMP AND ts < $5::TIMESTAMP AND NOT is_bot AND eid = $1::UINTEGER AND path IS NOT NULL AND path <> ''), d AS MATERIALIZED (SELECT unnest(ns) AS n, unnest(range(1, len(ns) + 1))::INTEGER AS k
  FROM (SELECT list(DISTINCT n
  ORDER BY n) AS ns
  FROM e)), a AS (SELECT uid, min(t) AS ta
  FROM e
  GROUP BY uid), s AS (SELECT e.uid, e.t, d.k
  FROM e
  JOIN a ON e.uid = a.uid
  LEFT JOIN d ON d.n = e.n
  WHERE e.t >= a.ta AND e.t < a.ta + $6), w0 AS MATERIALIZED (SELECT uid, t, k, f, z, rs, re, sum(vs::INTEGER) OVER wn AS gv, sum(rs::INTEGER) OVER wn AS gc
  FROM (SELECT uid, t, k, f, z, f OR abs(t - pt) >= $7 AS vs, f OR abs(t - pt) >= $7 OR k <> pk AS rs, z OR abs(nt - t) >= $7 OR nk <> k AS re
  FROM (SELECT uid, t, k, lag(uid) OVER wl IS DISTINCT
  FROM uid AS f, lead(uid) OVER wl IS DISTINCT
  FROM uid AS z, lag(t) OVER wl AS pt, lag(k) OVER wl AS pk, lead(t) OVER wl AS nt, lead(k) OVER wl AS nk
  FROM s WINDOW wl AS (ORDER BY uid, t, k))) WINDOW wn AS (ORDER BY uid, t, k ROWS UNBOUNDED PRECEDING)), w AS (SELECT x.uid, x.t, x.k, x.z, x.rs, x.re, x.gv - m.gv + 1 AS v, x.gc - m.gc + 1 AS c, m.t AS t0
  FROM w0 x
  JOIN (SELECT uid, t, gv, gc
  FROM w0
  WHERE f) m ON m.uid = x.uid), i AS MATERIALIZED (SELECT uid, any_value(t0) AS ta
  FROM w
  WHERE z AND v = 1 AND c <= $8 AND abs(t - t0) > $6 - $7
  GROUP BY uid), w20 AS MATERIALIZED (SELECT uid, t, k, f, z, rs, re, sum(vs::INTEGER) OVER wn AS gv, sum(rs::INTEGER) OVER wn AS gc
  FROM (SELECT uid, t, k, f, z, f OR abs(t - pt) >= $7 AS vs, f OR abs(t - pt) >= $7 OR k <> pk AS rs, z OR abs(nt - t) >= $7 OR nk <> k AS re
  FROM (SELECT uid, t, k, lag(uid) OVER wl IS DISTINCT
  FROM uid AS f, lead(uid) OVER wl IS DISTINCT
  FROM uid AS z, lag(t) OVER wl AS pt, lag(k) OVER wl AS pk, lead(t) OVER wl AS nt, lead(k) OVER wl AS nk
  FROM (SELECT e.uid, e.t, d.k
  FROM e
  JOIN i a ON e.uid = a.uid
  LEFT JOIN d ON d.n = e.n
  WHERE e.t >= a.ta) WINDOW wl AS (ORDER BY uid, t, k))) WINDOW wn AS (ORDER BY uid, t, k ROWS UNBOUNDED PRECEDING)), w2 AS (SELECT x.uid, x.t, x.k, x.z, x.rs, x.re, x.gv - m.gv + 1 AS v, x.gc - m.gc + 1 AS c, m.t AS t0
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
  WHERE v = 1 AND c <= $8 AND rs), r AS (SELECT step, k, row_number() OVER (PARTITION BY step
  ORDER BY count(*) DESC, k) AS rk
  FROM l
  GROUP BY step, k), gl AS (SELECT l.uid, l.step, l.t, CASE WHEN r.rk <= $9 THEN l.k END AS g
  FROM l
  JOIN r ON r.step = l.step AND r.k = l.k) SELECT u.distinct_id, gl.t
  FROM gl
  JOIN users u ON u.product_id = $10 AND u.uid = gl.uid
  WHERE gl.step = $11 AND gl.g IS NULL AND (gl.t < $12 OR (gl.t = $13 AND u.distinct_id > $14))
  ORDER BY gl.t DESC, u.distinct_id
  LIMIT $15;
-- 1: uint32 0
-- 2: int64 1
-- 3: string live
-- 4: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 5: time.Time 2026-11-09 00:00:00 +0000 UTC
-- 6: int64 7200000000
-- 7: int64 1800000000
-- 8: int 2
-- 9: int 1
-- 10: int64 1
-- 11: int 2
-- 12: int64 1793581200000000
-- 13: int64 1793581200000000
-- 14: string u1
-- 15: int 51
