-- The email outbox (DESIGN §7, docs/email.md): a row is written in the
-- transaction of the change that needs the email, and the outbox loop
-- claims due rows with a lease, as the delivery loop claims
-- webhook_deliveries. Shared by SQLite and PostgreSQL; see 00001 for the
-- column conventions.

-- +goose Up
CREATE TABLE emails (
    id              TEXT    NOT NULL PRIMARY KEY,
    -- the address as given, and in lower case (payd.EmailKey) for the
    -- development listing, which matches in any case on both databases
    recipient       TEXT    NOT NULL,
    recipient_key   TEXT    NOT NULL,
    subject         TEXT    NOT NULL,
    -- the bodies; emptied once the email is sent or has failed, since
    -- they carry codes and reset links (payd.Email.Scrub)
    text_body       TEXT    NOT NULL,
    html_body       TEXT    NOT NULL,
    kind            TEXT    NOT NULL,
    status          TEXT    NOT NULL,
    attempts        INTEGER NOT NULL,
    -- when the loop sends it next; NULL once it is final
    next_attempt_at BIGINT,
    -- when a claim lapses; NULL when nobody holds it
    lease_until     BIGINT,
    -- counted on by every write: a holder saves only the version it claimed
    version         INTEGER NOT NULL,
    sent_at         BIGINT,
    last_error      TEXT    NOT NULL,
    created_at      BIGINT  NOT NULL,
    updated_at      BIGINT  NOT NULL
);
-- the queue: only scheduled rows, oldest due first
CREATE INDEX emails_due ON emails (next_attempt_at, id) WHERE next_attempt_at IS NOT NULL;
-- the development listing, newest first per address
CREATE INDEX emails_recipient ON emails (recipient_key, created_at, id);

-- +goose Down
DROP TABLE emails;
