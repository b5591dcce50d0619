-- +goose Up
-- One trigram index per kind of entry instead of one for all: a search
-- looks for a pattern among one kind at a time, and through a single index
-- a word common among payments cost a search of customers the reading of
-- every payment that holds it (docs/search.md). Each partial index is
-- chosen by the kind's literal in the query (store/search_postgres.go).
-- +goose StatementBegin
DO $$
DECLARE
    ext_schema TEXT;
    k TEXT;
BEGIN
    SELECT n.nspname INTO ext_schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
    WHERE e.extname = 'pg_trgm';
    FOREACH k IN ARRAY ARRAY['link', 'customer', 'payment'] LOOP
        EXECUTE format('CREATE INDEX %I ON search_docs USING gin (doc %I.gin_trgm_ops) WHERE kind = %L',
            'search_docs_trgm_' || k, ext_schema, k);
    END LOOP;
END
$$;
-- +goose StatementEnd
DROP INDEX search_docs_trgm;

-- +goose Down
-- +goose StatementBegin
DO $$
DECLARE
    ext_schema TEXT;
BEGIN
    SELECT n.nspname INTO ext_schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
    WHERE e.extname = 'pg_trgm';
    EXECUTE format('CREATE INDEX search_docs_trgm ON search_docs USING gin (doc %I.gin_trgm_ops)', ext_schema);
END
$$;
-- +goose StatementEnd
DROP INDEX search_docs_trgm_link;
DROP INDEX search_docs_trgm_customer;
DROP INDEX search_docs_trgm_payment;
