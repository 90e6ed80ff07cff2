WITH e AS MATERIALIZED (SELECT uid, epoch_us(ts) AS t, path AS n
  FROM events
  WHERE product_id = $2 AND env = $3 AND ts >= $4::TIMESTAMP AND ts < $5::TIMESTAMP AND NOT is_bot AND eid = $1 AND path IS NOT NULL AND path <> ''), a AS (SELECT uid, min(t) AS ta
  FROM e
  WHERE n = $6
  GROUP BY uid), s AS (SELECT e.uid, e.t, e.n
  FROM e
  JOIN a ON e.uid = a.uid
  WHERE (e.t > a.ta OR (e.t = a.ta AND e.n >= $7)) AND e.t < a.ta + $8), w0 AS MATERIALIZED (SELECT uid, t, n, sum(CASE WHEN pu IS DISTINCT
  FROM uid OR d >= $9 THEN 1 ELSE 0 END) OVER wn AS gv, sum(CASE WHEN pu IS DISTINCT
  FROM uid OR d >= $9 OR n <> pn THEN 1 ELSE 0 END) OVER wn AS gc
  FROM (SELECT uid, t, n, lag(uid) OVER wl AS pu, abs(t - lag(t) OVER wl) AS d, lag(n) OVER wl AS pn
  FROM s WINDOW wl AS (ORDER BY uid, t, n)) WINDOW wn AS (ORDER BY uid, t, n ROWS UNBOUNDED PRECEDING)), w AS (SELECT x.uid, x.t, x.n, x.gv - m.v0 + 1 AS v, x.gc - m.c0 + 1 AS c
  FROM w0 x
  JOIN (SELECT uid, min(gv) AS v0, min(gc) AS c0
  FROM w0
  GROUP BY uid) m ON m.uid = x.uid), i AS (SELECT uid
  FROM w
  GROUP BY uid
  HAVING max(c) FILTER (WHERE v = 1) <= $10 AND max(v) = 1 AND max(t) > min(t) + $8 - $9), w20 AS MATERIALIZED (SELECT uid, t, n, sum(CASE WHEN pu IS DISTINCT
  FROM uid OR d >= $9 THEN 1 ELSE 0 END) OVER wn AS gv, sum(CASE WHEN pu IS DISTINCT
  FROM uid OR d >= $9 OR n <> pn THEN 1 ELSE 0 END) OVER wn AS gc
  FROM (SELECT uid, t, n, lag(uid) OVER wl AS pu, abs(t - lag(t) OVER wl) AS d, lag(n) OVER wl AS pn
  FROM (SELECT e.uid, e.t, e.n
  FROM e
  JOIN a ON e.uid = a.uid
  WHERE (e.t > a.ta OR (e.t = a.ta AND e.n >= $7)) AND e.uid IN (SELECT uid
  FROM i)) WINDOW wl AS (ORDER BY uid, t, n)) WINDOW wn AS (ORDER BY uid, t, n ROWS UNBOUNDED PRECEDING)), w2 AS (SELECT x.uid, x.t, x.n, x.gv - m.v0 + 1 AS v, x.gc - m.c0 + 1 AS c
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
  WHERE v = 1 AND c <= $10
  GROUP BY uid, c), r AS (SELECT step, n, row_number() OVER (PARTITION BY step
  ORDER BY count(*) DESC, n) AS rk
  FROM l
  GROUP BY step, n), gl AS (SELECT l.uid, l.step, l.t, CASE WHEN r.rk <= $11 THEN l.n END AS g
  FROM l
  JOIN r ON r.step = l.step AND r.n = l.n) SELECT 0, step, g, NULL, count(*)
  FROM gl
  GROUP BY step, g
  UNION ALL SELECT 1, a.step, a.g, z.g, count(*)
  FROM gl a
  JOIN gl z ON z.uid = a.uid AND z.step = a.step + 1
  GROUP BY a.step, a.g, z.g;
-- 1: uint32 0
-- 2: int64 1
-- 3: string live
-- 4: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 5: time.Time 2026-11-09 00:00:00 +0000 UTC
-- 6: string /pricing
-- 7: string /pricing
-- 8: int64 7200000000
-- 9: int64 1800000000
-- 10: int 4
-- 11: int 5
