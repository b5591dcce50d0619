-- Accounts (docs/accounts.md): people, their sign-ups, sessions and
-- memberships of businesses, and the failure counts of spec 8.3. Codes and
-- session tokens are stored only as their SHA-256 (hex); passwords only as
-- argon2id PHC strings. Shared by SQLite and PostgreSQL; see 00001 for the
-- column conventions.

-- +goose Up
CREATE TABLE users (
    id                TEXT    NOT NULL PRIMARY KEY,
    email             TEXT    NOT NULL,
    -- lower case (payd.EmailKey): one account per address in any case
    email_key         TEXT    NOT NULL UNIQUE,
    name              TEXT    NOT NULL,
    -- argon2id PHC string; '' for a passkey-only account
    password_hash     TEXT    NOT NULL,
    password_disabled BOOLEAN NOT NULL,
    reset_hold_until  BIGINT,
    -- two-step sign-in: the authenticator secret ('' while off), the last
    -- time step taken and the hashes of the unused recovery codes (JSON array)
    totp_secret       TEXT    NOT NULL,
    totp_enabled_at   BIGINT,
    totp_last_step    BIGINT  NOT NULL,
    recovery_codes    TEXT    NOT NULL,
    version           INTEGER NOT NULL,
    created_at        BIGINT  NOT NULL,
    updated_at        BIGINT  NOT NULL
);

CREATE TABLE signups (
    id            TEXT    NOT NULL PRIMARY KEY,
    email         TEXT    NOT NULL,
    email_key     TEXT    NOT NULL,
    name          TEXT    NOT NULL,
    password_hash TEXT    NOT NULL,
    -- hash of the starting browser's token
    browser_hash  TEXT    NOT NULL,
    code_hash     TEXT    NOT NULL,
    code_sent_at  BIGINT  NOT NULL,
    codes_sent    INTEGER NOT NULL,
    -- the address already had an account: its code is never sent, the
    -- account_exists email goes instead, and every answer is the same
    exists_already BOOLEAN NOT NULL,
    status        TEXT    NOT NULL,
    version       INTEGER NOT NULL,
    created_at    BIGINT  NOT NULL,
    expires_at    BIGINT  NOT NULL
);
CREATE INDEX signups_email_key ON signups (email_key, created_at);
CREATE INDEX signups_expires_at ON signups (expires_at);

CREATE TABLE sessions (
    id                TEXT   NOT NULL PRIMARY KEY,
    -- SHA-256 of the cookie's token
    token_hash        TEXT   NOT NULL UNIQUE,
    user_id           TEXT   NOT NULL REFERENCES users (id),
    business_id       TEXT   NOT NULL,
    method            TEXT   NOT NULL,
    user_agent        TEXT   NOT NULL,
    ip                TEXT   NOT NULL,
    proof_at          BIGINT,
    totp_setup_secret TEXT   NOT NULL,
    totp_setup_at     BIGINT,
    created_at        BIGINT NOT NULL,
    last_seen_at      BIGINT NOT NULL,
    expires_at        BIGINT NOT NULL
);
CREATE INDEX sessions_user_id ON sessions (user_id, created_at);
-- the sweep of ended sessions
CREATE INDEX sessions_expires_at ON sessions (expires_at);

CREATE TABLE memberships (
    business_id TEXT   NOT NULL REFERENCES businesses (id),
    user_id     TEXT   NOT NULL REFERENCES users (id),
    role        TEXT   NOT NULL,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (business_id, user_id)
);
CREATE INDEX memberships_user_id ON memberships (user_id, created_at);

-- Browsers that have signed in to an account before (a cookie's token
-- hash): they keep their own count of failed passwords (spec 8.3).
CREATE TABLE known_devices (
    user_id     TEXT   NOT NULL REFERENCES users (id),
    device_hash TEXT   NOT NULL,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (user_id, device_hash)
);

-- Failure counts of spec 8.3, one row a subject (pw:EMAIL,
-- pwdev:USER:HASH, cur:SESSION, code:SIGNUP:N, signup:EMAIL:DAY, …).
CREATE TABLE attempts (
    subject      TEXT    NOT NULL PRIMARY KEY,
    failures     INTEGER NOT NULL,
    locked_until BIGINT,
    -- forgotten after this unless another failure comes
    keep_until   BIGINT  NOT NULL
);
CREATE INDEX attempts_keep_until ON attempts (keep_until);

-- +goose Down
DROP TABLE attempts;
DROP TABLE known_devices;
DROP TABLE memberships;
DROP TABLE sessions;
DROP TABLE signups;
DROP TABLE users;
