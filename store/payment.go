package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"payd"
	"payd/money"
)

// paymentColumns are the columns every payment read selects, in scanPayment's order.
const paymentColumns = `id, business_id, code, status, amount, currency, fee_payer, customer_fee, amount_received,
	fee_rate_bps, usd_amount, usd_fee, usd_transaction_fee, usd_customer_fee, usd_net, method, settlement,
	customer_id, link_id, reference, metadata, success_url, cancel_url, expires_at, canceled_at, confirmed_at,
	checkout_id, description, country, failure_code, failure_message, created_at, updated_at`

// CreatePayment stores a new payment, its metadata rows and its events:
// three statements at most, the fewest the schema allows.
func (q *queries) CreatePayment(ctx context.Context, p *payd.Payment) (err error) {
	defer fail(&err, "payment", "store.CreatePayment(%s)", p.ID)
	row, err := paymentRow(p)
	if err != nil {
		return err
	}
	_, err = q.ex.ExecContext(ctx, `
		INSERT INTO payments (id, business_id, code, status, amount, currency, fee_payer, customer_fee,
			amount_received, fee_rate_bps, usd_amount, usd_fee, usd_transaction_fee, usd_customer_fee, usd_net,
			method, settlement, rail, tx_hash, from_address, customer_id, link_id, reference, metadata,
			success_url, cancel_url, expires_at, canceled_at, confirmed_at, checkout_id, description, country,
			failure_code, failure_message, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21,
			$22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33, $34, $35, $36)`,
		p.ID, p.BusinessID, p.Code, string(p.Status), p.Amount, string(p.Currency), string(p.FeePayer), p.CustomerFee,
		p.AmountReceived, p.FeeRateBps, p.Reporting.AmountUSD, nullInt(p.Reporting.FeeUSD), p.Reporting.TransactionFeeUSD,
		p.Reporting.CustomerFeeUSD, p.Reporting.NetUSD, row.method, row.settlement, row.rail, row.txHash,
		row.fromAddress, null(p.CustomerID), null(p.LinkID), null(p.Reference), row.metadata,
		null(p.SuccessURL), null(p.CancelURL), nullMicros(p.ExpiresAt), nullMicros(p.CanceledAt),
		nullMicros(p.ConfirmedAt), null(p.CheckoutID), p.Description, p.Country, null(p.FailureCode),
		null(p.FailureMessage), micros(p.CreatedAt), micros(p.UpdatedAt))
	if err != nil {
		return err
	}
	if err := q.insertMetadata(ctx, p); err != nil {
		return err
	}
	return q.insertEvents(ctx, p.ID, p.Events, 0)
}

// insertMetadata writes one payment_metadata row per pair in one statement.
func (q *queries) insertMetadata(ctx context.Context, p *payd.Payment) error {
	if len(p.Metadata) == 0 {
		return nil
	}
	var sb strings.Builder
	sb.WriteString(`INSERT INTO payment_metadata (payment_id, business_id, created_at, key, value) VALUES `)
	args := []any{p.ID, p.BusinessID, micros(p.CreatedAt)}
	for i, k := range slices.Sorted(maps.Keys(p.Metadata)) {
		if i > 0 {
			sb.WriteString(", ")
		}
		n := len(args)
		sb.WriteString("($1, $2, $3, $" + strconv.Itoa(n+1) + ", $" + strconv.Itoa(n+2) + ")")
		args = append(args, k, p.Metadata[k])
	}
	_, err := q.ex.ExecContext(ctx, sb.String(), args...)
	return err
}

