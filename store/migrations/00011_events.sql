-- The event outbox (spec 6.1, docs/webhooks.md): every change a business is
-- told about writes its event here in the change's own transaction, and
-- deliveries are made from these rows. Shared by SQLite and PostgreSQL; see
-- 00001 for the column conventions.

-- +goose Up
CREATE TABLE events (
    id            TEXT   NOT NULL PRIMARY KEY,
    business_id   TEXT   NOT NULL REFERENCES businesses (id),
    type          TEXT   NOT NULL,
    subject_kind  TEXT   NOT NULL,
    subject_id    TEXT   NOT NULL,
    -- the subject as its endpoint returned it then, JSON text
    data          TEXT   NOT NULL,
    actor_kind    TEXT   NOT NULL,
    actor_id      TEXT,
    actor_name    TEXT,
    created_at    BIGINT NOT NULL,
    -- set once the event's deliveries to the business's endpoints exist;
    -- the partial index keeps the ones still to fan out at hand.
    dispatched_at BIGINT
);
CREATE INDEX events_subject ON events (business_id, subject_id, created_at);
CREATE INDEX events_undispatched ON events (created_at, id) WHERE dispatched_at IS NULL;

-- +goose Down
DROP TABLE events;
