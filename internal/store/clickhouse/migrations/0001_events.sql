-- The events table. Times are microseconds since the epoch (ClickHouse
-- 18.16 has no DateTime64); optional strings are '' when unset; prop_keys
-- and prop_values are the top-level properties and their text forms, for
-- filters and breakdowns.
--
-- The store fills in {db}, {table} and {engine} (migrations.go): on one
-- server, events with the MergeTree engine; on a cluster, events_local
-- with the MergeTree engine on each shard, and events with a Distributed
-- engine over them on every server. Every statement is idempotent, so a
-- database created before these files were recorded is adopted as it is.
CREATE DATABASE IF NOT EXISTS `{db}`;

CREATE TABLE IF NOT EXISTS `{db}`.{table} (
    uuid         FixedString(16),
    product_id   Int64,
    env          String,
    ts           Int64,
    received_at  Int64,
    event        String,
    distinct_id  String,
    user_id      UInt64,
    url          String,
    path         String,
    referrer     String,
    user_agent   String,
    browser      String,
    os           String,
    device_type  String,
    is_bot       UInt8,
    bot_name     String,
    bot_category String,
    properties   String,
    prop_keys    Array(String),
    prop_values  Array(String)
) {engine};
