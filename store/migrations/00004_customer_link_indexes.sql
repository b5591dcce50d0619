-- Customers and links (docs/customers-and-links.md): the operator's reason
-- for disabling a link, and the index behind GET /links?status=.

-- +goose Up
-- Why the operator disabled the link (payd link disable --reason); never
-- shown to the business or its customers.
ALTER TABLE links ADD COLUMN disabled_reason TEXT NOT NULL DEFAULT '';
-- GET /links?status=archived pages newest first within one status.
CREATE INDEX links_status_created ON links (business_id, status, created_at, id);

-- +goose Down
DROP INDEX links_status_created;
ALTER TABLE links DROP COLUMN disabled_reason;
