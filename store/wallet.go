package store

import (
	"context"
	"database/sql"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"payd"
	"payd/money"
)

// CreateWallet stores a new wallet and its keys; see payd.WalletStore.
// Every insert says ON CONFLICT DO NOTHING and the conflict is read from
// what was not inserted, so that PostgreSQL meets no unique violation,
// which would abort the caller's transaction; a refused wallet deletes
// what it inserted, leaving the transaction as it found it.
func (q *queries) CreateWallet(ctx context.Context, w *payd.Wallet) (err error) {
	defer fail(&err, "wallet", "store.CreateWallet(%s)", w.ID)
	if len(w.Networks()) == 0 {
		return payd.FieldError("keys", "a wallet needs the account key of at least one network")
	}
	err = affected(q.ex.ExecContext(ctx, `
		INSERT INTO wallets (id, business_id, source, created_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT DO NOTHING`, w.ID, w.BusinessID, string(w.Source), micros(w.CreatedAt)))
	if err == sql.ErrNoRows {
		return payd.WalletExists()
	}
	if err != nil {
		return err
	}
	inserted, err := q.insertWalletKeys(ctx, w)
	if err != nil {
		return err
	}
	for _, n := range money.Networks {
		if w.Keys[n] != "" && !inserted[n] {
			if err := q.deleteWallet(ctx, w.ID); err != nil {
				return err
			}
			return payd.KeyAttachedElsewhere(n)
		}
	}
	return nil
}

// insertWalletKeys inserts the wallet's keys in one statement, in
// money.Networks order (so that two wallets racing for the same keys lock
// them in the same order and cannot deadlock), and returns the networks
// whose key went in: a missing one is held by another wallet, under this
// spelling (wallet_keys_key) or another (wallet_keys_identity).
func (q *queries) insertWalletKeys(ctx context.Context, w *payd.Wallet) (map[money.Network]bool, error) {
	var sb strings.Builder
	sb.WriteString(`INSERT INTO wallet_keys (wallet_id, network, account_key, key_id, next_index) VALUES `)
	args := []any{w.ID}
	for _, n := range money.Networks {
		if w.Keys[n] == "" {
			continue
		}
		if w.KeyIDs[n] == "" {
			return nil, fmt.Errorf("the %s key has no identity (payd.NewWallet makes wallets)", n)
		}
		if len(args) > 1 {
			sb.WriteString(", ")
		}
		i := len(args)
		sb.WriteString("($1, $" + strconv.Itoa(i+1) + ", $" + strconv.Itoa(i+2) + ", $" + strconv.Itoa(i+3) + ", 0)")
		args = append(args, string(n), w.Keys[n], w.KeyIDs[n])
	}
	sb.WriteString(` ON CONFLICT DO NOTHING RETURNING network`)
	rows, err := q.ex.QueryContext(ctx, sb.String(), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	inserted := map[money.Network]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		inserted[money.Network(n)] = true
	}
	return inserted, rows.Err()
}

// deleteWallet removes a wallet that was refused while being created.
func (q *queries) deleteWallet(ctx context.Context, id string) error {
	if _, err := q.ex.ExecContext(ctx, `DELETE FROM wallet_keys WHERE wallet_id = $1`, id); err != nil {
		return err
	}
	_, err := q.ex.ExecContext(ctx, `DELETE FROM wallets WHERE id = $1`, id)
	return err
}