// insertEvents appends events in one statement, numbering them after the
// stored seq. A concurrent change that appended first makes the primary
// key refuse these, which fails the caller's transaction instead of losing
// either change.
func (q *queries) insertEvents(ctx context.Context, paymentID string, events []payd.PaymentEvent, stored int) error {
	if len(events) == 0 {
		return nil
	}
	var sb strings.Builder
	sb.WriteString(`INSERT INTO payment_events (payment_id, seq, type, data, created_at) VALUES `)
	args := []any{paymentID}
	for i, e := range events {
		if i > 0 {
			sb.WriteString(", ")
		}
		n := len(args)
		sb.WriteString("($1, $" + strconv.Itoa(n+1) + ", $" + strconv.Itoa(n+2) + ", $" + strconv.Itoa(n+3) +
			", $" + strconv.Itoa(n+4) + ")")
		var data any
		if e.Data != nil {
			data = string(e.Data)
		}
		args = append(args, stored+i+1, e.Type, data, micros(e.CreatedAt))
	}
	_, err := q.ex.ExecContext(ctx, sb.String(), args...)
	return err
}

// PaymentByID returns the business's payment with its events; not_found otherwise.
func (q *queries) PaymentByID(ctx context.Context, businessID, id string) (_ *payd.Payment, err error) {
	defer fail(&err, "payment", "store.PaymentByID(%s)", id)
	// Inside a PostgreSQL transaction the row stays locked until commit, so
	// two changes to one payment take turns (see lockRow).
	return q.loadPayment(ctx, `SELECT `+paymentColumns+` FROM payments WHERE business_id = $1 AND id = $2`+q.lockRow(),
		businessID, id)
}

// PaymentByCode returns the payment with the public code; not_found otherwise.
func (q *queries) PaymentByCode(ctx context.Context, code string) (_ *payd.Payment, err error) {
	defer fail(&err, "payment", "store.PaymentByCode(%s)", code)
	return q.loadPayment(ctx, `SELECT `+paymentColumns+` FROM payments WHERE code = $1`, code)
}

// PublicPayment returns the payment with the id, whatever its business;
// not_found otherwise.
func (q *queries) PublicPayment(ctx context.Context, id string) (_ *payd.Payment, err error) {
	defer fail(&err, "payment", "store.PublicPayment(%s)", id)
	return q.loadPayment(ctx, `SELECT `+paymentColumns+` FROM payments WHERE id = $1`, id)
}

