-- +goose Up
-- PostgreSQL's trigram index becomes one per kind (the .postgres.sql of
-- this number). SQLite's FTS5 index stays one for all kinds: FTS5 has no
-- partial index, and its candidates of every kind are read once per
-- search (store/search_candidates.go). Nothing changes here.
SELECT 1;

-- +goose Down
SELECT 1;
