package api

import (
	"context"
	"net/url"

	"payd"
)

// Page sizes of spec 4.1 and 8.1.
const (
	defaultPageLimit = 25
	maxPageLimit     = 100
)

// page is the part of a list request that says which items to return: at
// most Limit of them, starting after the position After (nil for the first
// page). It remembers what the cursor was bound to, so that nextCursor binds
// the next one the same way.
type page struct {
	Limit int
	After []string

	codec    cursorCodec
	business string
	list     string
	filters  string
}

// parsePage reads limit and cursor from a list request's query. list names
// the list (such as "payments"); the cursor must come from the same list of
// the caller's business (ctx's call) under the same filters
// (canonicalFilters). Errors are invalid_request on field "limit" or
// "cursor", except a server without a cursor key.
func parsePage(ctx context.Context, q url.Values, codec cursorCodec, list string) (page, error) {
	p := page{Limit: defaultPageLimit, codec: codec, business: callerBusiness(ctx), list: list, filters: canonicalFilters(q)}
	limit, ok, err := onlyValue(q, "limit")
	if err != nil {
		return page{}, err
	}
	if ok {
		if p.Limit, ok = parseLimit(limit); !ok {
			return page{}, payd.FieldError("limit", "limit must be an integer from 1 to %d", maxPageLimit)
		}
	}
	cursor, ok, err := onlyValue(q, "cursor")
	if err != nil {
		return page{}, err
	}
	if ok {
		if p.After, err = codec.decode(cursor, p.business, list, p.filters); err != nil {
			return page{}, err
		}
	}
	return p, nil
}

// onlyValue returns the value of a query parameter that may appear at most
// once; a repeated one is refused rather than one copy silently winning.
func onlyValue(q url.Values, name string) (string, bool, error) {
	switch v := q[name]; len(v) {
	case 0:
		return "", false, nil
	case 1:
		return v[0], true, nil
	}
	return "", false, payd.FieldError(name, "%s may be given only once", name)
}

// parseLimit accepts decimal digits only (no sign, space or exponent) with a
// value from 1 to maxPageLimit.
func parseLimit(s string) (int, bool) {
	if s == "" || len(s) > 3 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, n >= 1 && n <= maxPageLimit
}

// nextCursor returns the cursor for the page after the item at position last,
// bound to the same list and filters as this page. Callers fetch Limit+1
// items to learn has_more and pass the position of the Limit-th.
func (p page) nextCursor(last []string) string {
	return p.codec.encode(p.business, p.list, p.filters, last)
}

// callerBusiness is the id of the business the request acts for; lists
// are only served to callers with one.
func callerBusiness(ctx context.Context) string {
	if biz := callOf(ctx).biz; biz != nil {
		return biz.ID
	}
	return ""
}
