-- Recovery (docs/accounts.md "Recovery"): password reset links and email
-- changes. Link tokens and codes are stored only as their SHA-256 (hex).
-- Shared by SQLite and PostgreSQL; see 00001 for the column conventions.

-- +goose Up
CREATE TABLE password_resets (
    id         TEXT   NOT NULL PRIMARY KEY,
    user_id    TEXT   NOT NULL REFERENCES users (id),
    -- the address the link went to: a link stops working once the
    -- account's address changes
    email      TEXT   NOT NULL,
    -- SHA-256 of the link's token
    token_hash TEXT   NOT NULL UNIQUE,
    -- pending, used or replaced
    status     TEXT   NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at    BIGINT
);
CREATE INDEX password_resets_user_id ON password_resets (user_id, status);
-- the sweep of old links
CREATE INDEX password_resets_expires_at ON password_resets (expires_at);

CREATE TABLE email_changes (
    id              TEXT    NOT NULL PRIMARY KEY,
    user_id         TEXT    NOT NULL REFERENCES users (id),
    old_email       TEXT    NOT NULL,
    new_email       TEXT    NOT NULL,
    code_hash       TEXT    NOT NULL,
    code_sent_at    BIGINT  NOT NULL,
    codes_sent      INTEGER NOT NULL,
    -- when the session that started the change signed in: an undo takes
    -- away the sign-in methods added since
    session_started_at BIGINT NOT NULL,
    -- pending, done, replaced or undone
    status          TEXT    NOT NULL,
    -- SHA-256 of the undo link's token, NULL until the change is done
    undo_hash       TEXT    UNIQUE,
    version         INTEGER NOT NULL,
    created_at      BIGINT  NOT NULL,
    expires_at      BIGINT  NOT NULL,
    done_at         BIGINT,
    undo_expires_at BIGINT
);
-- a user's pending change, and the changes started and finished in the
-- last hour (spec 8.3)
CREATE INDEX email_changes_user_id ON email_changes (user_id, created_at);
CREATE INDEX email_changes_done_at ON email_changes (user_id, done_at);

-- +goose Down
DROP TABLE email_changes;
DROP TABLE password_resets;
