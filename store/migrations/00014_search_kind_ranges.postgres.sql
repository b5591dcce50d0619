-- +goose Up
-- SQLite gives each kind its own range of FTS5 rowids (the .sqlite.sql of
-- this number); PostgreSQL has a trigram index per kind since 00013 and
-- numbers its entries from one sequence. Nothing changes here.
SELECT 1;

-- +goose Down
SELECT 1;
