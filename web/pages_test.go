package web_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	qrcode "github.com/skip2/go-qrcode"
)

// payOnPage picks a coin on an open page, checks the quote the page shows
// against the API's checkout (amount, address, the QR code decoded in the
// page, the wallet link), pays it on the devnet and watches the page turn
// to paid without a reload: it sends amount ("" for the quoted one) and
// waits for the state final. It returns the checkout.
func payOnPage(t *testing.T, s *paydServer, b *browser, pageURL, option, amount, final string) map[string]any {
	t.Helper()
	res, err := http.Get(pageURL)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("%s: %d", pageURL, res.StatusCode)
	}
	checkSecurityHeaders(t, res.Header)
	b.open(pageURL)
	b.checkNoThirdParty()
	b.screenshot("choose")
	b.checkA11y()
	b.click(fmt.Sprintf(`input[name="option"][value="%s"]`, option))
	b.click(`form.choose button[type="submit"]`)
	b.run(chromedpWait(`#quote-address`))
	chk := s.checkout(checkoutID(t, b.location()))
	q := chk["crypto"].(map[string]any)
	if got := b.text("#quote-address"); got != q["address"] {
		t.Fatalf("address %q, want %q", got, q["address"])
	}
	if got := b.text("#quote-amount"); got != q["amount"] {
		t.Fatalf("amount %q, want %q", got, q["amount"])
	}
	if got := b.attr("#wallet-link", "href"); got != q["payment_uri"] {
		t.Fatalf("wallet link %q, want %q", got, q["payment_uri"])
	}
	// The image is the QR code of exactly the payment URI (checked without
	// npm too), and it decodes to it as the page shows it.
	png, err := qrcode.Encode(q["payment_uri"].(string), qrcode.Medium, -6)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.attr("#quote-qr", "src"); got != "data:image/png;base64,"+base64.StdEncoding.EncodeToString(png) {
		t.Fatalf("the QR image is not the code of %q", q["payment_uri"])
	}
	if got := b.decodeQR(); got != "" && got != q["payment_uri"] {
		t.Fatalf("QR code holds %q, want %q", got, q["payment_uri"])
	}
	if !strings.Contains(b.text(".warning"), "network") {
		t.Fatalf("no network warning: %q", b.text(".warning"))
	}
	// On solana only the URI carries the Solana Pay reference to a wallet.
	if hasRef := evalAs[bool](b, `!!document.getElementById("reference-warning")`); hasRef != (q["network"] == "solana") {
		t.Fatalf("reference warning shown: %v on %s", hasRef, q["network"])
	}
	b.screenshot("quote")
	b.checkFits()
	b.checkA11y()
	b.markPage()
	if amount == "" {
		amount = q["amount"].(string)
	}
	s.send(chk, amount)
	b.waitState("detected")
	required := int(chk["confirmations"].(map[string]any)["required"].(float64))
	s.mine(q["network"].(string), 1)
	b.waitState("confirming")
	if got := b.text("#status-text"); !strings.Contains(got, fmt.Sprintf("1 of %d", required)) {
		t.Fatalf("confirmations shown as %q, want 1 of %d", got, required)
	}
	s.mine(q["network"].(string), required-1)
	b.waitState(final)
	b.checkNoReload()
	return chk
}

// checkReceipt compares the paid page's receipt with the checkout: the
// coin amount received, coin, network, transaction and its explorer link,
// and the date in UTC followed by the device's local time (Berlin).
func checkReceipt(t *testing.T, b *browser, chk map[string]any) {
	t.Helper()
	q := chk["crypto"].(map[string]any)
	if got := b.text("#receipt-amount"); got != q["received_amount"] {
		t.Fatalf("receipt amount %q, want %q", got, q["received_amount"])
	}
	if got := b.text("#receipt-tx"); got != q["tx_hash"] {
		t.Fatalf("receipt transaction %q, want %q", got, q["tx_hash"])
	}
	if got := b.attr(`#receipt a[href]`, "href"); got != q["explorer_url"] {
		t.Fatalf("receipt explorer link %q, want %q", got, q["explorer_url"])
	}
	receipt := b.text("#receipt")
	if !strings.Contains(receipt, q["asset"].(string)) || !strings.Contains(receipt, "Network") {
		t.Fatalf("receipt does not name coin and network: %q", receipt)
	}
	if date := b.text("#receipt-date"); !strings.Contains(date, " UTC") || !strings.Contains(date, "your time") {
		t.Fatalf("receipt date %q, want UTC and the local time", date)
	}
}

// checkoutID reads ?checkout= from a page address.
func checkoutID(t *testing.T, loc string) string {
	t.Helper()
	u, err := url.Parse(loc)
	if err != nil || !strings.HasPrefix(u.Query().Get("checkout"), "chk_") {
		t.Fatalf("no checkout in the address %q", loc)
	}
	return u.Query().Get("checkout")
}

// TestLinkPagePaid pays a link's page on a phone, and overpays it on a
// desktop.
func TestLinkPagePaid(t *testing.T) {
	s := startPayd(t)
	for _, tc := range []struct {
		vp            viewport
		amount, final string
	}{{phone, "", "succeeded"}, {desktop, "0.001", "overpaid"}} {
		t.Run(tc.vp.name, func(t *testing.T) {
			s.t = t
			link := s.link(nil)
			b := newBrowser(t, tc.vp)
			b.timezone("Europe/Berlin")
			chk := payOnPage(t, s, b, link["url"].(string), "BTC/bitcoin", tc.amount, tc.final)
			checkReceipt(t, b, s.checkout(chk["id"].(string)))
			b.screenshot("paid")
			b.checkA11y()
			// A reload shows the same state.
			b.run(chromedpReload())
			b.waitState(tc.final)
		})
	}
}

// TestPaymentPagePaid pays an API payment's page on a phone (bitcoin) and
// on a desktop (USDC on solana, with its Solana Pay reference); its
// success_url is followed once paid.
func TestPaymentPagePaid(t *testing.T) {
	s := startPayd(t)
	for _, tc := range []struct {
		vp     viewport
		option string
	}{{phone, "BTC/bitcoin"}, {desktop, "USDC/solana"}} {
		vp := tc.vp
		t.Run(vp.name, func(t *testing.T) {
			s.t = t
			pay := s.payment(map[string]any{"success_url": s.origin + "/healthz?paid=" + vp.name})
			b := newBrowser(t, vp)
			payOnPage(t, s, b, pay["url"].(string), tc.option, "", "succeeded")
			b.screenshot("paid")
			b.waitURL("/healthz?paid=" + vp.name)
		})
	}
}