// PaymentByReference returns the oldest live payment with the reference;
// see payd.PaymentStore. On PostgreSQL a transaction-scoped advisory lock
// on (business, reference) serialises the creations that race for one
// reference; SQLite's single writer already runs transactions one by one.
func (q *queries) PaymentByReference(ctx context.Context, businessID, reference string, now time.Time) (_ *payd.Payment, err error) {
	defer fail(&err, "payment", "store.PaymentByReference(%s)", reference)
	if q.dialect == dialectPostgres {
		if _, err := q.ex.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`,
			"payment_reference:"+businessID+":"+reference); err != nil {
			return nil, err
		}
	}
	return q.loadPayment(ctx, `SELECT `+paymentColumns+` FROM payments
		WHERE business_id = $1 AND reference = $2 AND status <> 'failed' AND status <> 'expired'
			AND (status <> 'pending' OR expires_at IS NULL OR expires_at > $3)
		ORDER BY created_at, id LIMIT 1`, businessID, reference, micros(now))
}

// loadPayment reads one payment row and its events.
func (q *queries) loadPayment(ctx context.Context, query string, args ...any) (*payd.Payment, error) {
	p, err := scanPayment(q.ex.QueryRowContext(ctx, query, args...))
	if err != nil {
		return nil, err
	}
	if p.Events, err = q.paymentEvents(ctx, p.ID); err != nil {
		return nil, err
	}
	return p, nil
}

// paymentEvents returns a payment's history, oldest first.
func (q *queries) paymentEvents(ctx context.Context, paymentID string) ([]payd.PaymentEvent, error) {
	return queryAll(ctx, q.ex, func(row rowScanner) (payd.PaymentEvent, error) {
		var e payd.PaymentEvent
		var data sql.NullString
		var at int64
		err := row.Scan(&e.Type, &data, &at)
		if data.Valid {
			e.Data = []byte(data.String)
		}
		e.CreatedAt = fromMicros(at)
		return e, err
	}, `SELECT type, data, created_at FROM payment_events WHERE payment_id = $1 ORDER BY seq`, paymentID)
}

// UpdatePayment writes p's mutable fields and appends its new events; see
// payd.PaymentStore.
func (q *queries) UpdatePayment(ctx context.Context, p *payd.Payment) (err error) {
	defer fail(&err, "payment", "store.UpdatePayment(%s)", p.ID)
	row, err := paymentRow(p)
	if err != nil {
		return err
	}
	err = affected(q.ex.ExecContext(ctx, `
		UPDATE payments SET status = $3, customer_fee = $4, amount_received = $5, fee_rate_bps = $6,
			usd_amount = $7, usd_fee = $8, usd_transaction_fee = $9, usd_customer_fee = $10, usd_net = $11,
			method = $12, settlement = $13, rail = $14, tx_hash = $15, from_address = $16, customer_id = $17,
			expires_at = $18, canceled_at = $19, confirmed_at = $20, checkout_id = $21, failure_code = $22,
			failure_message = $23, updated_at = $24
		WHERE business_id = $1 AND id = $2`,
		p.BusinessID, p.ID, string(p.Status), p.CustomerFee, p.AmountReceived, p.FeeRateBps, p.Reporting.AmountUSD,
		nullInt(p.Reporting.FeeUSD), p.Reporting.TransactionFeeUSD, p.Reporting.CustomerFeeUSD, p.Reporting.NetUSD,
		row.method, row.settlement, row.rail, row.txHash, row.fromAddress, null(p.CustomerID),
		nullMicros(p.ExpiresAt), nullMicros(p.CanceledAt), nullMicros(p.ConfirmedAt), null(p.CheckoutID),
		null(p.FailureCode), null(p.FailureMessage), micros(p.UpdatedAt)))
	if err != nil {
		return err
	}
	return q.appendEvents(ctx, p)
}

// appendEvents inserts the events of p beyond those stored. More stored
// events than p holds means another change came first: conflict.
func (q *queries) appendEvents(ctx context.Context, p *payd.Payment) error {
	var stored int
	err := q.ex.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM payment_events WHERE payment_id = $1`, p.ID).Scan(&stored)
	if err != nil {
		return err
	}
	if stored > len(p.Events) {
		return payd.Errorf(payd.ErrConflict, "payment %s changed meanwhile; retry", p.ID)
	}
	return q.insertEvents(ctx, p.ID, p.Events[stored:], stored)
}

// paymentCols are the stored forms of a payment's JSON and derived columns.
type paymentCols struct {
	metadata                  string
	method, settlement        any // JSON text or NULL
	rail, txHash, fromAddress any // copied out of method for filters and search
}

// paymentRow encodes p's JSON columns and copies out the searchable ones.
func paymentRow(p *payd.Payment) (paymentCols, error) {
	var c paymentCols
	meta := p.Metadata
	if meta == nil {
		meta = map[string]string{}
	}
	b, err := json.Marshal(meta)
	if err != nil {
		return c, err
	}
	c.metadata = string(b)
	if p.Method != nil {
		if c.method, err = jsonText(storeMethod(p.Method)); err != nil {
			return c, err
		}
		c.rail, c.txHash, c.fromAddress = null(string(p.Method.Rail)), null(p.Method.TxHash), null(p.Method.FromAddress)
	}
	if p.Settlement != nil {
		if c.settlement, err = jsonText(storedSettlement(*p.Settlement)); err != nil {
			return c, err
		}
	}
	return c, nil
}

