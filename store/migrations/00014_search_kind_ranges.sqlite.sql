-- +goose Up
-- Each kind's entries take their seq, the FTS5 rowid, from a range of
-- their own: links from 2^40, customers from 2*2^40, payments from 3*2^40
-- (store/search_sqlite.go, kindSeqs). FTS5 keeps each trigram's documents
-- in rowid order and seeks to a rowid range, so a search among one kind
-- reads only that kind's part of each posting list. Existing entries move
-- into their kind's range (every seq is far below 2^40, so no new value can
-- meet an old one), and the index is rebuilt from them.
UPDATE search_docs SET seq = seq + 1099511627776 * (CASE kind WHEN 'link' THEN 1 WHEN 'customer' THEN 2 ELSE 3 END)
WHERE seq < 1099511627776;
INSERT INTO search_fts (search_fts) VALUES ('rebuild');

-- +goose Down
-- Entries stay where they are: code before this migration reads them
-- from any rowid and numbers new ones after the highest.
SELECT 1;
