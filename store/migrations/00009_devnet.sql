-- The devnet's operation log (docs/devnet.md): with --dev, every transfer,
-- mined block and reorg of the simulated networks is appended here before
-- it is acknowledged, and the devnet replays the log on start. Shared by
-- SQLite and PostgreSQL; see 00001 for the column conventions.

-- +goose Up
CREATE TABLE devnet_ops (
    -- 1, 2, 3, … in the order the ops were applied. The devnet has one
    -- writer (its mutex, in one process), which takes MAX(seq) + 1; two
    -- writers would collide on this key rather than interleave.
    seq        BIGINT NOT NULL PRIMARY KEY,
    -- The op as the devnet encodes it (a JSON object); the store does not
    -- read it.
    op         TEXT   NOT NULL,
    created_at BIGINT NOT NULL
);

-- +goose Down
DROP TABLE devnet_ops;
