-- Webhook deliveries (spec 2.10, 6.3, docs/webhook-delivery.md): one row
-- per event and endpoint. The rows are both the delivery log the API shows
-- and the retry queue the delivery loop claims from. Shared by SQLite and
-- PostgreSQL; see 00001 for the column conventions.

-- +goose Up
CREATE TABLE webhook_deliveries (
    id              TEXT    NOT NULL PRIMARY KEY,
    business_id     TEXT    NOT NULL REFERENCES businesses (id),
    -- Deleting an endpoint deletes its deliveries, pending retries
    -- included (spec 6.3 rule 5), in the DELETE's own statement.
    webhook_id      TEXT    NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    -- No foreign key: a test send's event is made up and never stored.
    event_id        TEXT    NOT NULL,
    event_type      TEXT    NOT NULL,
    subject_kind    TEXT    NOT NULL,
    subject_id      TEXT    NOT NULL,
    status          TEXT    NOT NULL,
    -- the attempts, a JSON array of {at, response_status, duration_ms,
    -- trigger, error}; at most 8 automatic ones and a few manual ones
    attempts        TEXT    NOT NULL,
    -- when the loop attempts it next; NULL when nothing is scheduled
    next_attempt_at BIGINT,
    -- when a claim lapses; NULL when nobody holds it
    lease_until     BIGINT,
    -- counted on by every write: a holder saves only the version it claimed
    version         INTEGER NOT NULL,
    -- the event body as sent, compact JSON rendered once
    payload         TEXT    NOT NULL,
    -- the last attempt's request headers, a JSON object; NULL before one
    request_headers TEXT,
    error           TEXT    NOT NULL,
    test            BOOLEAN NOT NULL,
    created_at      BIGINT  NOT NULL,
    updated_at      BIGINT  NOT NULL
);
CREATE INDEX webhook_deliveries_created ON webhook_deliveries (business_id, created_at, id);
-- serves the cascade from webhook_endpoints and the webhook_id filter
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, created_at, id);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (business_id, event_id);
-- the queue: only scheduled rows, oldest due first
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id) WHERE next_attempt_at IS NOT NULL;

-- +goose Down
DROP TABLE webhook_deliveries;
