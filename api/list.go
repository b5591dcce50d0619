package api

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"payd"
)

// GET /payments (spec 4.3, docs/listing.md).

// paymentListName binds cursors to this list.
const paymentListName = "payments"

// Limits on filter values, which the spec leaves open.
const (
	maxQueryLen      = 100 // as search's q (spec 8.1)
	maxFilterLen     = 255
	maxMetadataPairs = 10
)

// paymentListParams are the query parameters GET /payments takes, besides
// metadata[key].
var paymentListParams = []string{"q", "status", "rail", "reference", "customer_id", "link_id",
	"created_after", "created_before", "sort", "include", "limit", "cursor"}

// paymentList is the list envelope (spec 2.1) of GET /payments.
// StatusCounts is present only with include=status_counts.
type paymentList struct {
	Data         []any            `json:"data"`
	HasMore      bool             `json:"has_more"`
	NextCursor   *string          `json:"next_cursor"`
	StatusCounts map[string]int64 `json:"status_counts,omitempty"`
}

// paymentWithCustomer is a payment with include=customer: its customer, or
// null when it has none.
type paymentWithCustomer struct {
	payment
	Customer *customer `json:"customer"`
}

// listIncludes are the include= options of the payment list.
type listIncludes struct {
	customer, statusCounts bool
}

