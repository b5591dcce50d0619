-- +goose Up
-- The watcher reads the stored transfers of the deposits it watches. On
-- solana one wallet address takes every checkout, told apart by the
-- Solana Pay reference: with the address alone, each read took every
-- transfer the wallet ever received. (network, address, reference)
-- serves both: off solana the reference is always ''.
CREATE INDEX chain_transfers_deposit ON chain_transfers (network, address, reference);
DROP INDEX chain_transfers_address;

-- +goose Down
CREATE INDEX chain_transfers_address ON chain_transfers (network, address);
DROP INDEX chain_transfers_deposit;
