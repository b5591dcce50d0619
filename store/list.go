package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"payd"
)

// Payment listing (spec 4.3, docs/listing.md). A page is found in two
// steps: the ids of the page by one keyset query over an index whose order
// is the list's order, then the whole rows of those ids by primary key.
// The first step is where the cost of a deep page or a filter lies, and it
// touches only index entries; the second is a fixed limit+1 lookups.

// sqlArgs collects positional arguments and hands out their placeholders.
type sqlArgs []any

// add appends v and returns its $N placeholder.
func (a *sqlArgs) add(v any) string {
	*a = append(*a, v)
	return "$" + strconv.Itoa(len(*a))
}

// paymentQuery is a payment filter turned into SQL.
type paymentQuery struct {
	args  sqlArgs
	where []string
	// from is the FROM clause; created and id are the columns that carry
	// the list's created_at order and its tie-break, which are
	// payment_metadata's own when a metadata filter drives the scan.
	from, created, id string
	// byIDs is set when a short list of ids drives the query.
	byIDs bool
}

// newPaymentQuery builds the WHERE clause of f, leaving status out unless
// withStatus (status_counts ignores it); m is what f.Query matches
// (queries.matchQuery), nil without one.
func (q *queries) newPaymentQuery(f payd.PaymentFilter, withStatus bool, m *queryMatch) *paymentQuery {
	pq := &paymentQuery{from: "payments p", created: "p.created_at", id: "p.id"}
	biz := pq.args.add(f.BusinessID)
	if m != nil && !m.many {
		// The matching ids drive the query; (business_id || '') keeps
		// SQLite, which has no statistics, from walking the business's
		// payments instead and checking each against them (290 ms at a
		// million against 2 ms).
		pq.where = append(pq.where, "(p.business_id || '') = "+biz)
	} else {
		pq.where = append(pq.where, "p.business_id = "+biz)
	}
	pq.metadata(f, biz)
	pq.lowCardinality(f, withStatus)
	pq.eq("p.reference", f.Reference)
	pq.eq("p.customer_id", f.CustomerID)
	pq.eq("p.link_id", f.LinkID)
	if f.CreatedAfter != nil {
		pq.where = append(pq.where, pq.created+" >= "+pq.args.add(ceilMicros(*f.CreatedAfter)))
	}
	if f.CreatedBefore != nil {
		pq.where = append(pq.where, pq.created+" < "+pq.args.add(ceilMicros(*f.CreatedBefore)))
	}
	if m != nil {
		pq.match(q, m)
	}
	return pq
}

// eq adds col = v when v is set.
func (pq *paymentQuery) eq(col string, v *string) {
	if v != nil {
		pq.where = append(pq.where, col+" = "+pq.args.add(*v))
	}
}

// metadata adds the metadata[key]=value filters. Under a created_at sort
// the first pair drives the scan from payment_metadata_list, whose
// (created_at, payment_id) is the list's order, so a rare value and a
// common one are both one range scan; further pairs are checked per row.
func (pq *paymentQuery) metadata(f payd.PaymentFilter, biz string) {
	pairs := f.Metadata
	if len(pairs) > 0 && !f.Sort.ByAmount() {
		m := pairs[0]
		pairs = pairs[1:]
		pq.from = "payment_metadata m JOIN payments p ON p.id = m.payment_id"
		pq.created, pq.id = "m.created_at", "m.payment_id"
		pq.where = append(pq.where, "m.business_id = "+biz, "m.key = "+pq.args.add(m.Key), "m.value = "+pq.args.add(m.Value))
	}
	for _, m := range pairs {
		pq.where = append(pq.where, fmt.Sprintf(
			"EXISTS (SELECT 1 FROM payment_metadata x WHERE x.payment_id = p.id AND x.key = %s AND x.value = %s)",
			pq.args.add(m.Key), pq.args.add(m.Value)))
	}
}

// lowCardinality adds the status and rail filters. Each matches a large
// share of a business's payments, so their indexes only serve a created_at
// list with no narrower filter. Otherwise the column is written as an
// expression (col || ”), which neither database can use an index for:
// without statistics SQLite would prefer the status index for status=X
// sort=amount and sort every matching row, where walking the amount index
// stops after one page.
func (pq *paymentQuery) lowCardinality(f payd.PaymentFilter, withStatus bool) {
	narrow := f.Reference != nil || f.CustomerID != nil || f.LinkID != nil || len(f.Metadata) > 0 || f.Query != ""
	col := func(c string) string {
		if narrow || f.Sort.ByAmount() {
			return "(" + c + " || '')"
		}
		return c
	}
	if withStatus && f.Status != nil {
		pq.where = append(pq.where, col("p.status")+" = "+pq.args.add(string(*f.Status)))
	}
	if f.Rail != nil {
		pq.where = append(pq.where, col("p.rail")+" = "+pq.args.add(string(*f.Rail)))
	}
}

// after adds the keyset condition: rows strictly after f.After in f.Sort
// order. It is written as "col <= v AND (col < v OR id < i)" rather than a
// row-value comparison so that both planners see a plain range on col.
func (pq *paymentQuery) after(f payd.PaymentFilter) {
	if f.After == nil {
		return
	}
	col, v := pq.created, any(micros(f.After.CreatedAt))
	if f.Sort.ByAmount() {
		col, v = "p.amount", f.After.Amount
	}
	op := ">"
	if f.Sort.Descending() {
		op = "<"
	}
	c, i := pq.args.add(v), pq.args.add(f.After.ID)
	pq.where = append(pq.where, fmt.Sprintf("%s %s= %s AND (%s %s %s OR %s %s %s)", col, op, c, col, op, c, pq.id, op, i))
}