// listPayments serves GET /payments.
func (s *Server) listPayments(w http.ResponseWriter, r *http.Request) error {
	c := callOf(r.Context())
	v := r.URL.Query()
	f, inc, err := parsePaymentFilter(v)
	if err != nil {
		return err
	}
	if inc.customer && !c.key.Can(payd.AreaCustomers, payd.AccessRead) {
		return payd.Errorf(payd.ErrPermissionDenied, "include=customer needs a key that can read customers")
	}
	pg, err := parsePage(r.Context(), v, s.cursors, paymentListName)
	if err != nil {
		return err
	}
	if f.After, err = paymentPosition(pg.After, f.Sort); err != nil {
		return err
	}
	f.BusinessID, f.Limit = c.biz.ID, pg.Limit+1
	ps, err := s.store.ListPayments(r.Context(), f)
	if err != nil {
		return err
	}
	out := paymentList{Data: []any{}}
	if len(ps) > pg.Limit {
		ps = ps[:pg.Limit]
		next := pg.nextCursor(positionValues(payd.PositionOf(ps[len(ps)-1], f.Sort), f.Sort))
		out.HasMore, out.NextCursor = true, &next
	}
	if out.Data, err = s.paymentItems(r, ps, inc.customer); err != nil {
		return err
	}
	if inc.statusCounts {
		if out.StatusCounts, err = s.statusCounts(r, f); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// paymentItems renders a page, with each payment's customer when asked.
func (s *Server) paymentItems(r *http.Request, ps []*payd.Payment, withCustomer bool) ([]any, error) {
	items := make([]any, 0, len(ps))
	if !withCustomer {
		for _, p := range ps {
			items = append(items, s.toPayment(p))
		}
		return items, nil
	}
	var ids []string
	for _, p := range ps {
		if p.CustomerID != "" && !slices.Contains(ids, p.CustomerID) {
			ids = append(ids, p.CustomerID)
		}
	}
	cs := map[string]*payd.Customer{}
	if len(ids) > 0 {
		var err error
		if cs, err = s.store.CustomersByID(r.Context(), callOf(r.Context()).biz.ID, ids); err != nil {
			return nil, err
		}
	}
	for _, p := range ps {
		item := paymentWithCustomer{payment: s.toPayment(p)}
		if cst := cs[p.CustomerID]; cst != nil {
			w := toCustomer(cst)
			item.Customer = &w
		}
		items = append(items, item)
	}
	return items, nil
}

// statusCounts counts the list's payments per status, ignoring status.
func (s *Server) statusCounts(r *http.Request, f payd.PaymentFilter) (map[string]int64, error) {
	counts, err := s.store.PaymentStatusCounts(r.Context(), f)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(payd.PaymentStatuses))
	for _, st := range payd.PaymentStatuses {
		out[string(st)] = counts[st]
	}
	return out, nil
}

// positionValues is how a position goes into a cursor: the sort value in
// decimal (created_at in Unix microseconds, or amount), then the id.
func positionValues(p payd.PaymentPosition, s payd.PaymentSort) []string {
	if s.ByAmount() {
		return []string{strconv.FormatInt(p.Amount, 10), p.ID}
	}
	return []string{strconv.FormatInt(p.CreatedAt.UnixMicro(), 10), p.ID}
}

// paymentPosition reads a cursor's position back. A cursor is signed and
// bound to the sort, so a bad one here means a cursor from an older
// layout; it is still only the cursor's fault.
func paymentPosition(after []string, s payd.PaymentSort) (*payd.PaymentPosition, error) {
	if after == nil {
		return nil, nil
	}
	if len(after) != 2 || !payd.HasPrefix(after[1], payd.PrefixPayment) {
		return nil, cursorError("the cursor is malformed; pass next_cursor exactly as it was returned")
	}
	n, err := strconv.ParseInt(after[0], 10, 64)
	if err != nil {
		return nil, cursorError("the cursor is malformed; pass next_cursor exactly as it was returned")
	}
	if s.ByAmount() {
		return &payd.PaymentPosition{Amount: n, ID: after[1]}, nil
	}
	return &payd.PaymentPosition{CreatedAt: time.UnixMicro(n).UTC(), ID: after[1]}, nil
}

// parsePaymentFilter reads the filters, sort and include of GET /payments.
// Every problem is invalid_request naming the parameter; unknown and
// repeated parameters and empty values are refused rather than ignored, so
// that a misspelt filter cannot silently list everything.
func parsePaymentFilter(v url.Values) (payd.PaymentFilter, listIncludes, error) {
	f := payd.PaymentFilter{Sort: payd.SortCreatedDesc}
	if err := checkParams(v); err != nil {
		return f, listIncludes{}, err
	}
	var inc listIncludes
	steps := []func() error{
		func() (err error) { f.Query, err = textParam(v, "q", maxQueryLen); return err },
		func() (err error) { f.Status, err = enumParam(v, "status", payd.PaymentStatuses); return err },
		func() (err error) {
			f.Rail, err = enumParam(v, "rail", []payd.Rail{payd.RailCrypto, payd.RailCard})
			return err
		},
		func() (err error) { f.Reference, err = optText(v, "reference", maxFilterLen); return err },
		func() (err error) { f.CustomerID, err = optText(v, "customer_id", maxFilterLen); return err },
		func() (err error) { f.LinkID, err = optText(v, "link_id", maxFilterLen); return err },
		func() (err error) { f.Metadata, err = metadataParams(v); return err },
		func() (err error) { f.CreatedAfter, err = timeParam(v, "created_after"); return err },
		func() (err error) { f.CreatedBefore, err = timeParam(v, "created_before"); return err },
		func() (err error) { f.Sort, err = sortParam(v); return err },
		func() (err error) { inc, err = includeParam(v); return err },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return f, listIncludes{}, err
		}
	}
	return f, inc, nil
}

// checkParams refuses unknown parameters, in name order so that the error
// is the same for the same request.
func checkParams(v url.Values) error {
	names := make([]string, 0, len(v))
	for name := range v {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !slices.Contains(paymentListParams, name) && !strings.HasPrefix(name, "metadata[") {
			return unknownParam(name)
		}
	}
	return nil
}

// unknownParam refuses a query parameter no route takes; one with an
// empty name ("?=x") is blamed on the query as a whole.
func unknownParam(name string) error {
	field := name
	if field == "" {
		field = "query"
	}
	return payd.FieldError(field, "unknown query parameter %q", name)
}

