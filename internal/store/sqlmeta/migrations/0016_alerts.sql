-- Error alerts (docs/errors.md, "Alerts").
--
-- alert_webhooks: a product's one webhook. secret is the signing key as it
-- is, not a hash: the server computes an HMAC-SHA256 of every delivery
-- with it, for which it needs the key itself (a hash, as kept for API keys
-- and tokens, can check a secret presented to the server but cannot sign).
-- spike_factor is hundredths (500 = 5 times); spike_min the least count of
-- events in the hour for a spike.
--
-- error_alerts: one row per alert, claimed (inserted) before its delivery:
-- the unique key lets one group alert once as new and once per spike hour,
-- whichever node and however many nodes try. hour is the spike's hour, and
-- 1970-01-01 00:00 for a new group (a fixed value, so that the key also
-- holds for new alerts: NULLs would never clash). payload is the JSON sent
-- (without the per-attempt timestamp); status is pending, delivered or
-- failed. Rows are kept when the webhook is deleted, so that a webhook set
-- up again does not alert again for what was alerted.
-- PostgreSQL dialect.
CREATE TABLE alert_webhooks (
    product_id   BIGINT PRIMARY KEY REFERENCES products (id),
    url          VARCHAR NOT NULL,
    enabled      BOOLEAN NOT NULL,
    spike_factor BIGINT NOT NULL,
    spike_min    BIGINT NOT NULL,
    secret       VARCHAR NOT NULL,
    created_at   TIMESTAMP NOT NULL,
    updated_at   TIMESTAMP NOT NULL
);

CREATE SEQUENCE error_alerts_id_seq START 1;
CREATE TABLE error_alerts (
    id           BIGINT PRIMARY KEY DEFAULT nextval('error_alerts_id_seq'),
    product_id   BIGINT NOT NULL REFERENCES products (id),
    fingerprint  VARCHAR NOT NULL,
    kind         VARCHAR NOT NULL,
    hour         TIMESTAMP NOT NULL,
    payload      VARCHAR NOT NULL,
    status       VARCHAR NOT NULL,
    attempts     INTEGER NOT NULL,
    last_error   VARCHAR NOT NULL,
    created_at   TIMESTAMP NOT NULL,
    delivered_at TIMESTAMP,
    UNIQUE (product_id, fingerprint, kind, hour)
);
CREATE INDEX error_alerts_product ON error_alerts (product_id, id);
