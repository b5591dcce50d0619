-- The identity of each wallet key (payd.Wallet.KeyIDs, docs/wallets.md):
-- what derives its addresses, public key and chain code, whatever the
-- rest of its serialisation says. wallet_keys_key compared whole
-- serialisations, so one key written with another parent fingerprint or
-- child number was attached to a second business and took the first
-- one's deposit addresses. Existing rows are filled in, and the unique
-- index made, by migration 16 (store/migrate_key_ids.go), which needs Go:
-- only package hd reads keys.

-- +goose Up
ALTER TABLE wallet_keys ADD COLUMN key_id TEXT;

-- +goose Down
ALTER TABLE wallet_keys DROP COLUMN key_id;
