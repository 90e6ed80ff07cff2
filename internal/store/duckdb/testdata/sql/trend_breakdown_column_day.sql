WITH agg AS (SELECT date_trunc('day', ts) AS bucket, coalesce(path, '') AS v, count(*) AS c
  FROM events
  WHERE product_id = $1 AND env = $2 AND ts >= $3::TIMESTAMP AND ts < $4::TIMESTAMP AND NOT is_bot AND eid = $5::UINTEGER
  GROUP BY bucket, v), top AS (SELECT v, row_number() OVER (ORDER BY sum(c) DESC, v) AS rank
  FROM agg
  GROUP BY v
  ORDER BY rank
  LIMIT $6) SELECT bucket, coalesce(top.rank, 0) AS r, CASE WHEN top.rank IS NULL THEN '' ELSE agg.v END AS bv, sum(c)::BIGINT
  FROM agg
  LEFT JOIN top USING (v)
  GROUP BY bucket, r, bv;
-- 1: int64 1
-- 2: string live
-- 3: time.Time 2026-11-02 00:00:00 +0000 UTC
-- 4: time.Time 2026-11-09 00:00:00 +0000 UTC
-- 5: uint32 2
-- 6: int 5
