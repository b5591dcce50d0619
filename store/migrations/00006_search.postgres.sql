-- Search (spec 4.2, docs/search.md). Triggers only note what changed in
-- search_queue, a cheap insert on the write path; the search indexer
-- (store/search_index.go) builds each object's folded document and exact
-- keys in Go, off the write path, and searches read the queue's objects
-- directly until it has. The SQLite twin has the same tables; only the
-- trigram index and the trigger language differ.

-- +goose Up

-- Objects whose search entry is missing or stale.
CREATE TABLE search_queue (
    seq         BIGSERIAL PRIMARY KEY,
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
    seq         BIGSERIAL PRIMARY KEY,
    business_id TEXT   NOT NULL,
    kind        TEXT   NOT NULL,
    -- ids order byte by byte, as on SQLite, so both rank ties alike.
    id          TEXT   COLLATE "C" NOT NULL,
    created_at  BIGINT NOT NULL,
    doc         TEXT   NOT NULL,
    keys        TEXT   NOT NULL
);
CREATE UNIQUE INDEX search_docs_item ON search_docs (kind, id);
CREATE INDEX search_docs_created ON search_docs (business_id, kind, created_at, id);
-- Trigram index of the documents; LIKE '%…%' on the folded text uses it.
-- pg_trgm is installed once per database, in public unless it is there
-- already (in whatever schema): installations in several schemas of one
-- database share it, and two of them migrating at once must not fail.
-- +goose StatementBegin
DO $$
DECLARE
    ext_schema TEXT;
BEGIN
    BEGIN
        CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public;
    EXCEPTION WHEN unique_violation THEN
        NULL; -- another migration installed it meanwhile
    END;
    SELECT n.nspname INTO ext_schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
    WHERE e.extname = 'pg_trgm';
    EXECUTE format('CREATE INDEX search_docs_trgm ON search_docs USING gin (doc %I.gin_trgm_ops)', ext_schema);
END
$$;
-- +goose StatementEnd

-- Exact keys for the first ranking tier.
CREATE TABLE search_keys (
    business_id TEXT   NOT NULL,
    key         TEXT   NOT NULL,
    kind        TEXT   NOT NULL,
    created_at  BIGINT NOT NULL,
    id          TEXT   COLLATE "C" NOT NULL,
    PRIMARY KEY (business_id, key, kind, created_at, id)
);
CREATE INDEX search_keys_item ON search_keys (kind, id);

-- +goose StatementBegin
CREATE FUNCTION search_enqueue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO search_queue (business_id, kind, id) VALUES (OLD.business_id, TG_ARGV[0], OLD.id);
    ELSE
        INSERT INTO search_queue (business_id, kind, id) VALUES (NEW.business_id, TG_ARGV[0], NEW.id);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER search_payments_insert_delete AFTER INSERT OR DELETE ON payments
    FOR EACH ROW EXECUTE FUNCTION search_enqueue('payment');
CREATE TRIGGER search_payments_update AFTER UPDATE ON payments
    FOR EACH ROW WHEN (OLD.checkout_id IS DISTINCT FROM NEW.checkout_id OR OLD.reference IS DISTINCT FROM NEW.reference
        OR OLD.metadata IS DISTINCT FROM NEW.metadata OR OLD.tx_hash IS DISTINCT FROM NEW.tx_hash
        OR OLD.from_address IS DISTINCT FROM NEW.from_address OR OLD.description IS DISTINCT FROM NEW.description
        OR OLD.customer_id IS DISTINCT FROM NEW.customer_id OR OLD.amount IS DISTINCT FROM NEW.amount
        OR OLD.currency IS DISTINCT FROM NEW.currency)
    EXECUTE FUNCTION search_enqueue('payment');
CREATE TRIGGER search_customers_insert_delete AFTER INSERT OR DELETE ON customers
    FOR EACH ROW EXECUTE FUNCTION search_enqueue('customer');
CREATE TRIGGER search_customers_update AFTER UPDATE ON customers
    FOR EACH ROW WHEN (OLD.name IS DISTINCT FROM NEW.name OR OLD.email IS DISTINCT FROM NEW.email)
    EXECUTE FUNCTION search_enqueue('customer');
CREATE TRIGGER search_links_insert_delete AFTER INSERT OR DELETE ON links
    FOR EACH ROW EXECUTE FUNCTION search_enqueue('link');
CREATE TRIGGER search_links_update AFTER UPDATE ON links
    FOR EACH ROW WHEN (OLD.code IS DISTINCT FROM NEW.code OR OLD.name IS DISTINCT FROM NEW.name
        OR OLD.description IS DISTINCT FROM NEW.description OR OLD.amount IS DISTINCT FROM NEW.amount
        OR OLD.currency IS DISTINCT FROM NEW.currency)
    EXECUTE FUNCTION search_enqueue('link');

-- Whatever exists already is indexed by the indexer's first runs.
INSERT INTO search_queue (business_id, kind, id) SELECT business_id, 'link', id FROM links ORDER BY created_at;
INSERT INTO search_queue (business_id, kind, id) SELECT business_id, 'customer', id FROM customers ORDER BY created_at;
INSERT INTO search_queue (business_id, kind, id) SELECT business_id, 'payment', id FROM payments ORDER BY created_at;

-- +goose Down
DROP TRIGGER search_links_update ON links;
DROP TRIGGER search_links_insert_delete ON links;
DROP TRIGGER search_customers_update ON customers;
DROP TRIGGER search_customers_insert_delete ON customers;
DROP TRIGGER search_payments_update ON payments;
DROP TRIGGER search_payments_insert_delete ON payments;
DROP FUNCTION search_enqueue();
DROP TABLE search_keys;
DROP TABLE search_docs;
DROP TABLE search_queue;
