-- In-app message campaigns (docs/messages.md). definition is the JSON of
-- what the SDK and the server's rules read: {trigger, pathRegex, audience,
-- cap, variants}; status, the linked experiment and its flag's key are
-- columns of their own. message_settings holds each product's auto-render
-- setting (a table apart: DuckDB cannot ALTER products, which other tables
-- reference). message_states is each user's state with each campaign, the
-- memory of the frequency cap and the terminal rule, read by one lookup of
-- its primary key and replaced by INSERT … ON CONFLICT; day is days since
-- the epoch (UTC). survey_responses holds each response's answers as JSON
-- [{"questionId", "value"}]. PostgreSQL dialect.
CREATE SEQUENCE campaigns_id_seq START 1;
CREATE TABLE campaigns (
    id            BIGINT PRIMARY KEY DEFAULT nextval('campaigns_id_seq'),
    product_id    BIGINT NOT NULL REFERENCES products (id),
    name          VARCHAR NOT NULL,
    status        VARCHAR NOT NULL,
    experiment_id BIGINT,
    flag_key      VARCHAR NOT NULL,
    definition    VARCHAR NOT NULL,
    created_at    TIMESTAMP NOT NULL,
    updated_at    TIMESTAMP NOT NULL
);
CREATE INDEX campaigns_product ON campaigns (product_id);

CREATE TABLE message_settings (
    product_id  BIGINT PRIMARY KEY,
    auto_render BOOLEAN NOT NULL,
    updated_at  TIMESTAMP NOT NULL
);

CREATE TABLE message_states (
    product_id      BIGINT NOT NULL,
    distinct_id     VARCHAR NOT NULL,
    campaign_id     BIGINT NOT NULL,
    impressions     INTEGER NOT NULL,
    day             INTEGER NOT NULL,
    day_impressions INTEGER NOT NULL,
    ended           VARCHAR NOT NULL,
    variant         VARCHAR NOT NULL,
    updated_at      TIMESTAMP NOT NULL,
    PRIMARY KEY (product_id, distinct_id, campaign_id)
);

CREATE SEQUENCE survey_responses_id_seq START 1;
CREATE TABLE survey_responses (
    id          BIGINT PRIMARY KEY DEFAULT nextval('survey_responses_id_seq'),
    product_id  BIGINT NOT NULL,
    campaign_id BIGINT NOT NULL,
    distinct_id VARCHAR NOT NULL,
    variant     VARCHAR NOT NULL,
    answers     VARCHAR NOT NULL,
    created_at  TIMESTAMP NOT NULL
);
CREATE INDEX survey_responses_campaign ON survey_responses (product_id, campaign_id);
