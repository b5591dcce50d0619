package web_test

import (
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"payd/clock"
)

// underpay opens a checkout for BTC on link (through the public API) and
// sends too little to it; the caller mines.
func underpay(m *merchant, link map[string]any, key, email string) string {
	m.t.Helper()
	chk := m.s.must("POST", "/checkouts", "", map[string]any{"link_code": link["code"], "rail": "crypto",
		"asset": "BTC", "network": "bitcoin", "email": email}, "Idempotency-Key", key)
	m.s.send(chk, "0.0001")
	return chk["payment_id"].(string)
}

// TestDashboardHomeAndPayments walks the home and the payments: three
// link payments are underpaid on the devnet, an API payment is made, and a
// webhook endpoint nobody answers at fails; the home lists the underpaid
// payments and the endpoint as needing attention and draws the figures;
// the list finds a payment by search and by filters, and says a refused
// filter as a sentence; one underpaid payment is accepted from its page,
// and accepting another after it changed behind the page's back is
// refused with a sentence; the home then shows the volume; the rest of
// the third is requested and the API payment canceled; the CSV export
// holds the filtered list, quoted and guarded against formulas.
func TestDashboardHomeAndPayments(t *testing.T) {
	m := newMerchant(t, desktop)
	// An endpoint nobody answers at: its deliveries fail.
	m.s.must("POST", "/webhooks", m.s.key, map[string]any{"url": "http://127.0.0.1:9/payd-hook",
		"event_types": []string{"payment.created"}})
	link := m.s.link(nil)
	first := underpay(m, link, "chk-1", "grace@example.com")
	second := underpay(m, link, "chk-2", "alan@example.com")
	third := underpay(m, link, "chk-3", "edsger@example.com")
	m.s.mine("bitcoin", 2)
	m.s.waitPayment(third, "underpaid")
	m.s.waitPayment(first, "underpaid")
	m.s.waitPayment(second, "underpaid")
	api := m.s.payment(map[string]any{"reference": "INV-77", "description": `=HYPERLINK("x"), "quoted"`,
		"metadata": map[string]any{"order": "77"}})

	// Home.
	clk := clock.Real{}
	for end := clk.Now().Add(15 * time.Second); ; <-clk.NewTimer(200 * time.Millisecond).C() {
		_, b := m.s.call("GET", "/webhook-deliveries?status=retrying", m.s.key, nil)
		if strings.Contains(string(b), `"webhook_id"`) {
			break
		}
		if clk.Now().After(end) {
			t.Fatalf("no delivery is retrying: %s", b)
		}
	}
	m.visit("/")
	if got := m.text("#failing-hooks"); !strings.Contains(got, "http://127.0.0.1:9/payd-hook") {
		t.Fatalf("failing endpoints: %q", got)
	}
	if got := m.text("#attention"); !strings.Contains(got, "Underpaid") || !strings.Contains(got, "The Go Programming Language") {
		t.Fatalf("needs attention: %q", got)
	}
	if n := evalAs[int](m.browser, `document.querySelectorAll("#attention tbody tr").length`); n != 3 {
		t.Fatalf("%d payments need attention, want 3", n)
	}
	if got := m.text("#by-status"); !strings.Contains(got, "Underpaid") {
		t.Fatalf("by status: %q", got)
	}
	if n := evalAs[int](m.browser, `document.querySelectorAll("#chart-table tbody tr").length`); n != 30 {
		t.Fatalf("chart table has %d days, want 30", n)
	}
	if evalAs[string](m.browser, `document.querySelector("svg.chart").getAttribute("role")`) != "img" {
		t.Fatal("the chart is not an image to assistive technology")
	}
	m.review("home")

	// The list, its search and its filters.
	m.visit("/payments")
	if n := evalAs[int](m.browser, `document.querySelectorAll("#payments tbody tr").length`); n != 4 {
		t.Fatalf("%d payments listed, want 4", n)
	}
	if got := m.text(".status-tabs"); !strings.Contains(got, "Underpaid 3") || !strings.Contains(got, "All 4") {
		t.Fatalf("status counts: %q", got)
	}
	m.review("payments")
	m.fill("#q", "alan@example.com")
	m.submit("#apply")
	if n := evalAs[int](m.browser, `document.querySelectorAll("#payments tbody tr").length`); n != 1 {
		t.Fatalf("search found %d payments, want 1", n)
	}
	if got := m.text("#payments"); !strings.Contains(got, second) {
		t.Fatalf("search found %q, want %s", got, second)
	}
	m.visit("/payments?reference=INV-77")
	if got := m.text("#payments"); !strings.Contains(got, api["id"].(string)) || strings.Contains(got, first) {
		t.Fatalf("reference filter: %q", got)
	}
	m.visit("/payments?created_after=someday")
	if got := m.text("#form-error"); !strings.HasPrefix(got, "“Created from” must be") {
		t.Fatalf("a refused filter: %q", got)
	}
	m.visit("/payments?status=failed")
	if got := m.text("#no-payments"); got != "No payment matches these filters." {
		t.Fatalf("empty filter: %q", got)
	}

	// A payment's page: accept the found one.
	m.visit("/payments?q=alan%40example.com")
	m.click("#payments tbody a")
	m.run(chromedpWait("#accept"))
	if got := m.text("#payment-status"); got != "Underpaid" {
		t.Fatalf("status %q", got)
	}
	if got := m.text("#customer-facts"); !strings.Contains(got, "alan@example.com") {
		t.Fatalf("customer: %q", got)
	}
	if got := m.text("#timeline"); !strings.Contains(got, "Underpaid") || !strings.Contains(got, "Created") {
		t.Fatalf("timeline: %q", got)
	}
	if evalAs[string](m.browser, `document.querySelector("#accept").form.getAttribute("data-confirm") || ""`) == "" {
		t.Fatal("accept asks for no confirmation")
	}
	m.review("payment-underpaid")
	evalAs[bool](m.browser, `(window.confirm = () => true, true)`)
	m.submit("#accept")
	if got := m.text("#flash"); got != "The payment is accepted as paid." {
		t.Fatalf("flash %q", got)
	}
	if got := m.text("#payment-status"); got != "Succeeded" {
		t.Fatalf("after accept: %q", got)
	}

	// The other one changes behind the page: the refusal is a sentence.
	m.visit("/payments/" + first)
	m.s.must("POST", "/payments/"+first+"/accept", m.s.key, map[string]any{})
	evalAs[bool](m.browser, `(window.confirm = () => true, true)`)
	m.submit("#accept")
	if got := m.text("#form-error"); !strings.Contains(got, "can be accepted; this one has changed") {
		t.Fatalf("refusal %q", got)
	}
	m.review("payment-refused")

	// The home counts the accepted payments' volume, and draws it.
	m.visit("/")
	if got := m.text("#tile-today .figure"); got == "0.00 USD" {
		t.Fatalf("today's volume %q after two payments were accepted", got)
	}
	if n := evalAs[int](m.browser, `[...document.querySelectorAll("svg.chart rect.bar")].filter(r => +r.getAttribute("height") > 0).length`); n != 1 {
		t.Fatalf("%d days have a bar, want 1", n)
	}
	m.review("home-volume")

	// Ask for the rest of the third, once its quote has ended (a live
	// quote still takes the rest); cancel the API payment.
	m.s.advance(16 * 60)
	m.visit("/payments/" + third)
	evalAs[bool](m.browser, `(window.confirm = () => true, true)`)
	m.submit("#request-remainder")
	if got := m.text("#remainder-url"); !strings.Contains(got, "http") {
		t.Fatalf("remainder: %q", got)
	}
	m.review("payment-remainder")
	m.visit("/payments/" + api["id"].(string))
	evalAs[bool](m.browser, `(window.confirm = () => true, true)`)
	m.submit("#cancel")
	if got := m.text("#flash"); got != "The payment is canceled." {
		t.Fatalf("cancel: %q", got)
	}

	// The CSV export of a filtered list.
	type file struct{ Disposition, Type, Body string }
	got := evalAs[file](m.browser, `fetch("/dashboard/`+m.biz+`/payments.csv?reference=INV-77").then(async r =>
		({disposition: r.headers.get("content-disposition"), type: r.headers.get("content-type"), body: await r.text()}))`)
	if !strings.HasPrefix(got.Disposition, "attachment;") || !strings.HasPrefix(got.Type, "text/csv") {
		t.Fatalf("export headers %q %q", got.Disposition, got.Type)
	}
	rows, err := csv.NewReader(strings.NewReader(got.Body)).ReadAll()
	if err != nil {
		t.Fatalf("export: %v\n%s", err, got.Body)
	}
	if len(rows) != 2 || rows[0][0] != "id" || rows[1][0] != api["id"] {
		t.Fatalf("export rows: %q", rows)
	}
	col := map[string]string{}
	for i, name := range rows[0] {
		col[name] = rows[1][i]
	}
	if col["description"] != `'=HYPERLINK("x"), "quoted"` || col["amount"] != "42.00" || col["reference"] != "INV-77" ||
		col["metadata"] != "order=77" || col["status"] != "failed" {
		t.Fatalf("export row: %v", col)
	}
	m.checkConsole()
}

