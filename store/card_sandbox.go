package store

import (
	"context"
	"database/sql"

	"payd"
	"payd/money"
)

// cardSandboxColumns are card_sandbox_sessions' columns in scanCardSandbox's order.
const cardSandboxColumns = `id, checkout_id, route, amount, currency, asset, network, deliver, address, reference,
	email, return_url, state, last4, decline_code, pay_at, tx_hash, expires_at, created_at, updated_at`

// CreateCardSandboxSession stores a new sandbox card session.
func (q *queries) CreateCardSandboxSession(ctx context.Context, s *payd.CardSandboxSession) (err error) {
	defer fail(&err, "card sandbox session", "store.CreateCardSandboxSession(%s)", s.ID)
	_, err = q.ex.ExecContext(ctx, `INSERT INTO card_sandbox_sessions (`+cardSandboxColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)`,
		s.ID, s.CheckoutID, s.Route, s.Amount, string(s.Currency), string(s.Deliver.Asset), string(s.Network),
		s.Deliver.String(), s.Deposit.Address, null(s.Deposit.Reference), null(s.Email), s.ReturnURL, string(s.State),
		null(s.Last4), null(s.DeclineCode), nullMicros(s.PayAt), null(s.TxHash), micros(s.ExpiresAt),
		micros(s.CreatedAt), micros(s.UpdatedAt))
	return err
}

// CardSandboxSession returns a sandbox card session by id.
func (q *queries) CardSandboxSession(ctx context.Context, id string) (_ *payd.CardSandboxSession, err error) {
	defer fail(&err, "card sandbox session", "store.CardSandboxSession(%s)", id)
	return scanCardSandbox(q.ex.QueryRowContext(ctx, `SELECT `+cardSandboxColumns+`
		FROM card_sandbox_sessions WHERE id = $1`, id))
}

// MoveCardSandboxSession stores s's state and what goes with it if the
// stored state is still from: one conditional UPDATE, so of concurrent
// moves from one state exactly one changes a row.
func (q *queries) MoveCardSandboxSession(ctx context.Context, s *payd.CardSandboxSession, from payd.CardSandboxState) (_ bool, err error) {
	defer fail(&err, "card sandbox session", "store.MoveCardSandboxSession(%s, %s)", s.ID, from)
	n, err := count(q.ex.ExecContext(ctx, `UPDATE card_sandbox_sessions
		SET state = $1, last4 = $2, decline_code = $3, pay_at = $4, tx_hash = $5, updated_at = $6
		WHERE id = $7 AND state = $8`,
		string(s.State), null(s.Last4), null(s.DeclineCode), nullMicros(s.PayAt), null(s.TxHash), micros(s.UpdatedAt),
		s.ID, string(from)))
	return n == 1, err
}

// scanCardSandbox reads one row of cardSandboxColumns.
func scanCardSandbox(row rowScanner) (*payd.CardSandboxSession, error) {
	var s payd.CardSandboxSession
	var currency, asset, network, deliver, state string
	var reference, email, last4, decline, txHash sql.NullString
	var payAt sql.NullInt64
	var expires, created, updated int64
	if err := row.Scan(&s.ID, &s.CheckoutID, &s.Route, &s.Amount, &currency, &asset, &network, &deliver,
		&s.Deposit.Address, &reference, &email, &s.ReturnURL, &state, &last4, &decline, &payAt, &txHash,
		&expires, &created, &updated); err != nil {
		return nil, err
	}
	amount, err := money.ParseCoinAmount(money.Asset(asset), deliver)
	if err != nil {
		return nil, err
	}
	s.Currency, s.Deliver, s.Network, s.State = money.Currency(currency), amount, money.Network(network), payd.CardSandboxState(state)
	s.Deposit.Reference, s.Email, s.Last4, s.DeclineCode, s.TxHash = reference.String, email.String, last4.String, decline.String, txHash.String
	if payAt.Valid {
		t := fromMicros(payAt.Int64)
		s.PayAt = &t
	}
	s.ExpiresAt, s.CreatedAt, s.UpdatedAt = fromMicros(expires), fromMicros(created), fromMicros(updated)
	return &s, nil
}

// CreateCardSandboxSession stores a new sandbox card session.
func (db *DB) CreateCardSandboxSession(ctx context.Context, s *payd.CardSandboxSession) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.CreateCardSandboxSession(ctx, s) })
}

// CardSandboxSession returns a sandbox card session by id.
func (db *DB) CardSandboxSession(ctx context.Context, id string) (*payd.CardSandboxSession, error) {
	return db.reader(ctx).CardSandboxSession(ctx, id)
}

// MoveCardSandboxSession moves a session on from a state; see
// payd.CardSandboxStore.
func (db *DB) MoveCardSandboxSession(ctx context.Context, s *payd.CardSandboxSession, from payd.CardSandboxState) (ok bool, err error) {
	err = db.write(ctx, func(ctx context.Context, q *queries) error {
		ok, err = q.MoveCardSandboxSession(ctx, s, from)
		return err
	})
	return ok, err
}
