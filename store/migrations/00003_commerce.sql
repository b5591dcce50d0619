-- Customers, links, payments and checkout settings (spec 2.2–2.4). Shared by
-- SQLite and PostgreSQL; see 00001 for the column conventions. Indexes for
-- listing and search live in their own migrations beside the queries that
-- need them.

-- +goose Up
-- What a customer sees of the business on public pages (spec 2.6).
ALTER TABLE businesses ADD COLUMN website TEXT NOT NULL DEFAULT '';
ALTER TABLE businesses ADD COLUMN support_email TEXT NOT NULL DEFAULT '';

CREATE TABLE customers (
    id              TEXT    NOT NULL PRIMARY KEY,
    business_id     TEXT    NOT NULL REFERENCES businesses (id),
    name            TEXT    NOT NULL,
    -- email as given; email_key is its lower-case form, unique per business
    -- when not empty (customer_exists).
    email           TEXT    NOT NULL,
    email_key       TEXT    NOT NULL,
    note            TEXT    NOT NULL,
    blocked         BOOLEAN NOT NULL,
    -- stats (spec 2.3), kept by payd.StatsDelta in the transaction that
    -- changes a payment.
    payments_count  BIGINT  NOT NULL,
    succeeded_count BIGINT  NOT NULL,
    volume_usd      BIGINT  NOT NULL,
    crypto_count    BIGINT  NOT NULL,
    card_count      BIGINT  NOT NULL,
    last_payment_at BIGINT,
    created_at      BIGINT  NOT NULL,
    updated_at      BIGINT  NOT NULL
);
CREATE UNIQUE INDEX customers_email ON customers (business_id, email_key) WHERE email_key <> '';
CREATE INDEX customers_created ON customers (business_id, created_at, id);

CREATE TABLE links (
    id             TEXT    NOT NULL PRIMARY KEY,
    business_id    TEXT    NOT NULL REFERENCES businesses (id),
    code           TEXT    NOT NULL UNIQUE,
    name           TEXT    NOT NULL,
    description    TEXT    NOT NULL,
    amount         BIGINT  NOT NULL,
    currency       TEXT    NOT NULL,
    success_url    TEXT,
    -- active, archived or disabled (a deleted link's row is gone).
    status         TEXT    NOT NULL,
    archived_at    BIGINT,
    disabled_at    BIGINT,
    payments_count BIGINT  NOT NULL,
    volume_usd     BIGINT  NOT NULL,
    created_at     BIGINT  NOT NULL,
    updated_at     BIGINT  NOT NULL
);
CREATE INDEX links_created ON links (business_id, created_at, id);

CREATE TABLE payments (
    id                  TEXT    NOT NULL PRIMARY KEY,
    business_id         TEXT    NOT NULL REFERENCES businesses (id),
    -- public code, the last path segment of url
    code                TEXT    NOT NULL UNIQUE,
    status              TEXT    NOT NULL,
    amount              BIGINT  NOT NULL,
    currency            TEXT    NOT NULL,
    fee_payer           TEXT    NOT NULL,
    customer_fee        BIGINT  NOT NULL,
    amount_received     BIGINT  NOT NULL,
    fee_rate_bps        INTEGER NOT NULL,
    -- reporting (spec 2.2.1), US cents; fee is NULL until the payment succeeds.
    usd_amount          BIGINT  NOT NULL,
    usd_fee             BIGINT,
    usd_transaction_fee BIGINT  NOT NULL,
    usd_customer_fee    BIGINT  NOT NULL,
    usd_net             BIGINT  NOT NULL,
    -- method and settlement (spec 2.2.2) as JSON objects, NULL until known;
    -- rail, tx_hash and from_address are copied out for filters and search.
    method              TEXT,
    settlement          TEXT,
    rail                TEXT,
    tx_hash             TEXT,
    from_address        TEXT,
    customer_id         TEXT,
    link_id             TEXT,
    reference           TEXT,
    -- metadata as a JSON object of strings; payment_metadata indexes it.
    metadata            TEXT    NOT NULL,
    success_url         TEXT,
    cancel_url          TEXT,
    expires_at          BIGINT,
    canceled_at         BIGINT,
    confirmed_at        BIGINT,
    checkout_id         TEXT,
    description         TEXT    NOT NULL,
    country             TEXT    NOT NULL,
    failure_code        TEXT,
    failure_message     TEXT,
    created_at          BIGINT  NOT NULL,
    updated_at          BIGINT  NOT NULL
);
CREATE INDEX payments_created ON payments (business_id, created_at, id);
CREATE INDEX payments_reference ON payments (business_id, reference, created_at) WHERE reference IS NOT NULL;

-- One row per metadata pair, for the metadata[key]=value filter.
CREATE TABLE payment_metadata (
    payment_id  TEXT   NOT NULL REFERENCES payments (id),
    business_id TEXT   NOT NULL,
    key         TEXT   NOT NULL,
    value       TEXT   NOT NULL,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (payment_id, key)
);
CREATE INDEX payment_metadata_value ON payment_metadata (business_id, key, value, created_at);

-- The payment's events history (spec 2.2.3), in order.
CREATE TABLE payment_events (
    payment_id TEXT    NOT NULL REFERENCES payments (id),
    seq        INTEGER NOT NULL,
    type       TEXT    NOT NULL,
    -- JSON object or NULL
    data       TEXT,
    created_at BIGINT  NOT NULL,
    PRIMARY KEY (payment_id, seq)
);

CREATE TABLE checkout_settings (
    business_id     TEXT    NOT NULL PRIMARY KEY REFERENCES businesses (id),
    quote_minutes   INTEGER NOT NULL,
    collect_email   BOOLEAN NOT NULL,
    fee_payer       TEXT    NOT NULL,
    -- comma-separated rails, e.g. "crypto,card"
    accepted_rails  TEXT    NOT NULL,
    -- JSON object: network → array of assets
    accepted_assets TEXT    NOT NULL,
    updated_at      BIGINT  NOT NULL
);

-- +goose Down
DROP TABLE checkout_settings;
DROP TABLE payment_events;
DROP TABLE payment_metadata;
DROP TABLE payments;
DROP TABLE links;
DROP TABLE customers;
ALTER TABLE businesses DROP COLUMN support_email;
ALTER TABLE businesses DROP COLUMN website;
