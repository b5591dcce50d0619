package store

import (
	"context"
	"database/sql"
	"errors"

	"github.com/pressly/goose/v3"

	"payd/money"
)

// KeyIdentity names an account key of a network by what derives its
// addresses (hd.KeyIdentity; see payd.Wallet.KeyIDs). The store cannot
// read keys itself, and needs this only to fill in the keys stored before
// identities were.
type KeyIdentity func(n money.Network, key string) (string, error)

// SetKeyIdentity gives Migrate the function that fills in the identities
// of keys stored before migration 16. cmd/payd sets it before migrating; a
// database holding such keys refuses to migrate without it, and an empty
// one (every test's) migrates without it.
func (db *DB) SetKeyIdentity(f KeyIdentity) { db.keyIdentity = f }

// keyIDsVersion is the migration that fills in the identities of the keys
// stored before 00015_wallet_key_ids.sql and makes them unique per network.
const keyIDsVersion = 16

// keyIDsMigration is migration 16, in Go because a key's identity is
// computed by package hd, through db.keyIdentity.
func (db *DB) keyIDsMigration() *goose.Migration {
	return goose.NewGoMigration(keyIDsVersion,
		&goose.GoFunc{RunTx: db.fillKeyIDs},
		&goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `DROP INDEX wallet_keys_identity`)
			return err
		}})
}

// storedKey is one row of wallet_keys as migration 16 reads it.
type storedKey struct {
	wallet, network, key string
}

// fillKeyIDs gives every stored key its identity, oldest wallet first, and
// then makes identities unique per network. A key whose identity an older
// wallet already holds (attached twice before this migration) keeps none
// and is logged, as is a key that no longer parses: its business keeps receiving, and its checkouts skip the
// deposit addresses the other wallet uses (api's deposit), but the
// operator should detach one of the two.
func (db *DB) fillKeyIDs(ctx context.Context, tx *sql.Tx) error {
	keys, err := keysWithoutID(ctx, tx)
	if err != nil {
		return err
	}
	if len(keys) > 0 && db.keyIdentity == nil {
		return errors.New("store: migration 16 needs the key identity (store.DB.SetKeyIdentity) to fill in stored wallet keys")
	}
	held := map[[2]string]string{}
	for _, k := range keys {
		id, err := db.keyIdentity(money.Network(k.network), k.key)
		if err != nil { // every stored key was parsed once: not expected
			db.log.WarnContext(ctx, "store: a stored account key does not parse; it is left without identity",
				"network", k.network, "wallet", k.wallet, "error", err)
			continue
		}
		if first, ok := held[[2]string{k.network, id}]; ok {
			db.log.WarnContext(ctx, "store: one account key is attached to two wallets; the later one is left without identity",
				"network", k.network, "wallet", k.wallet, "first_wallet", first)
			continue
		}
		held[[2]string{k.network, id}] = k.wallet
		if _, err := tx.ExecContext(ctx, `UPDATE wallet_keys SET key_id = $1 WHERE wallet_id = $2 AND network = $3`,
			id, k.wallet, k.network); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, `CREATE UNIQUE INDEX wallet_keys_identity ON wallet_keys (network, key_id)`)
	return err
}

// keysWithoutID lists the keys without identity, oldest wallet first.
func keysWithoutID(ctx context.Context, tx *sql.Tx) ([]storedKey, error) {
	rows, err := tx.QueryContext(ctx, `
		SELECT k.wallet_id, k.network, k.account_key FROM wallet_keys k JOIN wallets w ON w.id = k.wallet_id
		WHERE k.key_id IS NULL ORDER BY w.created_at, w.id, k.network`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []storedKey
	for rows.Next() {
		var k storedKey
		if err := rows.Scan(&k.wallet, &k.network, &k.key); err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}
