package web

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"payd/money"
)

// The payments (/dashboard/{biz}/payments): the list with search, the
// filters of spec 4.3 as a GET form, status counts and cursor paging; its
// CSV export; and one payment's page with its actions.

// dashPayment is the part of a payment (GET /payments/{id}) the pages
// show.
type dashPayment struct {
	ID             string `json:"id"`
	Code           string `json:"code"`
	Status         string `json:"status"`
	Amount         int64  `json:"amount"`
	Currency       string `json:"currency"`
	CustomerFee    int64  `json:"customer_fee"`
	AmountReceived int64  `json:"amount_received"`
	Reporting      struct {
		Amount         int64  `json:"amount"`
		Fee            *int64 `json:"fee"`
		TransactionFee int64  `json:"transaction_fee"`
		Net            int64  `json:"net"`
	} `json:"reporting"`
	Method *struct {
		Rail           string  `json:"rail"`
		Asset          *string `json:"asset"`
		Network        *string `json:"network"`
		Amount         *string `json:"amount"`
		ExpectedAmount *string `json:"expected_amount"`
		OverpaidAmount *string `json:"overpaid_amount"`
		FromAddress    *string `json:"from_address"`
		TxHash         *string `json:"tx_hash"`
		ExplorerURL    *string `json:"explorer_url"`
		Card           *struct {
			Provider          string  `json:"provider"`
			Status            string  `json:"status"`
			Brand             *string `json:"brand"`
			Last4             *string `json:"last4"`
			Country           *string `json:"country"`
			ProviderReference *string `json:"provider_reference"`
		} `json:"card"`
	} `json:"method"`
	Settlement *struct {
		Destination string  `json:"destination"`
		Asset       string  `json:"asset"`
		Network     string  `json:"network"`
		Amount      string  `json:"amount"`
		Address     *string `json:"address"`
		TxHash      *string `json:"tx_hash"`
		ExplorerURL *string `json:"explorer_url"`
	} `json:"settlement"`
	CustomerID     *string           `json:"customer_id"`
	LinkID         *string           `json:"link_id"`
	URL            *string           `json:"url"`
	Reference      *string           `json:"reference"`
	Metadata       map[string]string `json:"metadata"`
	Description    string            `json:"description"`
	FailureMessage *string           `json:"failure_message"`
	ExpiresAt      *string           `json:"expires_at"`
	CreatedAt      string            `json:"created_at"`
	Customer       *dashCustomer     `json:"customer"`
	Events         []struct {
		Type      string          `json:"type"`
		CreatedAt string          `json:"created_at"`
		Data      json.RawMessage `json:"data"`
	} `json:"events"`
}

// dashPaymentList is a page of GET /payments.
type dashPaymentList struct {
	dashList[dashPayment]
	StatusCounts map[string]int64 `json:"status_counts"`
}

