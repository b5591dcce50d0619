-- Passkeys (WebAuthn credentials) and the state of WebAuthn ceremonies in
-- progress (docs/passkeys.md). Shared by SQLite and PostgreSQL; see 00001
-- for the column conventions. Bytes are TEXT in the shared subset:
-- credential ids and public keys as unpadded base64url, the AAGUID as hex.
-- passkeys.user_id names a row of users (migration 20) but declares no
-- REFERENCES: a passkey sign-up verifies its credential under the user id
-- it reserved before the account's row exists, and the accounts code
-- decides when each row is written. webauthn_challenges.user_id is '' for
-- a discoverable sign-in.

-- +goose Up
CREATE TABLE passkeys (
    id              TEXT    NOT NULL PRIMARY KEY,
    user_id         TEXT    NOT NULL,
    -- base64url of the authenticator's credential id (rawId): one
    -- credential is on one account at most.
    credential_id   TEXT    NOT NULL UNIQUE,
    -- base64url of the COSE public key
    public_key      TEXT    NOT NULL,
    aaguid          TEXT    NOT NULL,
    -- the authenticator's signature counter, 0 to 2^32-1
    sign_count      BIGINT  NOT NULL,
    -- comma-separated transport hints: usb,nfc,ble,internal,hybrid
    transports      TEXT    NOT NULL,
    backup_eligible BOOLEAN NOT NULL,
    backup_state    BOOLEAN NOT NULL,
    name            TEXT    NOT NULL,
    created_at      BIGINT  NOT NULL,
    last_used_at    BIGINT
);
-- a user's passkeys, oldest first, and their count
CREATE INDEX passkeys_user_id ON passkeys (user_id, created_at, id);

CREATE TABLE webauthn_challenges (
    -- Hex SHA-256 of the challenge; the challenge itself is not kept.
    -- Finishing a ceremony deletes its row in one statement, so a response
    -- is good once even with replicas racing for it.
    hash       TEXT   NOT NULL PRIMARY KEY,
    -- the rest of the ceremony's state, JSON (package passkey)
    state      TEXT   NOT NULL,
    -- '' for a discoverable sign-in
    user_id    TEXT   NOT NULL,
    -- register, signin, step_up or signup
    purpose    TEXT   NOT NULL,
    -- the session or sign-up the ceremony was started from, or ''
    binding    TEXT   NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
-- the sweep of expired ceremonies
CREATE INDEX webauthn_challenges_expires_at ON webauthn_challenges (expires_at);

-- +goose Down
DROP TABLE webauthn_challenges;
DROP TABLE passkeys;
