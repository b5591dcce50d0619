-- What the followers of real networks keep (DESIGN §4, docs/networks.md).
-- chain_blocks holds the hash of every block processed on the chain the
-- node follows, so that a block that does not connect is found and the
-- follower walks back to the fork point; the highest row is where it
-- resumes after a restart. chain_transfers holds the transfers into
-- watched deposits: height NULL while one waits unconfirmed (in the
-- mempool, or orphaned by a reorg). chain_status is each network's last
-- reading of its node, for operators and for the API.

-- +goose Up
CREATE TABLE chain_blocks (
    network    TEXT   NOT NULL,
    height     BIGINT NOT NULL,
    hash       TEXT   NOT NULL,
    parent     TEXT   NOT NULL,
    stored_at  BIGINT NOT NULL,
    PRIMARY KEY (network, height)
);

CREATE TABLE chain_transfers (
    network      TEXT    NOT NULL,
    tx_hash      TEXT    NOT NULL,
    idx          INTEGER NOT NULL,
    address      TEXT    NOT NULL,
    reference    TEXT    NOT NULL,
    from_address TEXT    NOT NULL,
    asset        TEXT    NOT NULL,
    -- base units of asset, a decimal integer (wei overflow BIGINT)
    amount       TEXT    NOT NULL,
    height       BIGINT,
    block_hash   TEXT,
    seen_at      BIGINT  NOT NULL,
    PRIMARY KEY (network, tx_hash, idx)
);
CREATE INDEX chain_transfers_address ON chain_transfers (network, address);
CREATE INDEX chain_transfers_block ON chain_transfers (network, block_hash);

CREATE TABLE chain_status (
    network       TEXT   NOT NULL PRIMARY KEY,
    chain         TEXT   NOT NULL,
    tip_height    BIGINT NOT NULL,
    tip_hash      TEXT   NOT NULL,
    head_height   BIGINT NOT NULL,
    head_hash     TEXT   NOT NULL,
    error         TEXT   NOT NULL,
    checked_at    BIGINT NOT NULL,
    failing_since BIGINT
);

-- The followers read the deposits of checkouts opened since their last
-- look, every poll.
CREATE INDEX checkouts_network_created ON checkouts (network, created_at);

-- +goose Down
DROP INDEX checkouts_network_created;
DROP TABLE chain_status;
DROP TABLE chain_transfers;
DROP TABLE chain_blocks;
