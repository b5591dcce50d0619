-- Exchange rates a merchant can trust (docs/rates.md "Visibility" and
-- "History"): how each snapshot was made, and the snapshot each checkout
-- was quoted from. Shared by SQLite and PostgreSQL; see 00001 for the
-- column conventions.

-- +goose Up
-- JSON: every source's state (answered, cached or failed; the date of its
-- values; the error; the values dropped as outliers) and, per coin and
-- currency, how many sources were used and their spread. NULL on the
-- snapshots made before this column.
ALTER TABLE exchange_rates ADD COLUMN detail TEXT;
-- The snapshot a crypto quote was made from (xr_); NULL when none was
-- needed (a USD price in a stablecoin) or before this column. Pruning the
-- rate history keeps every snapshot named here.
ALTER TABLE checkouts ADD COLUMN exchange_rates_id TEXT;
CREATE INDEX checkouts_exchange_rates_id ON checkouts (exchange_rates_id) WHERE exchange_rates_id IS NOT NULL;

-- +goose Down
DROP INDEX checkouts_exchange_rates_id;
ALTER TABLE checkouts DROP COLUMN exchange_rates_id;
ALTER TABLE exchange_rates DROP COLUMN detail;
