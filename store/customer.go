package store

import (
	"context"
	"database/sql"
	"maps"
	"slices"
	"strconv"

	"payd"
)

// customerColumns are read by every customer query, in scanCustomer's order.
const customerColumns = `id, business_id, name, email, note, blocked, payments_count, succeeded_count,
	volume_usd, crypto_count, card_count, last_payment_at, created_at, updated_at`

// rowScanner is a *sql.Row or *sql.Rows.
type rowScanner interface{ Scan(dest ...any) error }

// scanCustomer reads one row of customerColumns.
func scanCustomer(row rowScanner) (*payd.Customer, error) {
	var c payd.Customer
	var last sql.NullInt64
	var created, updated int64
	s := &c.Stats
	err := row.Scan(&c.ID, &c.BusinessID, &c.Name, &c.Email, &c.Note, &c.Blocked, &s.Payments, &s.Succeeded,
		&s.VolumeUSD, &s.Crypto, &s.Card, &last, &created, &updated)
	if err != nil {
		return nil, err
	}
	s.LastPaymentAt, c.CreatedAt, c.UpdatedAt = fromNullMicros(last), fromMicros(created), fromMicros(updated)
	return &c, nil
}

// lockRow is appended to a read of one row inside a PostgreSQL transaction,
// so that two requests changing the same customer or link take turns
// rather than one silently undoing the other's change. SQLite's single
// writer already runs them one after the other.
func (q *queries) lockRow() string {
	if q.dialect == dialectPostgres && !q.at.IsZero() {
		return " FOR UPDATE"
	}
	return ""
}

// CreateCustomer stores a new customer; customer_exists when another
// customer of the business has the same email. ON CONFLICT DO NOTHING
// rather than a unique violation keeps a PostgreSQL transaction usable, so
// a caller can fall back to the existing customer.
func (q *queries) CreateCustomer(ctx context.Context, c *payd.Customer) (err error) {
	defer fail(&err, "customer", "store.CreateCustomer(%s)", c.ID)
	s := c.Stats
	err = affected(q.ex.ExecContext(ctx, `
		INSERT INTO customers (id, business_id, name, email, email_key, note, blocked, payments_count,
			succeeded_count, volume_usd, crypto_count, card_count, last_payment_at, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
		ON CONFLICT DO NOTHING`,
		c.ID, c.BusinessID, c.Name, c.Email, payd.EmailKey(c.Email), c.Note, c.Blocked, s.Payments,
		s.Succeeded, s.VolumeUSD, s.Crypto, s.Card, nullMicros(s.LastPaymentAt), micros(c.CreatedAt), micros(c.UpdatedAt)))
	if err == sql.ErrNoRows {
		return customerExists(c.Email)
	}
	return err
}

// customerExists is the error for an email another customer has.
func customerExists(email string) error {
	return &payd.Error{Code: payd.ErrCustomerExists, Field: "email",
		Message: "another customer of this business has the email " + strconv.Quote(email)}
}

// CustomerByID returns the business's customer; not_found otherwise.
func (q *queries) CustomerByID(ctx context.Context, businessID, id string) (_ *payd.Customer, err error) {
	defer fail(&err, "customer", "store.CustomerByID(%s)", id)
	return q.customerRow(ctx, q.ex.QueryRowContext(ctx, `SELECT `+customerColumns+`
		FROM customers WHERE business_id = $1 AND id = $2`+q.lockRow(), businessID, id))
}

// CustomerByEmail returns the business's customer with this email, ignoring
// case, with the stats folded so far and without a lock (see
// payd.CustomerStore); not_found otherwise (and for the empty email).
func (q *queries) CustomerByEmail(ctx context.Context, businessID, email string) (_ *payd.Customer, err error) {
	defer fail(&err, "customer", "store.CustomerByEmail(%s)", businessID)
	if email == "" {
		return nil, sql.ErrNoRows
	}
	return scanCustomer(q.ex.QueryRowContext(ctx, `SELECT `+customerColumns+`
		FROM customers WHERE business_id = $1 AND email_key = $2`, businessID, payd.EmailKey(email)))
}