// WalletByBusiness returns the business's wallet with its keys; not_found
// when it has none.
func (q *queries) WalletByBusiness(ctx context.Context, businessID string) (_ *payd.Wallet, err error) {
	defer fail(&err, "wallet", "store.WalletByBusiness(%s)", businessID)
	rows, err := q.ex.QueryContext(ctx, `
		SELECT w.id, w.source, w.created_at, k.network, k.account_key, k.key_id,
			EXISTS (SELECT 1 FROM wallet_keys t WHERE t.network = k.network AND t.key_id IS NULL)
		FROM wallets w JOIN wallet_keys k ON k.wallet_id = w.id
		WHERE w.business_id = $1`, businessID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var w *payd.Wallet
	for rows.Next() {
		var id, source, network, key string
		var keyID sql.NullString // NULL: a key attached twice before migration 16
		var created int64
		var overlap bool // the index wallet_keys_identity finds the NULLs
		if err := rows.Scan(&id, &source, &created, &network, &key, &keyID, &overlap); err != nil {
			return nil, err
		}
		if w == nil {
			w = &payd.Wallet{ID: id, BusinessID: businessID, Source: payd.WalletSource(source),
				CreatedAt: fromMicros(created), Keys: map[money.Network]string{}, KeyIDs: map[money.Network]string{}}
		}
		n := money.Network(network)
		w.Keys[n] = key
		if keyID.Valid {
			w.KeyIDs[n] = keyID.String
		}
		if overlap { // nil without: wallets made by payd.NewWallet compare equal
			if w.Overlap == nil {
				w.Overlap = map[money.Network]bool{}
			}
			w.Overlap[n] = true
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if w == nil {
		return nil, sql.ErrNoRows
	}
	return w, nil
}

// NextAddressIndex hands out the wallet's next receive index on network
// n; not_found when the wallet has no key on n. No index is skipped: one
// handed out to a transaction that rolls back goes to the next caller.
//
// On SQLite one UPDATE of the counter row does it, behind the single
// writer. On PostgreSQL that row would stay locked until the caller
// commits, so one business's checkouts would open one at a time (docs/
// storage.md, "No hot rows"): there the caller claims the lowest index of
// the address pool with SKIP LOCKED, passing the ones other transactions
// hold, and a caller that finds none refills the pool apart (refill).
func (q *queries) NextAddressIndex(ctx context.Context, walletID string, n money.Network) (_ uint32, err error) {
	defer fail(&err, "wallet key", "store.NextAddressIndex(%s, %s)", walletID, n)
	var idx int64
	if q.dialect != dialectPostgres || q.side == nil {
		err = q.ex.QueryRowContext(ctx, `
			UPDATE wallet_keys SET next_index = next_index + 1 WHERE wallet_id = $1 AND network = $2
			RETURNING next_index - 1`, walletID, string(n)).Scan(&idx)
		return checkAddressIndex(n, idx, err)
	}
	for {
		err = q.ex.QueryRowContext(ctx, `
			DELETE FROM address_pool WHERE (wallet_id, network, idx) = (
				SELECT wallet_id, network, idx FROM address_pool WHERE wallet_id = $1 AND network = $2
				ORDER BY idx LIMIT 1 FOR UPDATE SKIP LOCKED)
			RETURNING idx`, walletID, string(n)).Scan(&idx)
		if err != sql.ErrNoRows {
			return checkAddressIndex(n, idx, err)
		}
		if err = q.refillAddressPool(ctx, walletID, n); err != nil {
			return 0, err
		}
	}
}

const (
	// addressPoolRefill is how many indexes one refill adds to a wallet's
	// pool on a network.
	addressPoolRefill = 32
	// refillLockTimeout bounds a refill's wait for the counter row: other
	// refills hold it for milliseconds, so only a caller that holds it
	// itself waits that long.
	refillLockTimeout = "1s"
)

// refillAddressPool moves addressPoolRefill indexes from the wallet's
// counter to its pool in a transaction of the side pool, committed at
// once whatever becomes of the caller's. Refills of one wallet take turns
// on the counter row, and one that finds indexes free in the pool by then
// (another refilled it) adds none.
//
// The caller's own transaction comes first where the side transaction
// cannot serve it: a wallet key it made, which the side transaction cannot
// see yet, or a counter row it has locked itself, which the side
// transaction would wait for until the caller's context ended (it gives up
// after refillLockTimeout). The caller then takes the counter's next index
// in its own transaction.
func (q *queries) refillAddressPool(ctx context.Context, walletID string, n money.Network) error {
	tx, err := q.side.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SET LOCAL lock_timeout = '`+refillLockTimeout+`'`); err != nil {
		return err
	}
	var next int64
	err = tx.QueryRowContext(ctx, `SELECT next_index FROM wallet_keys WHERE wallet_id = $1 AND network = $2 FOR UPDATE`,
		walletID, string(n)).Scan(&next)
	if err == sql.ErrNoRows || pgCode(err) == pgLockNotAvailable {
		return q.poolFromCounter(ctx, walletID, n)
	} else if err != nil {
		return err
	}
	var free int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM address_pool WHERE wallet_id = $1 AND network = $2
		LIMIT 1 FOR UPDATE SKIP LOCKED) f`, walletID, string(n)).Scan(&free); err != nil {
		return err
	}
	if free > 0 {
		return nil
	}
	if next > payd.MaxAddressIndex {
		return fmt.Errorf("the wallet's %s receive indexes are used up (next %d)", n, next)
	}
	to := min(next+addressPoolRefill, payd.MaxAddressIndex+1)
	if _, err := tx.ExecContext(ctx, `UPDATE wallet_keys SET next_index = $3 WHERE wallet_id = $1 AND network = $2`,
		walletID, string(n), to); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO address_pool (wallet_id, network, idx)
		SELECT $1, $2, i FROM generate_series($3::bigint, $4::bigint) AS i`, walletID, string(n), next, to-1); err != nil {
		return err
	}
	return tx.Commit()
}

// poolFromCounter puts the counter's next index in the pool within the
// caller's transaction, for a wallet key only it can see.
func (q *queries) poolFromCounter(ctx context.Context, walletID string, n money.Network) error {
	return affected(q.ex.ExecContext(ctx, `
		WITH taken AS (
			UPDATE wallet_keys SET next_index = next_index + 1 WHERE wallet_id = $1 AND network = $2
			RETURNING next_index - 1 AS idx)
		INSERT INTO address_pool (wallet_id, network, idx) SELECT $1, $2, idx FROM taken`, walletID, string(n)))
}

// checkAddressIndex is the index a claim read, checked against the range
// a wallet key can derive.
func checkAddressIndex(n money.Network, idx int64, err error) (uint32, error) {
	if err != nil {
		return 0, err
	}
	if idx < 0 || idx > payd.MaxAddressIndex {
		return 0, fmt.Errorf("the wallet's %s receive indexes are used up (next %d)", n, idx+1)
	}
	return uint32(idx), nil
}

// DepositTaken reports whether a checkout, of any business, already has
// the deposit: the unique index checkouts_deposit would refuse it.
func (q *queries) DepositTaken(ctx context.Context, n money.Network, d payd.Deposit) (_ bool, err error) {
	defer fail(&err, "checkout", "store.DepositTaken(%s)", n)
	var one int
	err = q.ex.QueryRowContext(ctx, `
		SELECT 1 FROM checkouts WHERE network = $1 AND address = $2 AND reference = $3`,
		string(n), d.Address, d.Reference).Scan(&one)
	if err == sql.ErrNoRows {
		return false, nil
	}
	return err == nil, err
}

// AddHoldings adds amount to one holding; see payd.WalletStore. The row is
// made first if the wallet has a key on n, then read, locked on
// PostgreSQL (FOR UPDATE inside the transaction) and written back: the
// sum is computed with math/big, because wei overflow every integer type
// both databases share.
func (q *queries) AddHoldings(ctx context.Context, walletID string, n money.Network, amount money.CoinAmount) (err error) {
	defer fail(&err, "wallet holding", "store.AddHoldings(%s, %s, %s)", walletID, amount.Asset, n)
	if err := payd.CheckHoldingDelta(n, amount); err != nil {
		return err
	}
	now := micros(q.now())
	_, err = q.ex.ExecContext(ctx, `
		INSERT INTO wallet_holdings (wallet_id, asset, network, amount, updated_at)
		SELECT wallet_id, $2, network, '0', $4 FROM wallet_keys WHERE wallet_id = $1 AND network = $3
		ON CONFLICT (wallet_id, asset, network) DO NOTHING`, walletID, string(amount.Asset), string(n), now)
	if err != nil {
		return err
	}
	var stored string
	err = q.ex.QueryRowContext(ctx, `
		SELECT amount FROM wallet_holdings WHERE wallet_id = $1 AND asset = $2 AND network = $3`+q.lockRow(),
		walletID, string(amount.Asset), string(n)).Scan(&stored)
	if err == sql.ErrNoRows {
		return payd.Errorf(payd.ErrNotFound, "the wallet has no %s key", n)
	}
	if err != nil {
		return err
	}
	cur, ok := new(big.Int).SetString(stored, 10)
	if !ok {
		return fmt.Errorf("stored holding %q is not an integer", stored)
	}
	sum := cur.Add(cur, amount.Units)
	if sum.Sign() < 0 {
		return payd.Errorf(payd.ErrInsufficientFunds, "the wallet holds %s %s on %s, less than %s",
			money.CoinAmount{Asset: amount.Asset, Units: new(big.Int).Sub(sum, amount.Units)}, amount.Asset, n,
			money.CoinAmount{Asset: amount.Asset, Units: new(big.Int).Neg(amount.Units)})
	}
	_, err = q.ex.ExecContext(ctx, `
		UPDATE wallet_holdings SET amount = $4, updated_at = $5 WHERE wallet_id = $1 AND asset = $2 AND network = $3`,
		walletID, string(amount.Asset), string(n), sum.String(), now)
	return err
}

// WalletHoldings returns the holdings of the business's wallet.
func (q *queries) WalletHoldings(ctx context.Context, businessID, walletID string) (_ []payd.Holding, err error) {
	defer fail(&err, "wallet holding", "store.WalletHoldings(%s)", walletID)
	rows, err := q.ex.QueryContext(ctx, `
		SELECT h.asset, h.network, h.amount FROM wallet_holdings h JOIN wallets w ON w.id = h.wallet_id
		WHERE w.business_id = $1 AND h.wallet_id = $2`, businessID, walletID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []payd.Holding
	for rows.Next() {
		var asset, network, stored string
		if err := rows.Scan(&asset, &network, &stored); err != nil {
			return nil, err
		}
		units, ok := new(big.Int).SetString(stored, 10)
		if !ok {
			return nil, fmt.Errorf("stored holding %q is not an integer", stored)
		}
		out = append(out, payd.Holding{Network: money.Network(network), Amount: money.CoinAmount{Asset: money.Asset(asset), Units: units}})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	payd.SortHoldings(out)
	return out, nil
}

// CreateWallet stores a new wallet and its keys in one transaction (inline
// when ctx already carries one); see payd.WalletStore.
func (db *DB) CreateWallet(ctx context.Context, w *payd.Wallet) error {
	return db.atomic(ctx, func(ctx context.Context, q *queries) error { return q.CreateWallet(ctx, w) })
}

// WalletByBusiness returns the business's wallet; not_found when it has none.
func (db *DB) WalletByBusiness(ctx context.Context, businessID string) (*payd.Wallet, error) {
	return db.reader(ctx).WalletByBusiness(ctx, businessID)
}

// NextAddressIndex hands out the wallet's next receive index on network n;
// see payd.WalletStore.
func (db *DB) NextAddressIndex(ctx context.Context, walletID string, n money.Network) (idx uint32, err error) {
	err = db.write(ctx, func(ctx context.Context, q *queries) error {
		idx, err = q.NextAddressIndex(ctx, walletID, n)
		return err
	})
	return idx, err
}

// DepositTaken reports whether a checkout already has the deposit; see
// payd.WalletStore.
func (db *DB) DepositTaken(ctx context.Context, n money.Network, d payd.Deposit) (bool, error) {
	return db.reader(ctx).DepositTaken(ctx, n, d)
}

// AddHoldings adds amount to one holding of the wallet, in one transaction
// (inline when ctx already carries one); see payd.WalletStore.
func (db *DB) AddHoldings(ctx context.Context, walletID string, n money.Network, amount money.CoinAmount) error {
	return db.atomic(ctx, func(ctx context.Context, q *queries) error { return q.AddHoldings(ctx, walletID, n, amount) })
}

// WalletHoldings returns the holdings of the business's wallet.
func (db *DB) WalletHoldings(ctx context.Context, businessID, walletID string) ([]payd.Holding, error) {
	return db.reader(ctx).WalletHoldings(ctx, businessID, walletID)
}
