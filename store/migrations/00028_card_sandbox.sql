-- The sandbox card provider's sessions (card/sandbox, docs/card.md "The
-- sandbox provider"): payd's own stand-in for a provider's hosted card
-- page, kept here so every replica's page and poller see one state.
-- Shared by SQLite and PostgreSQL; see 00001 for the column conventions.

-- +goose Up
CREATE TABLE card_sandbox_sessions (
    -- cs_ and random.
    id          TEXT    NOT NULL PRIMARY KEY,
    checkout_id TEXT    NOT NULL,
    route       INTEGER NOT NULL,
    -- What the card is charged, in minor units of currency.
    amount      BIGINT  NOT NULL,
    currency    TEXT    NOT NULL,
    -- The coin delivered once paid: a decimal amount of asset, to address
    -- (and the Solana Pay reference, on solana) on network.
    asset       TEXT    NOT NULL,
    network     TEXT    NOT NULL,
    deliver     TEXT    NOT NULL,
    address     TEXT    NOT NULL,
    reference   TEXT,
    email       TEXT,
    return_url  TEXT    NOT NULL,
    -- awaiting_payment, challenge, processing, delivering, delivered or
    -- declined. Every change is a conditional UPDATE on the state it
    -- leaves, so of two racing pollers only one sends the coin.
    state        TEXT   NOT NULL,
    last4        TEXT,
    decline_code TEXT,
    -- When a delayed card's delivery falls due; NULL for at once.
    pay_at       BIGINT,
    tx_hash      TEXT,
    expires_at   BIGINT NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL
);

-- +goose Down
DROP TABLE card_sandbox_sessions;
