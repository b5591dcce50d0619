-- Checkouts (spec 2.5, docs/checkouts.md), the indexes the watcher and the
-- expiry loop read by, and named leases. Shared by SQLite and PostgreSQL;
-- see 00001 for the column conventions.

-- +goose Up
-- One attempt to pay a payment on one rail. Columns a query filters on are
-- scalar; the rest of the domain type is JSON text with explicit names
-- (store/checkout_row.go), coin amounts in it being base units as decimal
-- integer strings: wei overflow BIGINT, and SQLite's NUMERIC is lossy.
CREATE TABLE checkouts (
    id             TEXT    NOT NULL PRIMARY KEY,
    business_id    TEXT    NOT NULL REFERENCES businesses (id),
    payment_id     TEXT    NOT NULL REFERENCES payments (id),
    link_id        TEXT,
    status         TEXT    NOT NULL,
    rail           TEXT    NOT NULL,
    amount         BIGINT  NOT NULL,
    currency       TEXT    NOT NULL,
    -- JSON object: price, processing_fee, network_fee, total (minor units)
    breakdown      TEXT    NOT NULL,
    -- JSON object of the crypto quote without its deposit; NULL on card.
    quote          TEXT,
    -- The deposit, copied out of the quote for the watcher and for the
    -- uniqueness below; NULL on card. reference is the Solana Pay key,
    -- '' elsewhere (never NULL, which a unique index would treat as
    -- distinct from every other NULL).
    network        TEXT,
    address        TEXT,
    reference      TEXT    NOT NULL,
    required       INTEGER NOT NULL,
    remainder      BOOLEAN NOT NULL,
    prior_received BIGINT  NOT NULL,
    canceled_by    TEXT,
    replaced_by    TEXT,
    failure_code   TEXT,
    review_reason  TEXT,
    success_url    TEXT,
    expires_at     BIGINT  NOT NULL,
    sent_at        BIGINT,
    email          TEXT,
    -- JSON object: the US view of what the checkout collects (US cents)
    reporting      TEXT    NOT NULL,
    fee_rate_bps   INTEGER NOT NULL,
    -- JSON array of the transfers seen paying the deposit, in order seen
    transfers      TEXT    NOT NULL,
    claim_tx_hash  TEXT,
    watch_until    BIGINT  NOT NULL,
    -- UpdateCheckout's optimistic lock: bumped by every stored change.
    version        BIGINT  NOT NULL,
    created_at     BIGINT  NOT NULL,
    updated_at     BIGINT  NOT NULL
);
-- A deposit pays one checkout, forever: a transfer to it, even a late one,
-- must name a single checkout. On Solana one address serves every
-- checkout, told apart by the reference.
CREATE UNIQUE INDEX checkouts_deposit ON checkouts (network, address, reference) WHERE network IS NOT NULL;
-- WatchedCheckouts: network = $1 AND watch_until > $2 AND id > $3 ORDER BY
-- id. Rows stop being watched a week after they end, so over time nearly
-- every row is unwatched: a range on watch_until visits only the watched
-- ones, and with id in the index that range is answered from the index
-- alone, before the page's rows are read by primary key. An index ordered
-- by id would walk every ended checkout of the network on each pass.
CREATE INDEX checkouts_watched ON checkouts (network, watch_until, id) WHERE network IS NOT NULL;
-- DueCheckouts: live checkouts whose quote ended, oldest first. Only live
-- rows are indexed, so the index stays as small as the work.
CREATE INDEX checkouts_due ON checkouts (expires_at, id) WHERE status IN ('open', 'processing', 'underpaid');

-- DuePayments: pending payments past expires_at, oldest first.
CREATE INDEX payments_due ON payments (expires_at, id) WHERE status = 'pending' AND expires_at IS NOT NULL;

-- Named leases (payd.LeaseStore): holder has name until the time until.
CREATE TABLE leases (
    name   TEXT   NOT NULL PRIMARY KEY,
    holder TEXT   NOT NULL,
    until  BIGINT NOT NULL
);

-- +goose Down
DROP TABLE leases;
DROP INDEX payments_due;
DROP TABLE checkouts;
