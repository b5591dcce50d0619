-- Two-step sign-ins waiting for their code (docs/two-step.md): a correct
-- password of an account with two-step sign-in on. The id is public; the
-- browser also holds a random token in a cookie, kept here only as its
-- SHA-256 (hex). Finishing a sign-in deletes its row in the transaction
-- that starts the session, so a challenge is good once. Shared by SQLite
-- and PostgreSQL; see 00001 for the column conventions. user_id declares
-- no REFERENCES, as webauthn_challenges (00021): a row lives five minutes
-- and the sweep removes it by expiry.

-- +goose Up
CREATE TABLE two_factor_challenges (
    id            TEXT   NOT NULL PRIMARY KEY,
    -- SHA-256 of the browser's token (the cookie payd_two_factor)
    token_hash    TEXT   NOT NULL,
    user_id       TEXT   NOT NULL,
    -- SHA-256 of the password hash (PHC string) that was given: a
    -- password changed since voids the challenge
    password_hash TEXT   NOT NULL,
    created_at    BIGINT NOT NULL,
    expires_at    BIGINT NOT NULL
);
-- the sweep of expired challenges
CREATE INDEX two_factor_challenges_expires_at ON two_factor_challenges (expires_at);

-- +goose Down
DROP TABLE two_factor_challenges;
