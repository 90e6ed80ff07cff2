WITH e AS MATERIALIZED (SELECT uid, epoch_us(ts) AS t, event AS n
  FROM events
  WHERE product_id = $1 AND env = $2 AND ts >= $3::TIMESTAMP AND ts < $4::TIMESTAMP AND NOT is_bot AND coalesce(path = $5, false) AND coalesce(TRY_CAST(json_extract_string(properties, $6) AS DOUBLE) = $7, false)), a AS (SELECT uid, min(t) AS ta
  FROM e
  WHERE n = $8
  GROUP BY uid), s AS (SELECT e.uid, e.t, e.n
  FROM e
  JOIN a ON e.uid = a.uid
  WHERE (e.t < a.ta OR (e.t = a.ta AND e.n <= $9)) AND e.t > a.ta - $10), w0 AS MATERIALIZED (SELECT uid, t, n, sum(CASE WHEN pu IS DISTINCT
  FROM uid OR d >= $11 THEN 1 ELSE 0 END) OVER wn AS gv, sum(CASE WHEN pu IS DISTINCT
  FROM uid OR d >= $11 OR n <> pn THEN 1 ELSE 0 END) OVER wn AS gc
  FROM (SELECT uid, t, n, lag(uid) OVER wl AS pu, abs(t - lag(t) OVER wl) AS d, lag(n) OVER wl AS pn
  FROM s WINDOW wl AS (ORDER BY uid, t DESC, n DESC)) WINDOW wn AS (ORDER BY uid, t DESC, n DESC ROWS UNBOUNDED PRECEDING)), w AS (SELECT x.uid, x.t, x.n, x.gv - m.v0 + 1 AS v, x.gc - m.c0 + 1 AS c
  FROM w0 x
  JOIN (SELECT uid, min(gv) AS v0, min(gc) AS c0
  FROM w0
  GROUP BY uid) m ON m.uid = x.uid), i AS (SELECT uid
  FROM w
  GROUP BY uid
  HAVING max(c) FILTER (WHERE v = 1) <= $12 AND max(v) = 1 AND min(t) < max(t) - $10 + $11), w20 AS MATERIALIZED (SELECT uid, t, n, sum(CASE WHEN pu IS DISTINCT
  FROM uid OR d >= $11 THEN 1 ELSE 0 END) OVER wn AS gv, sum(CASE WHEN pu IS DISTINCT
  FROM uid OR d >= $11 OR n <> pn THEN 1 ELSE 0 END) OVER wn AS gc
  FROM (SELECT uid, t, n, lag(uid) OVER wl AS pu, abs(t - lag(t) OVER wl) AS d, lag(n) OVER wl AS pn
  FROM (SELECT e.uid, e.t, e.n
  FROM e
  JOIN a ON e.uid = a.uid
  WHERE (e.t < a.ta OR (e.t = a.ta AND e.n <= $9)) AND e.uid IN (SELECT uid
  FROM i)) WINDOW wl AS (ORDER BY uid, t DESC, n DESC)) WINDOW wn AS (ORDER BY uid, t DESC, n DESC ROWS UNBOUNDED PRECEDING)), w2 AS (SELECT x.uid, x.t, x.n, x.gv - m.v0 + 1 AS v, x.gc - m.c0 + 1 AS c
  FROM w20 x
  JOIN (SELECT uid, min(gv) AS v0, min(gc) AS c0
  FROM w20
  GROUP BY uid) m ON m.uid = x.uid), l AS (SELECT uid, c AS step, min(t) AS t, any_value(n) AS n
  FROM (SELECT *
  FROM w
  WHERE uid NOT IN (SELECT uid
  FROM i)
  UNION ALL SELECT *
  FROM w2)
  WHERE v = 1 AND c <= $12
  GROUP BY uid, c), r AS (SELECT step, n, row_number() OVER (PARTITION BY step
  ORDER BY count(*) DESC, n) AS rk
  FROM l
  GROUP BY step, n), gl AS (SELECT l.uid, l.step, l.t, CASE WHEN r.rk <= $13 THEN l.n END AS g
  FROM l
  JOIN r ON r.step = l.step AND r.n = l.n) SELECT 0, step, g, NULL, count(*)
  FROM gl
  GROUP BY step, g
  UNION ALL SELECT 1, a.step, a.g, z.g, count(*)
  FROM gl a
  JOIN gl z ON z.uid = a.uid AND z.step = a.step + 1
  GROUP BY a.step, a.g, z.g;
-- 1: int64 1
-- 2: string live
-- 3: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 4: time.Time 2026-11-09 00:00:00 +0000 UTC
-- 5: string /pricing
-- 6: string /seats
-- 7: float64 3
-- 8: string purchase
-- 9: string purchase
-- 10: int64 7200000000
-- 11: int64 1800000000
-- 12: int 3
-- 13: int 2
