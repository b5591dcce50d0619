-- Search (spec 4.2, docs/search.md). Triggers only note what changed in
-- search_queue, a cheap insert on the write path; the search indexer
-- (store/search_index.go) builds each object's folded document and exact
-- keys in Go, off the write path, and searches read the queue's objects
-- directly until it has. The PostgreSQL twin has the same tables; only the
-- trigram index and the trigger language differ.

-- +goose Up
-- Objects whose search entry is missing or stale.
CREATE TABLE search_queue (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    business_id TEXT NOT NULL,
    kind        TEXT NOT NULL,
    id          TEXT NOT NULL
);
CREATE INDEX search_queue_business ON search_queue (business_id, kind, id);
CREATE INDEX search_queue_item ON search_queue (kind, id);

-- One folded document per object: " word word | word ... " (payd.SearchWords
-- of each matched field, fields separated by " | "), and keys, its exact
-- keys (ids, code, email, hash, address) folded, one per line.
CREATE TABLE search_docs (
    seq         INTEGER PRIMARY KEY,
    business_id TEXT   NOT NULL,
    kind        TEXT   NOT NULL,
    id          TEXT   NOT NULL,
    created_at  BIGINT NOT NULL,
    doc         TEXT   NOT NULL,
    keys        TEXT   NOT NULL
);
CREATE UNIQUE INDEX search_docs_item ON search_docs (kind, id);
CREATE INDEX search_docs_created ON search_docs (business_id, kind, created_at, id);

-- Trigram index of the documents, kept by the indexer. case_sensitive 1:
-- the documents are folded in Go already, so both databases fold alike.
CREATE VIRTUAL TABLE search_fts USING fts5 (
    doc, content = 'search_docs', content_rowid = 'seq', tokenize = 'trigram case_sensitive 1', detail = 'full'
);

-- Exact keys for the first ranking tier.
CREATE TABLE search_keys (
    business_id TEXT   NOT NULL,
    key         TEXT   NOT NULL,
    kind        TEXT   NOT NULL,
    created_at  BIGINT NOT NULL,
    id          TEXT   NOT NULL,
    PRIMARY KEY (business_id, key, kind, created_at, id)
) WITHOUT ROWID;
CREATE INDEX search_keys_item ON search_keys (kind, id);

-- +goose StatementBegin
CREATE TRIGGER search_payments_insert AFTER INSERT ON payments BEGIN
    INSERT INTO search_queue (business_id, kind, id) VALUES (NEW.business_id, 'payment', NEW.id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER search_payments_update AFTER UPDATE ON payments
WHEN OLD.checkout_id IS NOT NEW.checkout_id OR OLD.reference IS NOT NEW.reference
  OR OLD.metadata IS NOT NEW.metadata OR OLD.tx_hash IS NOT NEW.tx_hash
  OR OLD.from_address IS NOT NEW.from_address OR OLD.description IS NOT NEW.description
  OR OLD.customer_id IS NOT NEW.customer_id OR OLD.amount IS NOT NEW.amount OR OLD.currency IS NOT NEW.currency
BEGIN
    INSERT INTO search_queue (business_id, kind, id) VALUES (NEW.business_id, 'payment', NEW.id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER search_payments_delete AFTER DELETE ON payments BEGIN
    INSERT INTO search_queue (business_id, kind, id) VALUES (OLD.business_id, 'payment', OLD.id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER search_customers_insert AFTER INSERT ON customers BEGIN
    INSERT INTO search_queue (business_id, kind, id) VALUES (NEW.business_id, 'customer', NEW.id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER search_customers_update AFTER UPDATE ON customers
WHEN OLD.name IS NOT NEW.name OR OLD.email IS NOT NEW.email
BEGIN
    INSERT INTO search_queue (business_id, kind, id) VALUES (NEW.business_id, 'customer', NEW.id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER search_customers_delete AFTER DELETE ON customers BEGIN
    INSERT INTO search_queue (business_id, kind, id) VALUES (OLD.business_id, 'customer', OLD.id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER search_links_insert AFTER INSERT ON links BEGIN
    INSERT INTO search_queue (business_id, kind, id) VALUES (NEW.business_id, 'link', NEW.id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER search_links_update AFTER UPDATE ON links
WHEN OLD.code IS NOT NEW.code OR OLD.name IS NOT NEW.name OR OLD.description IS NOT NEW.description
  OR OLD.amount IS NOT NEW.amount OR OLD.currency IS NOT NEW.currency
BEGIN
    INSERT INTO search_queue (business_id, kind, id) VALUES (NEW.business_id, 'link', NEW.id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER search_links_delete AFTER DELETE ON links BEGIN
    INSERT INTO search_queue (business_id, kind, id) VALUES (OLD.business_id, 'link', OLD.id);
END;
-- +goose StatementEnd

-- Whatever exists already is indexed by the indexer's first runs.
INSERT INTO search_queue (business_id, kind, id) SELECT business_id, 'link', id FROM links ORDER BY created_at;
INSERT INTO search_queue (business_id, kind, id) SELECT business_id, 'customer', id FROM customers ORDER BY created_at;
INSERT INTO search_queue (business_id, kind, id) SELECT business_id, 'payment', id FROM payments ORDER BY created_at;

-- +goose Down
DROP TRIGGER search_links_delete;
DROP TRIGGER search_links_update;
DROP TRIGGER search_links_insert;
DROP TRIGGER search_customers_delete;
DROP TRIGGER search_customers_update;
DROP TRIGGER search_customers_insert;
DROP TRIGGER search_payments_delete;
DROP TRIGGER search_payments_update;
DROP TRIGGER search_payments_insert;
DROP TABLE search_keys;
DROP TABLE search_fts;
DROP TABLE search_docs;
DROP TABLE search_queue;
