-- Webhook endpoints (spec 6, docs/webhooks.md). Shared by SQLite and
-- PostgreSQL; see 00001 for the column conventions. Deliveries and their
-- retries come in a later migration.

-- +goose Up
CREATE TABLE webhook_endpoints (
    id                         TEXT    NOT NULL PRIMARY KEY,
    business_id                TEXT    NOT NULL REFERENCES businesses (id),
    url                        TEXT    NOT NULL,
    description                TEXT    NOT NULL,
    enabled                    BOOLEAN NOT NULL,
    -- The event types as a JSON array of strings, in the order the
    -- business gave them (a test event defaults to the first); ["*"] for
    -- every type. webhook_subscriptions indexes the same list.
    event_types                TEXT    NOT NULL,
    -- The signing secrets (whsec_...), stored as they are: payd must read
    -- them to sign each delivery (HMAC-SHA256), so unlike API keys they
    -- cannot be kept as hashes. previous_secret signs beside secret until
    -- previous_secret_expires_at, for 24 hours after a rotation.
    secret                     TEXT    NOT NULL,
    previous_secret            TEXT,
    previous_secret_expires_at BIGINT,
    created_at                 BIGINT  NOT NULL,
    updated_at                 BIGINT  NOT NULL
);
CREATE INDEX webhook_endpoints_created ON webhook_endpoints (business_id, created_at, id);

-- One row per event type of an endpoint ('*' for every type), written
-- with event_types in the same transaction. Its index answers "which
-- endpoints receive this type" for the delivery fan-out without reading
-- every endpoint of the business. Deleting an endpoint deletes its rows.
CREATE TABLE webhook_subscriptions (
    endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    business_id TEXT NOT NULL,
    event_type  TEXT NOT NULL,
    PRIMARY KEY (endpoint_id, event_type)
);
CREATE INDEX webhook_subscriptions_type ON webhook_subscriptions (business_id, event_type, endpoint_id);

-- +goose Down
DROP TABLE webhook_subscriptions;
DROP TABLE webhook_endpoints;