// orderBy is the ORDER BY of sort s, ties broken by id the same way. A
// reference names a handful of payments, but SQLite would rather walk
// payments_created, whose order is the list's, than sort them: created_at
// + 0 is no index's order, so the reference's index is taken.
func (pq *paymentQuery) orderBy(s payd.PaymentSort, f payd.PaymentFilter) string {
	col, dir := pq.created, " ASC"
	switch {
	case s.ByAmount():
		col = "p.amount"
	case f.Reference != nil || pq.byIDs:
		col += " + 0"
	}
	if s.Descending() {
		dir = " DESC"
	}
	return col + dir + ", " + pq.id + dir
}

// whereSQL joins the conditions.
func (pq *paymentQuery) whereSQL() string { return strings.Join(pq.where, " AND ") }

// ceilMicros is t in whole microseconds, rounded up: a stored time (whole
// microseconds) is at or after t exactly when it is at or after this.
func ceilMicros(t time.Time) int64 {
	us := t.UnixMicro()
	if t.Nanosecond()%1000 != 0 {
		us++
	}
	return us
}

// ListPayments returns at most f.Limit payments matching f after f.After.
func (q *queries) ListPayments(ctx context.Context, f payd.PaymentFilter) (ps []*payd.Payment, err error) {
	defer fail(&err, "payment", "store.ListPayments(%s)", f.BusinessID)
	ids, err := q.listPaymentIDs(ctx, f)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	return q.paymentsByIDs(ctx, f.BusinessID, ids)
}

// listPaymentIDs runs the keyset query for the ids of one page, in order.
func (q *queries) listPaymentIDs(ctx context.Context, f payd.PaymentFilter) ([]string, error) {
	m, err := q.matchQuery(ctx, f)
	if err != nil || m.none() {
		return nil, err
	}
	pq := q.newPaymentQuery(f, true, m)
	pq.after(f)
	query := "SELECT " + pq.id + " FROM " + pq.from + " WHERE " + pq.whereSQL() +
		" ORDER BY " + pq.orderBy(f.Sort, f) + " LIMIT " + pq.args.add(f.Limit)
	return q.matchIDs(ctx, query, pq.args...)
}

// idsIn is the condition "col is one of the ids in the JSON array param":
// one statement whatever the number of ids, so that pages of every size
// share one prepared statement.
func (q *queries) idsIn(col, param string) string {
	if q.dialect == dialectPostgres {
		// = ANY of an array is an index condition; IN (SELECT …) is a
		// semi-join PostgreSQL may answer by hashing the whole table.
		return col + " = ANY(ARRAY(SELECT jsonb_array_elements_text(" + param + "::jsonb)))"
	}
	return col + " IN (SELECT value FROM json_each(" + param + "))"
}

// jsonIDs is ids as one JSON array parameter (queries.idsIn).
func jsonIDs(ids []string) string {
	b, _ := json.Marshal(ids) // strings always marshal
	return string(b)
}

// paymentsByIDs reads the business's payments with ids, with their
// events, in the order of ids.
func (q *queries) paymentsByIDs(ctx context.Context, businessID string, ids []string) ([]*payd.Payment, error) {
	list := jsonIDs(ids)
	// (business_id || '') keeps SQLite, which has no statistics, from
	// walking the business's index instead of looking the ids up.
	rows, err := q.ex.QueryContext(ctx, `SELECT `+paymentColumns+` FROM payments WHERE (business_id || '') = $1 AND `+
		q.idsIn("id", "$2"), businessID, list)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byID := make(map[string]*payd.Payment, len(ids))
	for rows.Next() {
		p, err := scanPayment(rows)
		if err != nil {
			return nil, err
		}
		byID[p.ID] = p
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if err := q.eventsOf(ctx, list, byID); err != nil {
		return nil, err
	}
	ps := make([]*payd.Payment, 0, len(ids))
	for _, id := range ids {
		if p := byID[id]; p != nil {
			ps = append(ps, p)
		}
	}
	return ps, nil
}

// eventsOf loads the events of every payment in byID (ids as a JSON array).
func (q *queries) eventsOf(ctx context.Context, ids string, byID map[string]*payd.Payment) error {
	rows, err := q.ex.QueryContext(ctx, `SELECT payment_id, type, data, created_at FROM payment_events
		WHERE `+q.idsIn("payment_id", "$1")+` ORDER BY payment_id, seq`, ids)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var e payd.PaymentEvent
		var data sql.NullString
		var at int64
		if err := rows.Scan(&id, &e.Type, &data, &at); err != nil {
			return err
		}
		if data.Valid {
			e.Data = []byte(data.String)
		}
		e.CreatedAt = fromMicros(at)
		if p := byID[id]; p != nil {
			p.Events = append(p.Events, e)
		}
	}
	return rows.Err()
}

// ListPayments returns a page of payments; see payd.ListStore.
func (db *DB) ListPayments(ctx context.Context, f payd.PaymentFilter) ([]*payd.Payment, error) {
	return db.reader(ctx).ListPayments(ctx, f)
}
