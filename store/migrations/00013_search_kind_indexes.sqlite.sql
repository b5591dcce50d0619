-- +goose Up
-- PostgreSQL's trigram index becomes one per kind (the .postgres.sql of
-- this number). FTS5 has no partial index; SQLite gives each kind its own
-- range of the index's rowids instead, in migration 00014.
SELECT 1;

-- +goose Down
SELECT 1;
