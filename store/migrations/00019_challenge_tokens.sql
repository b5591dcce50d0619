-- The bot-check tokens payd issues itself with --dev (POST /devnet/challenges,
-- docs/bot-check.md): good once, for one form, until they expire. Only the
-- token's hash is kept. Provider tokens (Turnstile, hCaptcha) are never
-- stored. Shared by SQLite and PostgreSQL; see 00001 for the column
-- conventions.

-- +goose Up
CREATE TABLE challenge_tokens (
    -- Hex SHA-256 of the token. Spending a token deletes its row in one
    -- statement, so two replicas racing for it cannot both win.
    hash       TEXT   NOT NULL PRIMARY KEY,
    -- signup, signin or reset.
    form       TEXT   NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
-- The sweep of expired tokens.
CREATE INDEX challenge_tokens_expires_at ON challenge_tokens (expires_at);

-- +goose Down
DROP TABLE challenge_tokens;