// TestDashboardPaymentsExport exports a seeded business's 250 payments
// (three pages of the API's) and one filtered by status: every payment,
// once, with a header row, as an attachment, every cell that a
// spreadsheet would read as a formula guarded.
func TestDashboardPaymentsExport(t *testing.T) {
	sd := seedDashboard(t, 250)
	st, body := sd.send("GET", "/dashboard/"+sd.biz+"/payments.csv", nil)
	if st != 200 || !strings.HasPrefix(sd.header.Get("Content-Disposition"), `attachment; filename="payments-`) ||
		sd.header.Get("Content-Type") != "text/csv; charset=utf-8" {
		t.Fatalf("export: %d %v", st, sd.header)
	}
	rows, err := csv.NewReader(strings.NewReader(string(body))).ReadAll()
	if err != nil || len(rows) != sd.payments+1 {
		t.Fatalf("%d rows for %d payments: %v", len(rows), sd.payments, err)
	}
	seen := map[string]bool{}
	for _, r := range rows[1:] {
		if seen[r[0]] || !strings.HasPrefix(r[0], "pmt_") {
			t.Fatalf("row %q repeated or not a payment", r)
		}
		seen[r[0]] = true
		for _, c := range r {
			if c != "" && strings.ContainsRune("=+-@", rune(c[0])) {
				t.Fatalf("unguarded cell %q", c)
			}
		}
	}
	_, body = sd.send("GET", "/dashboard/"+sd.biz+"/payments.csv?status=succeeded", nil)
	rows, _ = csv.NewReader(strings.NewReader(string(body))).ReadAll()
	for _, r := range rows[1:] {
		if r[2] != "succeeded" {
			t.Fatalf("status filter let %q through", r)
		}
	}
	if len(rows) < 2 || len(rows) > sd.payments {
		t.Fatalf("%d succeeded rows", len(rows)-1)
	}
}
