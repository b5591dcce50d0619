-- Shared by SQLite and PostgreSQL: only TEXT, BIGINT, INTEGER and BOOLEAN.
-- Timestamps are BIGINT Unix microseconds UTC; money is never REAL or
-- NUMERIC (SQLite's NUMERIC affinity is lossy): exact decimals are TEXT.
-- Every primary key says NOT NULL because SQLite would otherwise allow NULL.

-- +goose Up
CREATE TABLE businesses (
    id           TEXT    NOT NULL PRIMARY KEY,
    name         TEXT    NOT NULL,
    email        TEXT    NOT NULL,
    live         BOOLEAN NOT NULL,
    suspended_at BIGINT,
    created_at   BIGINT  NOT NULL,
    updated_at   BIGINT  NOT NULL
);

CREATE TABLE api_keys (
    id          TEXT   NOT NULL PRIMARY KEY,
    business_id TEXT   NOT NULL REFERENCES businesses (id),
    kind        TEXT   NOT NULL,
    mode        TEXT   NOT NULL,
    -- Permissions.String(): "payments:read,customers:write"; empty unless restricted.
    permissions TEXT   NOT NULL,
    hash        TEXT   NOT NULL UNIQUE,
    hint        TEXT   NOT NULL,
    name        TEXT   NOT NULL,
    created_at  BIGINT NOT NULL,
    revoked_at  BIGINT
);
CREATE INDEX api_keys_business_id ON api_keys (business_id);

CREATE TABLE pauses (
    name      TEXT   NOT NULL PRIMARY KEY,
    reason    TEXT   NOT NULL,
    paused_at BIGINT NOT NULL
);

-- History of rate snapshots. coins and fiat are JSON objects whose values
-- are decimal strings (US cents per coin, US dollars per currency unit);
-- sources is a JSON array of source names.
CREATE TABLE exchange_rates (
    id         TEXT   NOT NULL PRIMARY KEY,
    coins      TEXT   NOT NULL,
    fiat       TEXT   NOT NULL,
    sources    TEXT   NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX exchange_rates_created_at ON exchange_rates (created_at);

CREATE TABLE rate_counters (
    key          TEXT    NOT NULL,
    window_start BIGINT  NOT NULL,
    count        INTEGER NOT NULL,
    expires_at   BIGINT  NOT NULL,
    PRIMARY KEY (key, window_start)
);
CREATE INDEX rate_counters_expires_at ON rate_counters (expires_at);

CREATE TABLE settings (
    name  TEXT NOT NULL PRIMARY KEY,
    value TEXT NOT NULL
);

-- +goose Down
DROP TABLE settings;
DROP TABLE rate_counters;
DROP TABLE exchange_rates;
DROP TABLE pauses;
DROP TABLE api_keys;
DROP TABLE businesses;
