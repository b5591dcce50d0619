package api

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"payd"
)

// searchListName binds search cursors to GET /search and, through
// canonicalFilters, to its q, kind and include.
const searchListName = "search"

// maxSearchQuery is spec 4.2's limit on q, in characters.
const maxSearchQuery = 100

// searchParams are GET /search's query parameters once checked.
type searchParams struct {
	text         string
	kinds        []payd.SearchKind
	withCustomer bool
}

// search serves GET /search (spec 4.2, docs/search.md).
func (s *Server) search(w http.ResponseWriter, r *http.Request) error {
	c := callOf(r.Context())
	v := r.URL.Query()
	sp, err := parseSearch(v)
	if err != nil {
		return err
	}
	if sp.kinds, err = searchKinds(c.key, sp.kinds); err != nil {
		return err
	}
	if sp.withCustomer && !c.key.Can(payd.AreaCustomers, payd.AccessRead) {
		return payd.Errorf(payd.ErrPermissionDenied, "include=customer needs a key that can read customers")
	}
	pg, err := parsePage(r.Context(), v, s.cursors, searchListName)
	if err != nil {
		return err
	}
	q := payd.SearchQuery{BusinessID: c.biz.ID, Text: sp.text, Kinds: sp.kinds, Limit: pg.Limit + 1}
	if q.After, err = searchPosition(pg.After); err != nil {
		return err
	}
	hits, err := s.store.Search(r.Context(), q)
	if err != nil {
		return err
	}
	out := objectList{Data: []any{}}
	if len(hits) > pg.Limit {
		hits = hits[:pg.Limit]
		next := pg.nextCursor(searchCursorValues(hits[len(hits)-1]))
		out.HasMore, out.NextCursor = true, &next
	}
	if out.Data, err = s.searchItems(r, hits, sp.withCustomer); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// parseSearch reads q, kind and include. Every parameter may appear once.
func parseSearch(v url.Values) (searchParams, error) {
	var sp searchParams
	q, err := optText(v, "q", maxSearchQuery)
	if err != nil {
		return sp, err
	}
	if q == nil || strings.TrimSpace(*q) == "" {
		return sp, payd.FieldError("q", "q is required: the text to search for, 1 to %d characters", maxSearchQuery)
	}
	sp.text = *q
	if sp.kinds, err = parseKinds(v); err != nil {
		return sp, err
	}
	inc, err := optText(v, "include", maxSearchQuery)
	if err != nil {
		return sp, err
	}
	if inc != nil && *inc != "customer" {
		return sp, payd.FieldError("include", "include takes only customer; not %q", *inc)
	}
	sp.withCustomer = inc != nil
	return sp, nil
}

// parseKinds reads kind: payment, customer, link or several comma
// separated, each once. No kind means every kind (searchKinds narrows it to
// what the key reads); the result is in tie order.
func parseKinds(v url.Values) ([]payd.SearchKind, error) {
	s, err := optText(v, "kind", maxSearchQuery)
	if err != nil || s == nil {
		return nil, err
	}
	var kinds []payd.SearchKind
	for _, item := range strings.Split(*s, ",") {
		k := payd.SearchKind(item)
		if !slices.Contains(payd.SearchKinds, k) || slices.Contains(kinds, k) {
			return nil, payd.FieldError("kind", "kind takes payment, customer or link, each at most once, comma separated; not %q", item)
		}
		kinds = append(kinds, k)
	}
	slices.SortFunc(kinds, func(a, b payd.SearchKind) int {
		return slices.Index(payd.SearchKinds, a) - slices.Index(payd.SearchKinds, b)
	})
	return kinds, nil
}

// searchKinds applies a restricted key's permissions: kinds it names must
// all be readable; without kind, every readable kind is searched, and a key
// that reads none of them may not search.
func searchKinds(k *payd.APIKey, asked []payd.SearchKind) ([]payd.SearchKind, error) {
	if asked != nil {
		for _, kind := range asked {
			if !k.Can(kind.Area(), payd.AccessRead) {
				return nil, payd.Errorf(payd.ErrPermissionDenied, "this key cannot read %s, so it cannot search them", kind.Area())
			}
		}
		return asked, nil
	}
	var kinds []payd.SearchKind
	for _, kind := range payd.SearchKinds {
		if k.Can(kind.Area(), payd.AccessRead) {
			kinds = append(kinds, kind)
		}
	}
	if len(kinds) == 0 {
		return nil, payd.Errorf(payd.ErrPermissionDenied, "this key reads none of payments, customers and links, so it cannot search")
	}
	return kinds, nil
}

// searchCursorValues are a hit's cursor values: tier, kind, created_at
// (Unix micros) and id.
func searchCursorValues(h payd.SearchHit) []string {
	return []string{strconv.Itoa(h.Tier), string(h.Kind), strconv.FormatInt(h.CreatedAt.UnixMicro(), 10), h.ID}
}

// searchPosition reads a cursor's values back. The cursor is signed, so
// values that do not parse mean a bug; they are still refused as a bad cursor.
func searchPosition(after []string) (*payd.SearchPosition, error) {
	if after == nil {
		return nil, nil
	}
	bad := cursorError("the cursor is malformed; pass next_cursor exactly as it was returned")
	if len(after) != 4 {
		return nil, bad
	}
	tier, err1 := strconv.Atoi(after[0])
	micros, err2 := strconv.ParseInt(after[2], 10, 64)
	kind := payd.SearchKind(after[1])
	if errors.Join(err1, err2) != nil || tier < payd.TierExact || tier > payd.TierAnywhere || !slices.Contains(payd.SearchKinds, kind) {
		return nil, bad
	}
	return &payd.SearchPosition{Tier: tier, Kind: kind, CreatedAt: time.UnixMicro(micros).UTC(), ID: after[3]}, nil
}

// searchItems loads each hit as its own endpoint shows it. An object
// deleted since the search is left out.
func (s *Server) searchItems(r *http.Request, hits []payd.SearchHit, withCustomer bool) ([]any, error) {
	ctx, biz := r.Context(), callOf(r.Context()).biz.ID
	items := make([]any, 0, len(hits))
	for _, h := range hits {
		var item any
		var err error
		switch h.Kind {
		case payd.SearchLink:
			var l *payd.Link
			if l, err = s.store.LinkByID(ctx, biz, h.ID); err == nil {
				item = s.toLink(l)
			}
		case payd.SearchCustomer:
			var c *payd.Customer
			if c, err = s.store.CustomerByID(ctx, biz, h.ID); err == nil {
				item = toCustomer(c)
			}
		default:
			var p *payd.Payment
			if p, err = s.store.PaymentByID(ctx, biz, h.ID); err == nil {
				item, err = s.searchPayment(r, p, withCustomer)
			}
		}
		if payd.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		items = append(items, item)
	}
	return items, nil
}

// searchPayment renders a payment hit as GET /payments does.
func (s *Server) searchPayment(r *http.Request, p *payd.Payment, withCustomer bool) (any, error) {
	items, err := s.paymentItems(r, []*payd.Payment{p}, withCustomer)
	if err != nil {
		return nil, err
	}
	return items[0], nil
}
