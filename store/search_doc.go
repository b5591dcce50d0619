package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"payd"
	"payd/money"
)

// searchDoc is one object's search entry: its folded document and exact
// keys. The indexer stores it; a search builds it afresh for objects the
// indexer has not reached yet, so both read it the same way.
type searchDoc struct {
	kind       payd.SearchKind
	id         string
	businessID string
	createdAt  int64
	// doc is " " + the payd.SearchWords of each matched field joined by
	// " | " + " ": a query (words and single spaces only) can never match
	// across two fields, and a word start is always preceded by a space.
	doc string
	// keys are the folded exact keys, one per line, sorted.
	keys string
}

// newSearchDoc builds the entry of an object from its matched fields
// (words) and exact keys.
func newSearchDoc(kind payd.SearchKind, id, businessID string, createdAt int64, words, keys []string) searchDoc {
	parts := make([]string, 0, len(words))
	for _, w := range words {
		if w = payd.SearchWords(w); w != "" {
			parts = append(parts, w)
		}
	}
	set := map[string]bool{}
	for _, k := range keys {
		if k = payd.SearchFold(k); k != "" {
			set[k] = true
		}
	}
	return searchDoc{kind: kind, id: id, businessID: businessID, createdAt: createdAt,
		doc: " " + strings.Join(parts, " | ") + " ", keys: strings.Join(slices.Sorted(maps.Keys(set)), "\n")}
}

// keyList splits keys back into the exact keys.
func (d searchDoc) keyList() []string {
	if d.keys == "" {
		return nil
	}
	return strings.Split(d.keys, "\n")
}

// priceWords are how a price matches (docs/search.md): as a decimal in the
// currency ("12.50", whose words are "12 50") and in minor units ("1250").
func priceWords(amount int64, currency string) []string {
	return []string{money.Currency(currency).Format(amount), strconv.FormatInt(amount, 10)}
}

// searchLoadChunk bounds the ids of one IN list.
const searchLoadChunk = 200

// loadSearchDocs builds the entries of the given objects of one kind,
// keyed by id; objects that no longer exist are left out.
func (q *queries) loadSearchDocs(ctx context.Context, kind payd.SearchKind, ids []string) (map[string]searchDoc, error) {
	out := make(map[string]searchDoc, len(ids))
	for chunk := range slices.Chunk(ids, searchLoadChunk) {
		var args sqlArgs
		marks := make([]string, len(chunk))
		for i, id := range chunk {
			marks[i] = args.add(id)
		}
		in := "(" + strings.Join(marks, ", ") + ")"
		if err := q.scanSearchDocs(ctx, kind, in, args, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// scanSearchDocs reads one chunk of objects into out.
func (q *queries) scanSearchDocs(ctx context.Context, kind payd.SearchKind, in string, args sqlArgs, out map[string]searchDoc) error {
	query, scan := searchLinkRows, scanSearchLink
	switch kind {
	case payd.SearchCustomer:
		query, scan = searchCustomerRows, scanSearchCustomer
	case payd.SearchPayment:
		query, scan = searchPaymentRows, scanSearchPayment
	}
	rows, err := q.ex.QueryContext(ctx, query+in, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		d, err := scan(rows)
		if err != nil {
			return err
		}
		out[d.id] = d
	}
	return rows.Err()
}

const searchLinkRows = `SELECT id, business_id, created_at, code, name, description, amount, currency FROM links WHERE id IN `

// scanSearchLink builds a link's entry: it matches on id, code, name,
// description and price; id and code are exact keys.
func scanSearchLink(rows *sql.Rows) (searchDoc, error) {
	var id, biz, code, name, desc, cur string
	var created, amount int64
	if err := rows.Scan(&id, &biz, &created, &code, &name, &desc, &amount, &cur); err != nil {
		return searchDoc{}, err
	}
	words := append([]string{id, code, name, desc}, priceWords(amount, cur)...)
	return newSearchDoc(payd.SearchLink, id, biz, created, words, []string{id, code}), nil
}

const searchCustomerRows = `SELECT id, business_id, created_at, name, email FROM customers WHERE id IN `

// scanSearchCustomer builds a customer's entry: it matches on id, email
// and name; id and email are exact keys.
func scanSearchCustomer(rows *sql.Rows) (searchDoc, error) {
	var id, biz, name, email string
	var created int64
	if err := rows.Scan(&id, &biz, &created, &name, &email); err != nil {
		return searchDoc{}, err
	}
	return newSearchDoc(payd.SearchCustomer, id, biz, created, []string{id, email, name}, []string{id, email}), nil
}

const searchPaymentRows = `SELECT p.id, p.business_id, p.created_at, p.checkout_id, p.reference, p.metadata,
	p.tx_hash, p.from_address, p.description, p.amount, p.currency, c.name, c.email
	FROM payments p LEFT JOIN customers c ON c.id = p.customer_id AND c.business_id = p.business_id
	WHERE p.id IN `

// scanSearchPayment builds a payment's entry (spec 4.2's list of fields);
// id, checkout id, transaction hash, sender address and the customer's
// email are exact keys.
func scanSearchPayment(rows *sql.Rows) (searchDoc, error) {
	var id, biz, meta, desc, cur string
	var chk, ref, hash, from, cname, cemail sql.NullString
	var created, amount int64
	err := rows.Scan(&id, &biz, &created, &chk, &ref, &meta, &hash, &from, &desc, &amount, &cur, &cname, &cemail)
	if err != nil {
		return searchDoc{}, err
	}
	words := []string{id, chk.String, ref.String}
	words = append(words, metadataValues(meta)...)
	words = append(words, hash.String, from.String, desc, cname.String, cemail.String)
	words = append(words, priceWords(amount, cur)...)
	keys := []string{id, chk.String, hash.String, from.String, cemail.String}
	return newSearchDoc(payd.SearchPayment, id, biz, created, words, keys), nil
}

// metadataValues returns the values of a stored metadata object in key
// order; a value that does not parse matches nothing rather than failing
// every search that meets it.
func metadataValues(raw string) []string {
	var m map[string]string
	if json.Unmarshal([]byte(raw), &m) != nil {
		return nil
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}