// optText returns a parameter given at most once, not empty, valid UTF-8
// without NUL, and at most max characters; nil when absent.
func optText(v url.Values, name string, max int) (*string, error) {
	s, ok, err := onlyValue(v, name)
	if err != nil || !ok {
		return nil, err
	}
	switch {
	case s == "":
		return nil, payd.FieldError(name, "%s is empty; leave it out to not filter on it", name)
	case !utf8.ValidString(s) || strings.ContainsRune(s, 0):
		return nil, payd.FieldError(name, "%s must be UTF-8 text without NUL characters", name)
	case utf8.RuneCountInString(s) > max:
		return nil, payd.FieldError(name, "%s is longer than %d characters", name, max)
	}
	return &s, nil
}

// textParam is optText for a parameter whose absence is "".
func textParam(v url.Values, name string, max int) (string, error) {
	s, err := optText(v, name, max)
	if s == nil {
		return "", err
	}
	return *s, err
}

// enumParam reads a parameter that must be one of allowed.
func enumParam[T ~string](v url.Values, name string, allowed []T) (*T, error) {
	s, err := optText(v, name, maxFilterLen)
	if s == nil || err != nil {
		return nil, err
	}
	if !slices.Contains(allowed, T(*s)) {
		return nil, payd.FieldError(name, "%s must be one of %s", name, joinStrings(allowed))
	}
	t := T(*s)
	return &t, nil
}

func joinStrings[T ~string](ts []T) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}

// timeParam reads an ISO 8601 timestamp (RFC 3339, with Z or an offset;
// "+" must be sent as %2B) or a date, which means its midnight UTC.
func timeParam(v url.Values, name string) (*time.Time, error) {
	s, err := optText(v, name, maxFilterLen)
	if s == nil || err != nil {
		return nil, err
	}
	t, err := time.Parse(time.RFC3339Nano, *s)
	if err != nil {
		t, err = time.Parse(time.DateOnly, *s)
	}
	if err != nil {
		return nil, payd.FieldError(name, "%s must be an ISO 8601 timestamp such as 2026-11-22T10:00:00Z, or a date such as 2026-11-22", name)
	}
	t = t.UTC()
	return &t, nil
}

// sortParam reads sort; the default is newest first.
func sortParam(v url.Values) (payd.PaymentSort, error) {
	sorts := []payd.PaymentSort{payd.SortCreatedDesc, payd.SortCreatedAsc, payd.SortAmountDesc, payd.SortAmountAsc}
	s, err := enumParam(v, "sort", sorts)
	if s == nil || err != nil {
		return payd.SortCreatedDesc, err
	}
	return *s, nil
}

// includeParam reads include: customer, status_counts or both, comma
// separated.
func includeParam(v url.Values) (listIncludes, error) {
	var inc listIncludes
	s, err := optText(v, "include", maxFilterLen)
	if s == nil || err != nil {
		return inc, err
	}
	for _, item := range strings.Split(*s, ",") {
		switch item {
		case "customer":
			inc.customer = true
		case "status_counts":
			inc.statusCounts = true
		default:
			return inc, payd.FieldError("include", "include takes customer, status_counts or both, comma separated; not %q", item)
		}
	}
	return inc, nil
}

// metadataParams reads every metadata[key]=value; all must match. The
// error names the parameter as sent, such as metadata[order_id].
func metadataParams(v url.Values) ([]payd.MetadataPair, error) {
	var names []string
	for name := range v {
		if strings.HasPrefix(name, "metadata[") {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	if len(names) > maxMetadataPairs {
		return nil, payd.FieldError(names[maxMetadataPairs], "at most %d metadata filters may be given", maxMetadataPairs)
	}
	pairs := make([]payd.MetadataPair, 0, len(names))
	for _, name := range names {
		key, ok := strings.CutSuffix(strings.TrimPrefix(name, "metadata["), "]")
		if !ok || key == "" || strings.ContainsAny(key, "[]") || !utf8.ValidString(key) || strings.ContainsRune(key, 0) {
			return nil, payd.FieldError(name, "a metadata filter is metadata[key]=value with a non-empty key")
		}
		val, err := optText(v, name, maxFilterLen)
		if err != nil {
			return nil, err
		}
		pairs = append(pairs, payd.MetadataPair{Key: key, Value: *val})
	}
	return pairs, nil
}
