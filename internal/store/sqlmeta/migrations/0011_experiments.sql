-- Experiments, per product, each on one flag whose arms it tests
-- (docs/flags.md, "Experiments"). holdout_bp is the holdout in hundredths
-- of a percent (0–2500); secondary_events is a JSON list of event names;
-- start_date and end_date are UTC days or NULL. A flag carries at most one
-- experiment that is not completed (checked by the store in the insert's
-- transaction). PostgreSQL dialect.
CREATE SEQUENCE experiments_id_seq START 1;
CREATE TABLE experiments (
    id               BIGINT PRIMARY KEY DEFAULT nextval('experiments_id_seq'),
    product_id       BIGINT NOT NULL REFERENCES products (id),
    flag_id          BIGINT NOT NULL,
    name             VARCHAR NOT NULL,
    holdout_bp       INTEGER NOT NULL,
    primary_event    VARCHAR NOT NULL,
    secondary_events VARCHAR NOT NULL,
    start_date       DATE,
    end_date         DATE,
    status           VARCHAR NOT NULL,
    pause_reason     VARCHAR NOT NULL,
    winner           VARCHAR NOT NULL,
    created_at       TIMESTAMP NOT NULL,
    updated_at       TIMESTAMP NOT NULL
);
CREATE INDEX experiments_product ON experiments (product_id, flag_id);
