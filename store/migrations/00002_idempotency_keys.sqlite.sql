-- The PostgreSQL twin differs only in body's type: a stored response is
-- replayed byte for byte, which TEXT cannot promise on PostgreSQL (NUL,
-- invalid UTF-8), so it is BLOB here and BYTEA there. WITHOUT ROWID keeps
-- the rows in the primary key's own B-tree: every claim then writes one
-- tree fewer, and claims are on the hot path of every idempotent POST.

-- +goose Up
CREATE TABLE idempotency_keys (
    scope        TEXT    NOT NULL,
    key          TEXT    NOT NULL,
    method       TEXT    NOT NULL,
    path         TEXT    NOT NULL,
    body_hash    TEXT    NOT NULL,
    -- 0 while the first request runs, then its 2xx status.
    status       INTEGER NOT NULL,
    content_type TEXT    NOT NULL,
    body         BLOB,
    created_at   BIGINT  NOT NULL,
    locked_until BIGINT  NOT NULL,
    expires_at   BIGINT  NOT NULL,
    PRIMARY KEY (scope, key)
) WITHOUT ROWID;
CREATE INDEX idempotency_keys_expires_at ON idempotency_keys (expires_at);

-- +goose Down
DROP TABLE idempotency_keys;
