-- Team invitations (docs/accounts.md "Teams"): an owner or admin invites
-- an address with a role; the emailed link's token is stored only as its
-- SHA-256 (hex). Rows are kept after they end (accepted, revoked,
-- replaced) so that the per-day invitation bounds count them. Shared by
-- SQLite and PostgreSQL; see 00001 for the column conventions.

-- +goose Up
CREATE TABLE invitations (
    id          TEXT   NOT NULL PRIMARY KEY,
    business_id TEXT   NOT NULL REFERENCES businesses (id),
    email       TEXT   NOT NULL,
    -- lower case (payd.EmailKey)
    email_key   TEXT   NOT NULL,
    role        TEXT   NOT NULL,
    token_hash  TEXT   NOT NULL UNIQUE,
    -- the user who sent it
    invited_by  TEXT   NOT NULL REFERENCES users (id),
    status      TEXT   NOT NULL,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    ended_at    BIGINT
);
CREATE INDEX invitations_business_id ON invitations (business_id, created_at);
CREATE INDEX invitations_email_key ON invitations (business_id, email_key, status);

-- +goose Down
DROP TABLE invitations;
