-- Wallets (docs/wallets.md): the public account keys a business receives
-- on, the counters behind fresh deposit addresses, and holdings. Shared by
-- SQLite and PostgreSQL; see 00001 for the column conventions. payd never
-- stores a private key or a recovery phrase (DESIGN 1.3).

-- +goose Up
CREATE TABLE wallets (
    id          TEXT   NOT NULL PRIMARY KEY,
    business_id TEXT   NOT NULL REFERENCES businesses (id),
    -- generated (payd business create --wallet generate) or attached (POST /wallet)
    source      TEXT   NOT NULL,
    created_at  BIGINT NOT NULL
);
-- One wallet per business (wallet_exists). A named index rather than a
-- column constraint, so that wallet changes can later narrow it to the
-- wallet in force.
CREATE UNIQUE INDEX wallets_business ON wallets (business_id);

-- One row per network the wallet receives on.
CREATE TABLE wallet_keys (
    wallet_id   TEXT   NOT NULL REFERENCES wallets (id),
    network     TEXT   NOT NULL,
    -- hd.AccountKey.String(): one spelling per key (a bitcoin xpub is
    -- stored as its zpub), so the constraint below sees one key as one.
    account_key TEXT   NOT NULL,
    -- The next receive index NextAddressIndex hands out on this network;
    -- the row is the counter, locked by the transaction that takes one.
    next_index  BIGINT NOT NULL,
    PRIMARY KEY (wallet_id, network),
    -- A key is attached to one wallet per network: two businesses sharing
    -- a key would share deposit addresses (spec 7.2, POST /wallet).
    CONSTRAINT wallet_keys_key UNIQUE (network, account_key)
);

-- What the wallet has received and kept, per coin and network. amount is
-- base units (satoshi, wei, lamports, token units) as a decimal integer
-- string: wei overflow BIGINT at about 9.2 ETH, and SQLite's NUMERIC is
-- lossy.
CREATE TABLE wallet_holdings (
    wallet_id  TEXT   NOT NULL REFERENCES wallets (id),
    asset      TEXT   NOT NULL,
    network    TEXT   NOT NULL,
    amount     TEXT   NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (wallet_id, asset, network)
);

-- +goose Down
DROP TABLE wallet_holdings;
DROP TABLE wallet_keys;
DROP TABLE wallets;
