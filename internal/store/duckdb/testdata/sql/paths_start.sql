WITH e AS (SELECT uid, epoch_us(ts) AS t, path AS n
  FROM events
  WHERE product_id = $2 AND env = $3 AND ts >= $4::TIMESTAMP AND ts < $5::TIMESTAMP AND NOT is_bot AND eid = $1 AND path IS NOT NULL AND path <> ''), g AS (SELECT uid, t, n, t - lag(t) OVER w AS d, lag(n) OVER w AS pn
  FROM e WINDOW w AS (PARTITION BY uid
  ORDER BY t, n)), k AS (SELECT uid, t, n, sum(CASE WHEN d IS NULL OR d >= $6 THEN 1 ELSE 0 END) OVER (PARTITION BY uid
  ORDER BY t, n ROWS UNBOUNDED PRECEDING) AS v
  FROM g
  WHERE d IS NULL OR d >= $6 OR n <> pn), x AS (SELECT uid, t, n, v, row_number() OVER (PARTITION BY uid, v
  ORDER BY t, n) AS i
  FROM k), a AS (SELECT uid, arg_min(v, t) AS av, arg_min(i, t) AS ai
  FROM x
  WHERE n = $7
  GROUP BY uid), l AS (SELECT x.uid, x.i - a.ai + 1 AS step, x.t, x.n
  FROM x
  JOIN a ON x.uid = a.uid AND x.v = a.av
  WHERE x.i >= a.ai AND x.i < a.ai + $8), r AS (SELECT step, n, row_number() OVER (PARTITION BY step
  ORDER BY count(*) DESC, n) AS rk
  FROM l
  GROUP BY step, n), gl AS (SELECT l.uid, l.step, l.t, CASE WHEN r.rk <= $9 THEN l.n END AS g
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
-- 6: int64 1800000000
-- 7: string /pricing
-- 8: int 4
-- 9: int 5
