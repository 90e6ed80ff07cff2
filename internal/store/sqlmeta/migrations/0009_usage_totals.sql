-- Rate-limit usage the nodes share, for every limit that is held across
-- them: scope 'key' counts an API key's ingest requests, 'workspace' a
-- workspace's annotation writes. Nodes add what they admitted about once a
-- second and debit their own buckets with what the others did
-- (internal/ratelimit). It replaces key_usage, which had room for keys only.
CREATE TABLE usage_totals (
    scope VARCHAR NOT NULL,
    id    BIGINT NOT NULL,
    used  BIGINT NOT NULL,
    PRIMARY KEY (scope, id)
);
DROP TABLE key_usage;