// jsonText encodes v as JSON text for a TEXT column.
func jsonText(v any) (any, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// nullInt stores a nil *int64 as NULL.
func nullInt(v *int64) any {
	if v == nil {
		return nil
	}
	return *v
}

// null stores "" as NULL, so that optional text is NULL in the database as
// it is null on the wire.
func null(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// storedMethod is how payd.Method is kept in payments.method: explicit
// names, so that renaming a Go field can never change stored data.
type storedMethod struct {
	Rail           payd.Rail     `json:"rail"`
	Asset          money.Asset   `json:"asset"`
	Network        money.Network `json:"network"`
	Amount         string        `json:"amount"`
	ExpectedAmount string        `json:"expected_amount"`
	OverpaidAmount string        `json:"overpaid_amount"`
	FromAddress    string        `json:"from_address"`
	TxHash         string        `json:"tx_hash"`
	ExplorerURL    string        `json:"explorer_url"`
	// Card is what a card provider reported; absent on crypto.
	Card *storedMethodCard `json:"card,omitempty"`
}

// storedMethodCard is how payd.MethodCard is kept in payments.method.
type storedMethodCard struct {
	Provider  string          `json:"provider"`
	Status    payd.CardStatus `json:"status"`
	Brand     string          `json:"brand,omitempty"`
	Last4     string          `json:"last4,omitempty"`
	Country   string          `json:"country,omitempty"`
	Reference string          `json:"reference,omitempty"`
}

// storeMethod returns the stored form of m.
func storeMethod(m *payd.Method) storedMethod {
	s := storedMethod{Rail: m.Rail, Asset: m.Asset, Network: m.Network, Amount: m.Amount,
		ExpectedAmount: m.ExpectedAmount, OverpaidAmount: m.OverpaidAmount, FromAddress: m.FromAddress,
		TxHash: m.TxHash, ExplorerURL: m.ExplorerURL}
	if k := m.Card; k != nil {
		s.Card = &storedMethodCard{Provider: k.Provider, Status: k.Status, Brand: k.Brand, Last4: k.Last4,
			Country: k.Country, Reference: k.Reference}
	}
	return s
}

// method reads a stored method back.
func (s storedMethod) method() *payd.Method {
	m := &payd.Method{Rail: s.Rail, Asset: s.Asset, Network: s.Network, Amount: s.Amount,
		ExpectedAmount: s.ExpectedAmount, OverpaidAmount: s.OverpaidAmount, FromAddress: s.FromAddress,
		TxHash: s.TxHash, ExplorerURL: s.ExplorerURL}
	if k := s.Card; k != nil {
		m.Card = &payd.MethodCard{Provider: k.Provider, Status: k.Status, Brand: k.Brand, Last4: k.Last4,
			Country: k.Country, Reference: k.Reference}
	}
	return m
}

// storedSettlement is how payd.Settlement is kept in payments.settlement.
type storedSettlement struct {
	Destination string        `json:"destination"`
	Asset       money.Asset   `json:"asset"`
	Network     money.Network `json:"network"`
	Amount      string        `json:"amount"`
	WalletID    string        `json:"wallet_id"`
	Address     string        `json:"address"`
	TxHash      string        `json:"tx_hash"`
	ExplorerURL string        `json:"explorer_url"`
}

// scanPayment reads one row of paymentColumns.
func scanPayment(row interface{ Scan(...any) error }) (*payd.Payment, error) {
	var p payd.Payment
	var fee, expires, canceled, confirmed sql.NullInt64
	var method, settlement, customer, link, ref, success, cancel, checkout, fcode, fmsg sql.NullString
	var metadata string
	var created, updated int64
	err := row.Scan(&p.ID, &p.BusinessID, &p.Code, &p.Status, &p.Amount, &p.Currency, &p.FeePayer, &p.CustomerFee,
		&p.AmountReceived, &p.FeeRateBps, &p.Reporting.AmountUSD, &fee, &p.Reporting.TransactionFeeUSD,
		&p.Reporting.CustomerFeeUSD, &p.Reporting.NetUSD, &method, &settlement, &customer, &link, &ref, &metadata,
		&success, &cancel, &expires, &canceled, &confirmed, &checkout, &p.Description, &p.Country, &fcode, &fmsg,
		&created, &updated)
	if err != nil {
		return nil, err
	}
	if fee.Valid {
		p.Reporting.FeeUSD = &fee.Int64
	}
	p.CustomerID, p.LinkID, p.Reference = customer.String, link.String, ref.String
	p.SuccessURL, p.CancelURL, p.CheckoutID = success.String, cancel.String, checkout.String
	p.FailureCode, p.FailureMessage = fcode.String, fmsg.String
	p.ExpiresAt, p.CanceledAt, p.ConfirmedAt = fromNullMicros(expires), fromNullMicros(canceled), fromNullMicros(confirmed)
	p.CreatedAt, p.UpdatedAt = fromMicros(created), fromMicros(updated)
	if err := decodePaymentJSON(&p, metadata, method, settlement); err != nil {
		return nil, err
	}
	return &p, nil
}

// decodePaymentJSON reads the JSON columns back.
func decodePaymentJSON(p *payd.Payment, metadata string, method, settlement sql.NullString) error {
	if err := json.Unmarshal([]byte(metadata), &p.Metadata); err != nil {
		return err
	}
	if method.Valid {
		var m storedMethod
		if err := json.Unmarshal([]byte(method.String), &m); err != nil {
			return err
		}
		p.Method = m.method()
	}
	if settlement.Valid {
		var st storedSettlement
		if err := json.Unmarshal([]byte(settlement.String), &st); err != nil {
			return err
		}
		ps := payd.Settlement(st)
		p.Settlement = &ps
	}
	return nil
}

// CreatePayment stores a new payment with its metadata and events, in one
// transaction (inline when ctx already carries one).
func (db *DB) CreatePayment(ctx context.Context, p *payd.Payment) error {
	return db.atomic(ctx, func(ctx context.Context, q *queries) error { return q.CreatePayment(ctx, p) })
}

// PaymentByID returns the business's payment with its events; not_found
// otherwise. The row and the events are read from one snapshot.
func (db *DB) PaymentByID(ctx context.Context, businessID, id string) (p *payd.Payment, err error) {
	err = db.snapshot(ctx, func(q *queries) error {
		p, err = q.PaymentByID(ctx, businessID, id)
		return err
	})
	return p, err
}

// PaymentByCode returns the payment with the public code; not_found
// otherwise. The row and the events are read from one snapshot.
func (db *DB) PaymentByCode(ctx context.Context, code string) (p *payd.Payment, err error) {
	err = db.snapshot(ctx, func(q *queries) error {
		p, err = q.PaymentByCode(ctx, code)
		return err
	})
	return p, err
}

// PublicPayment returns the payment with the id, whatever its business.
// The row and the events are read from one snapshot.
func (db *DB) PublicPayment(ctx context.Context, id string) (p *payd.Payment, err error) {
	err = db.snapshot(ctx, func(q *queries) error {
		p, err = q.PublicPayment(ctx, id)
		return err
	})
	return p, err
}

// PaymentByReference returns the oldest live payment with the reference;
// see payd.PaymentStore.
func (db *DB) PaymentByReference(ctx context.Context, businessID, reference string, now time.Time) (*payd.Payment, error) {
	return db.reader(ctx).PaymentByReference(ctx, businessID, reference, now)
}

// UpdatePayment writes p's mutable fields and appends its new events, in
// one transaction (inline when ctx already carries one).
func (db *DB) UpdatePayment(ctx context.Context, p *payd.Payment) error {
	return db.atomic(ctx, func(ctx context.Context, q *queries) error { return q.UpdatePayment(ctx, p) })
}

// atomic runs a write of several statements: inline in ctx's transaction,
// without the savepoint a nested Tx would cost, or as a transaction of its own.
func (db *DB) atomic(ctx context.Context, fn txFunc) error {
	if st := db.txFrom(ctx); st != nil {
		return fn(ctx, st.q)
	}
	return db.transact(ctx, fn)
}