// dashPaymentRow is a payment as a row of a table.
type dashPaymentRow struct {
	ID, Href, Amount, USD, Status, StatusLabel, Tone, Rail, Who, Description, Created, CreatedText string
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// paymentRow renders a payment for a table.
func (d *dashReq) paymentRow(p *dashPayment) dashPaymentRow {
	r := dashPaymentRow{ID: p.ID, Href: d.bizPath("/payments/" + url.PathEscape(p.ID)),
		Amount: priceText(p.Amount, p.Currency), USD: usdText(p.Reporting.Amount), Status: p.Status,
		StatusLabel: statusLabel(p.Status), Tone: statusTone(p.Status), Description: p.Description,
		Created: p.CreatedAt, CreatedText: utcText(p.CreatedAt)}
	if p.Method != nil {
		r.Rail = railLabel(p.Method.Rail)
	}
	if c := p.Customer; c != nil {
		r.Who = c.Email
		if c.Name != "" {
			r.Who = c.Name + " (" + c.Email + ")"
		}
	}
	return r
}

// paymentFilters are the list's filters, as the form and the address
// carry them. Metadata is one key and value.
var paymentFilters = []string{"q", "status", "rail", "created_after", "created_before", "customer_id",
	"link_id", "reference", "meta_key", "meta_value"}

// paymentsPage is the list's data.
type paymentsPage struct {
	Filter    map[string]string
	Filtered  bool
	Rows      []dashPaymentRow
	Counts    []homeCount
	All       int64
	AllHref   string
	Next, CSV string
	First     string // the first page, when this is a later one
	Statuses  []homeCount
	Rails     []homeRail
	Refused   bool
}

// filterLabels name the filters as the form does, for a refusal's
// sentence.
var filterLabels = map[string]string{"q": "Search", "created_after": "Created from", "created_before": "Created before",
	"customer_id": "Customer id", "link_id": "Payment link id", "reference": "Reference", "status": "Status", "rail": "Rail"}

// listQuery turns the page's address into GET /payments's parameters.
func listQuery(in url.Values) (filter map[string]string, api url.Values) {
	filter, api = map[string]string{}, url.Values{}
	for _, k := range paymentFilters {
		if v := strings.TrimSpace(in.Get(k)); v != "" {
			filter[k] = v
		}
	}
	for k, v := range filter {
		if !strings.HasPrefix(k, "meta_") {
			api.Set(k, v)
		}
	}
	if k := filter["meta_key"]; k != "" {
		api.Set("metadata["+k+"]", filter["meta_value"])
	}
	return filter, api
}

// showPayments serves GET /dashboard/{biz}/payments.
func (h *Handler) showPayments(d *dashReq) {
	in := d.r.URL.Query()
	filter, q := listQuery(in)
	p := paymentsPage{Filter: filter, Filtered: len(filter) > 0}
	keep := url.Values{}
	for k, v := range filter {
		keep.Set(k, v)
	}
	base := d.bizPath("/payments")
	p.CSV = d.bizPath("/payments.csv") + query(keep)
	q.Set("include", "customer,status_counts")
	q.Set("limit", "25")
	if c := in.Get("cursor"); c != "" {
		q.Set("cursor", c)
		p.First = base + query(keep)
	}
	for _, st := range dashStatuses {
		p.Statuses = append(p.Statuses, homeCount{Status: st, Label: statusLabel(st)})
	}
	for _, r := range []string{"crypto", "card"} {
		p.Rails = append(p.Rails, homeRail{Rail: r, Label: railLabel(r)})
	}
	var list dashPaymentList
	status := http.StatusOK
	err := d.call("GET", "/payments?"+q.Encode(), nil, whole{&list})
	if denied(err) { // a role that may not read customers lists without them
		q.Set("include", "status_counts")
		err = d.call("GET", "/payments?"+q.Encode(), nil, whole{&list})
	}
	if err != nil {
		if !d.refuse(err) {
			return
		}
		p.Refused, status = true, d.status(err)
		var ae *apiError
		if errors.As(err, &ae) && ae.Code == "invalid_request" {
			if label, ok := filterLabels[ae.Field]; ok && strings.HasPrefix(ae.Message, ae.Field) {
				d.page.Error = "“" + label + "”" + strings.TrimSuffix(strings.TrimPrefix(ae.Message, ae.Field), ".") + "."
			}
		}
	}
	for i := range list.Data {
		p.Rows = append(p.Rows, d.paymentRow(&list.Data[i]))
	}
	if list.StatusCounts != nil {
		tab := url.Values{}
		for k, v := range keep {
			if k != "status" {
				tab[k] = v
			}
		}
		p.AllHref = base + query(tab)
		for _, st := range dashStatuses {
			tab.Set("status", st)
			p.Counts = append(p.Counts, homeCount{Status: st, Label: statusLabel(st), Count: list.StatusCounts[st],
				Href: base + query(tab)})
			p.All += list.StatusCounts[st]
		}
	}
	if cursor := list.next(); cursor != "" {
		next := url.Values{}
		for k, v := range keep {
			next[k] = v
		}
		next.Set("cursor", cursor)
		p.Next = base + query(next)
	}
	d.page.Title, d.page.Section, d.page.Data = "Payments", "payments", p
	d.render(status, "dash/payments.html")
}

// csvColumns are the export's columns.
var csvColumns = []string{"id", "created_at", "status", "amount", "currency", "amount_usd", "fee_usd", "net_usd",
	"rail", "asset", "network", "coin_amount", "tx_hash", "customer_id", "customer_email", "customer_name",
	"link_id", "reference", "description", "metadata"}

// exportPayments serves GET /dashboard/{biz}/payments.csv: every page of
// the filtered list, read 100 at a time through the API and streamed.
func (h *Handler) exportPayments(d *dashReq) {
	_, q := listQuery(d.r.URL.Query())
	q.Set("include", "customer")
	q.Set("limit", "100")
	var list dashPaymentList
	err := d.call("GET", "/payments?"+q.Encode(), nil, whole{&list})
	if denied(err) { // a role that may not read customers exports without them
		q.Del("include")
		err = d.call("GET", "/payments?"+q.Encode(), nil, whole{&list})
	}
	if err != nil {
		d.fail(err)
		return
	}
	w := d.w
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="payments-`+d.biz+`.csv"`)
	w.WriteHeader(http.StatusOK)
	cw := csv.NewWriter(w)
	_ = cw.Write(csvColumns)
	fl, _ := w.(http.Flusher)
	for {
		for i := range list.Data {
			_ = cw.Write(csvRow(&list.Data[i]))
		}
		cw.Flush()
		if fl != nil {
			fl.Flush()
		}
		cursor := list.next()
		if cursor == "" || cw.Error() != nil {
			return
		}
		q.Set("cursor", cursor)
		list = dashPaymentList{}
		if err := d.call("GET", "/payments?"+q.Encode(), nil, whole{&list}); err != nil {
			// The header is sent: the file ends with a line that says so.
			_ = cw.Write([]string{"# the export stopped: " + err.Error()})
			cw.Flush()
			return
		}
	}
}

// csvRow is one payment as the export's cells.
func csvRow(p *dashPayment) []string {
	cur := money.Currency(p.Currency)
	var rail, asset, network, coin, tx, cid, email, name, fee, meta string
	if m := p.Method; m != nil {
		rail, asset, network, coin, tx = m.Rail, str(m.Asset), str(m.Network), str(m.Amount), str(m.TxHash)
	}
	if p.CustomerID != nil {
		cid = *p.CustomerID
	}
	if c := p.Customer; c != nil {
		email, name = c.Email, c.Name
	}
	if p.Reporting.Fee != nil {
		fee = money.Currency("USD").Format(*p.Reporting.Fee)
	}
	if len(p.Metadata) > 0 {
		keys := make([]string, 0, len(p.Metadata))
		for k := range p.Metadata {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + p.Metadata[k]
		}
		meta = strings.Join(parts, "; ")
	}
	row := []string{p.ID, p.CreatedAt, p.Status, cur.Format(p.Amount), p.Currency,
		money.Currency("USD").Format(p.Reporting.Amount), fee, money.Currency("USD").Format(p.Reporting.Net),
		rail, asset, network, coin, tx, cid, email, name, str(p.LinkID), str(p.Reference), p.Description, meta}
	for i, c := range row {
		row[i] = csvSafe(c)
	}
	return row
}

// csvSafe keeps a spreadsheet from reading a cell as a formula: a cell
// starting with = + - @ (or a tab or carriage return, which some read the
// same way) gets a leading apostrophe.
func csvSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// paymentPage is one payment's page.
type paymentPage struct {
	P                   *dashPayment
	Row                 dashPaymentRow
	Received, CustFee   string
	Fee, Net            string
	Timeline            []timelineEntry
	Metadata            []formField
	Customer            *dashCustomer
	CustomerHref        string
	IdemKey             string
	CanAccept           bool
	CanCancel           bool
	CanRemainder        bool
	RemainderURL        string
	Expires, LinkHref   string
	MethodAsset         string
	SettlementExplorer  string
	MethodExplorer      string
	SettlementTx        string
	SettlementAddress   string
	SettlementAmount    string
	SettlementAsset     string
	SettlementDestLabel string
}

type timelineEntry struct{ At, What string }

// eventText says a payment's history entry for people.
var eventText = map[string]string{
	"created":             "Created",
	"method_selected":     "The customer chose how to pay",
	"detected":            "A transfer was seen",
	"confirmation":        "The transfer confirmed",
	"succeeded":           "Succeeded",
	"underpaid":           "Underpaid: less than the price arrived",
	"needs_review":        "Needs review",
	"expired":             "The quote expired",
	"remainder_requested": "The rest was requested",
	"canceled":            "Canceled by the business",
	"accepted":            "Accepted as paid by the business",
	"dropped":             "The transfer was dropped",
	"funds_received":      "Funds received",
}

// loadPayment reads the payment of the page's address into a page.
func (d *dashReq) loadPayment() (*paymentPage, bool) {
	id := d.r.PathValue("id")
	var p dashPayment
	if err := d.call("GET", "/payments/"+url.PathEscape(id), nil, &p); err != nil {
		d.fail(err)
		return nil, false
	}
	pg := &paymentPage{P: &p, Row: d.paymentRow(&p), IdemKey: newIdemKey(),
		Received: priceText(p.AmountReceived, p.Currency), CustFee: priceText(p.CustomerFee, p.Currency),
		Net: usdText(p.Reporting.Net)}
	if p.Reporting.Fee != nil {
		pg.Fee = usdText(*p.Reporting.Fee)
	}
	for i := len(p.Events) - 1; i >= 0; i-- {
		e := p.Events[i]
		what, ok := eventText[e.Type]
		if !ok {
			what = sentence(strings.ReplaceAll(e.Type, "_", " "))
		}
		var conf struct{ Current, Required int }
		if e.Type == "confirmation" && json.Unmarshal(e.Data, &conf) == nil && conf.Required > 0 {
			what = "Confirmation " + strconv.Itoa(conf.Current) + " of " + strconv.Itoa(conf.Required)
		}
		pg.Timeline = append(pg.Timeline, timelineEntry{At: utcText(e.CreatedAt), What: what})
	}
	keys := make([]string, 0, len(p.Metadata))
	for k := range p.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		pg.Metadata = append(pg.Metadata, formField{k, p.Metadata[k]})
	}
	if p.CustomerID != nil {
		var c dashCustomer
		if err := d.call("GET", "/customers/"+url.PathEscape(*p.CustomerID), nil, &c); err == nil {
			pg.Customer = &c
		} else {
			pg.Customer = &dashCustomer{ID: *p.CustomerID}
		}
		pg.CustomerHref = d.bizPath("/payments?customer_id=" + url.QueryEscape(*p.CustomerID))
	}
	if p.LinkID != nil {
		pg.LinkHref = d.bizPath("/payments?link_id=" + url.QueryEscape(*p.LinkID))
	}
	if p.ExpiresAt != nil {
		pg.Expires = utcText(*p.ExpiresAt)
	}
	if m := p.Method; m != nil {
		pg.MethodAsset = strings.TrimSpace(str(m.Asset) + " on " + str(m.Network))
		if m.Asset == nil {
			pg.MethodAsset = ""
		}
		pg.MethodExplorer = safeHTTP(str(m.ExplorerURL))
	}
	if s := p.Settlement; s != nil {
		pg.SettlementExplorer = safeHTTP(str(s.ExplorerURL))
		pg.SettlementTx, pg.SettlementAddress = str(s.TxHash), str(s.Address)
		pg.SettlementAmount, pg.SettlementAsset = s.Amount, s.Asset+" on "+s.Network
		pg.SettlementDestLabel = s.Destination
	}
	// Owners and admins change payments (account.go's Permissions); the
	// others see no buttons the API would refuse them.
	writer := d.page.Biz.Role == "owner" || d.page.Biz.Role == "admin"
	pg.CanAccept = writer && (p.Status == "underpaid" || p.Status == "needs_review")
	pg.CanRemainder = writer && p.Status == "underpaid"
	// A transfer seen but not yet confirmed makes the API refuse
	// (payment_in_flight): the button is not offered then.
	inFlight := p.Method != nil && (p.Method.TxHash != nil ||
		p.Method.Card != nil && (p.Method.Card.Status == "processing" || p.Method.Card.Status == "delivered"))
	pg.CanCancel = writer && p.Status == "pending" && p.LinkID == nil && p.AmountReceived == 0 && !inFlight
	return pg, true
}

// safeHTTP keeps an address only if it is http(s), for an href.
func safeHTTP(s string) string {
	if strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://") {
		return s
	}
	return ""
}

// showDashPayment serves GET /dashboard/{biz}/payments/{id}.
func (h *Handler) showDashPayment(d *dashReq) {
	pg, ok := d.loadPayment()
	if !ok {
		return
	}
	d.renderPayment(http.StatusOK, pg)
}

func (d *dashReq) renderPayment(status int, pg *paymentPage) {
	d.page.Title, d.page.Section, d.page.Data = "Payment "+pg.P.ID, "payments", pg
	d.render(status, "dash/payment.html")
}

// paymentAction serves the POSTs of a payment's page: accept, cancel and
// request-remainder. A refusal shows the page again with the sentence.
func (h *Handler) paymentAction(action, done string) dashHandler {
	return func(d *dashReq) {
		id := d.r.PathValue("id")
		hd := http.Header{}
		if action == "request-remainder" {
			key := d.form.Get("idem")
			if key == "" {
				key = newIdemKey()
			}
			hd.Set("Idempotency-Key", key)
		}
		var rem struct {
			URL string `json:"url"`
		}
		err := d.callWith("POST", "/payments/"+url.PathEscape(id)+"/"+action, hd, map[string]any{}, &rem)
		if err != nil {
			if !d.refuse(err) {
				return
			}
			pg, ok := d.loadPayment()
			if !ok {
				return
			}
			d.renderPayment(d.status(err), pg)
			return
		}
		if action == "request-remainder" {
			// The new page's address is shown in this answer, to be sent to
			// the customer.
			pg, ok := d.loadPayment()
			if !ok {
				return
			}
			pg.RemainderURL = safeHTTP(rem.URL)
			d.page.Flash = dashFlash[done]
			d.renderPayment(http.StatusOK, pg)
			return
		}
		d.redirect(d.bizPath("/payments/"+url.PathEscape(id)), done)
	}
}