// CustomersByID returns the business's customers among ids, keyed by id.
func (q *queries) CustomersByID(ctx context.Context, businessID string, ids []string) (_ map[string]*payd.Customer, err error) {
	defer fail(&err, "customer", "store.CustomersByID(%s, %d ids)", businessID, len(ids))
	out := make(map[string]*payd.Customer, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	// (business_id || '') keeps SQLite, which has no statistics, from
	// walking all of the business's customers instead of looking the ids
	// up (166 ms for a page of 25 at 380,000 customers); the ids are one
	// JSON array parameter, so every page size shares one statement.
	rows, err := q.ex.QueryContext(ctx, `SELECT `+customerColumns+`
		FROM customers WHERE (business_id || '') = $1 AND `+q.idsIn("id", "$2"), businessID, jsonIDs(ids))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		c, err := scanCustomer(rows)
		if err != nil {
			return nil, err
		}
		out[c.ID] = c
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	return out, q.withPendingCustomers(ctx, businessID, slices.Collect(maps.Values(out))...)
}

// UpdateCustomer writes name, email, note, blocked and updated_at;
// not_found or customer_exists. The email is checked in the statement
// itself, so that PostgreSQL meets no unique violation (which would abort
// the caller's transaction) unless another transaction races it.
func (q *queries) UpdateCustomer(ctx context.Context, c *payd.Customer) (err error) {
	defer fail(&err, "customer", "store.UpdateCustomer(%s)", c.ID)
	key := payd.EmailKey(c.Email)
	err = affected(q.ex.ExecContext(ctx, `
		UPDATE customers SET name = $3, email = $4, email_key = $5, note = $6, blocked = $7, updated_at = $8
		WHERE business_id = $1 AND id = $2 AND ($5 = '' OR NOT EXISTS (
			SELECT 1 FROM customers o WHERE o.business_id = $1 AND o.email_key = $5 AND o.id <> $2))`,
		c.BusinessID, c.ID, c.Name, c.Email, key, c.Note, c.Blocked, micros(c.UpdatedAt)))
	if err != sql.ErrNoRows {
		if isUniqueViolation(err) {
			return customerExists(c.Email)
		}
		return err
	}
	if _, err := q.CustomerByID(ctx, c.BusinessID, c.ID); err != nil {
		return err
	}
	return customerExists(c.Email)
}

// AddCustomerStats appends d to the customer's stats (store/rollup.go:
// the customer's row is not locked); not_found otherwise.
func (q *queries) AddCustomerStats(ctx context.Context, businessID, id string, d payd.StatsDelta) (err error) {
	defer fail(&err, "customer", "store.AddCustomerStats(%s)", id)
	return q.addStats(ctx, statsCustomer, businessID, id, d)
}

// customerRow scans one customer and adds its unfolded stats deltas
// (store/rollup.go).
func (q *queries) customerRow(ctx context.Context, row rowScanner) (*payd.Customer, error) {
	c, err := scanCustomer(row)
	if err != nil {
		return nil, err
	}
	return c, q.withPendingCustomers(ctx, c.BusinessID, c)
}

// laterOf is the SQL for the later of a nullable column and a nullable
// parameter, the same on both databases (SQLite's max() returns NULL when
// either is NULL, PostgreSQL's GREATEST ignores NULLs). The CAST tells
// PostgreSQL the parameter's type when it is NULL.
func laterOf(col, param string) string {
	p := "CAST(" + param + " AS BIGINT)"
	return "CASE WHEN " + p + " IS NULL THEN " + col + " WHEN " + col + " IS NULL OR " + col + " < " + p +
		" THEN " + p + " ELSE " + col + " END"
}

// ListCustomers returns up to f.Limit of the business's customers matching
// f, newest first.
func (q *queries) ListCustomers(ctx context.Context, businessID string, f payd.CustomerFilter) (_ []*payd.Customer, err error) {
	defer fail(&err, "customer", "store.ListCustomers(%s)", businessID)
	w := newConds(businessID)
	if f.Query != "" {
		p := w.arg(likeContains(f.Query))
		w.add(`(lower(name) LIKE ` + p + ` ESCAPE '\' OR email_key LIKE ` + p + ` ESCAPE '\')`)
	}
	if f.Email != "" {
		w.add(`email_key = ` + w.arg(payd.EmailKey(f.Email)))
	}
	if f.Blocked != nil {
		w.add(`blocked = ` + w.arg(*f.Blocked))
	}
	w.created(f.CreatedAfter, f.CreatedBefore, f.AfterCreated, f.AfterID)
	cs, err := queryAll(ctx, q.ex, scanCustomer, `SELECT `+customerColumns+` FROM customers WHERE `+w.sql()+`
		ORDER BY created_at DESC, id DESC LIMIT `+w.arg(f.Limit), w.args...)
	if err != nil {
		return nil, err
	}
	return cs, q.withPendingCustomers(ctx, businessID, cs...)
}

// CreateCustomer stores a new customer; customer_exists when another
// customer of the business has the same email.
func (db *DB) CreateCustomer(ctx context.Context, c *payd.Customer) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.CreateCustomer(ctx, c) })
}

// CustomerByID returns the business's customer; not_found otherwise.
func (db *DB) CustomerByID(ctx context.Context, businessID, id string) (*payd.Customer, error) {
	return db.reader(ctx).CustomerByID(ctx, businessID, id)
}

// CustomerByEmail returns the business's customer with this email; not_found otherwise.
func (db *DB) CustomerByEmail(ctx context.Context, businessID, email string) (*payd.Customer, error) {
	return db.reader(ctx).CustomerByEmail(ctx, businessID, email)
}

// CustomersByID returns the business's customers among ids, keyed by id.
func (db *DB) CustomersByID(ctx context.Context, businessID string, ids []string) (map[string]*payd.Customer, error) {
	return db.reader(ctx).CustomersByID(ctx, businessID, ids)
}

// UpdateCustomer writes a customer's editable fields; not_found or customer_exists.
func (db *DB) UpdateCustomer(ctx context.Context, c *payd.Customer) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.UpdateCustomer(ctx, c) })
}

// AddCustomerStats adds d to the customer's stats; not_found otherwise.
func (db *DB) AddCustomerStats(ctx context.Context, businessID, id string, d payd.StatsDelta) error {
	return db.write(ctx, func(ctx context.Context, q *queries) error { return q.AddCustomerStats(ctx, businessID, id, d) })
}

// ListCustomers returns a page of the business's customers, newest first.
func (db *DB) ListCustomers(ctx context.Context, businessID string, f payd.CustomerFilter) ([]*payd.Customer, error) {
	return db.reader(ctx).ListCustomers(ctx, businessID, f)
}
