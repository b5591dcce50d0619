package web_test

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	"path/filepath"

	"github.com/chromedp/chromedp"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// decodeQRFrom fetches a QR code download of the dashboard in the page (with
// the page's session) and decodes it with jsQR, drawn from a data: URI as
// the page's Content-Security-Policy allows; it returns the text, the
// Content-Type and the Content-Disposition.
func (m *merchant) decodeQRFrom(path string) (text, ctype, disposition string) {
	m.t.Helper()
	if src := tool(m.t, "PAYD_JSQR_JS"); src != "" && !evalAs[bool](m.browser, `typeof jsQR !== "undefined"`) {
		evalAs[int](m.browser, src+";0")
	}
	out := evalAs[[]string](m.browser, `(async () => {
		const res = await fetch(`+strconv.Quote(path)+`);
		const blob = await res.blob();
		const uri = await new Promise(ok => { const r = new FileReader(); r.onload = () => ok(r.result); r.readAsDataURL(blob); });
		let text = "";
		if (typeof jsQR !== "undefined") {
			const img = new Image();
			await new Promise((ok, no) => { img.onload = ok; img.onerror = no; img.src = uri; });
			const c = document.createElement("canvas");
			c.width = 400; c.height = 400;
			const x = c.getContext("2d");
			x.imageSmoothingEnabled = false;
			x.fillStyle = "#fff"; x.fillRect(0, 0, 400, 400);
			x.drawImage(img, 0, 0, 400, 400);
			const r = jsQR(x.getImageData(0, 0, 400, 400).data, 400, 400);
			text = r ? r.data : "(undecoded)";
		}
		return [text, res.headers.get("Content-Type") || "", res.headers.get("Content-Disposition") || ""];
	})()`)
	return out[0], out[1], out[2]
}

// attribute is the attribute name of the first node matching sel ("" when
// it has none).
func (m *merchant) attribute(sel, name string) string {
	m.t.Helper()
	return evalAs[string](m.browser, `document.querySelector(`+strconv.Quote(sel)+`).getAttribute(`+strconv.Quote(name)+`) || ""`)
}

// confirmYes answers the page's next confirmation questions yes.
func (m *merchant) confirmYes() {
	m.t.Helper()
	evalAs[bool](m.browser, `(window.__asked = [], window.confirm = q => (window.__asked.push(q), true), true)`)
}

// TestDashboardLinks walks the payment links: create one through the
// form, see it listed, copy its address, download its QR code as PNG and
// SVG (both decode to the address), edit it, archive and restore it,
// refuse a delete of a link with payments, and delete one without.
func TestDashboardLinks(t *testing.T) {
	m := newMerchant(t, desktop)
	m.visit("/links")
	if got := m.text("#no-links"); !strings.Contains(got, "No active links yet") {
		t.Fatalf("empty list says %q", got)
	}
	m.review("links-empty")
	m.click("#new-link")
	m.run(chromedpWait("#link-form"))
	m.fill("#name", "Signed first edition")
	m.fill("#description", "Hardback, signed.")
	m.fill("#amount", "twelve")
	m.submit(`#link-form button[type="submit"]`)
	if got := m.text("#form-error"); got != "Enter the price as a number, such as 25 or 1,250.00, with a dot before the cents." {
		t.Fatalf("bad price refused with %q", got)
	}
	if m.attribute("#amount", "aria-invalid") != "true" {
		t.Fatal("the price field is not marked invalid")
	}
	m.review("link-new-refused")
	m.fill("#amount", "49.50")
	m.submit(`#link-form button[type="submit"]`)
	if got := m.text("#flash"); got != "The payment link is ready to share." {
		t.Fatalf("flash %q", got)
	}
	if got := m.text("main h1"); got != "Signed first edition" {
		t.Fatalf("link page heading %q", got)
	}
	url := m.text("#link-url")
	if !strings.HasPrefix(url, m.s.origin+"/l/") {
		t.Fatalf("link address %q", url)
	}
	if got := m.attribute("#copy-url", "data-copy"); got != url {
		t.Fatalf("copy button copies %q", got)
	}
	if evalAs[bool](m.browser, `document.getElementById("copy-url").hidden`) {
		t.Fatal("the copy button stayed hidden with script")
	}
	m.review("link")
	// The QR codes, downloaded, hold the address.
	id := strings.TrimPrefix(m.location()[strings.LastIndex(m.location(), "/links/"):], "/links/")
	id, _, _ = strings.Cut(id, "?")
	for _, ext := range []string{"png", "svg"} {
		text, ctype, disp := m.decodeQRFrom("/dashboard/" + m.biz + "/links/" + id + "/qr." + ext)
		if text != "" && text != url {
			t.Errorf("qr.%s decodes to %q, not %q", ext, text, url)
		}
		if want := map[string]string{"png": "image/png", "svg": "image/svg+xml"}[ext]; ctype != want {
			t.Errorf("qr.%s Content-Type %q", ext, ctype)
		}
		if !strings.HasPrefix(disp, "attachment; filename=\"payment-link-") || !strings.HasSuffix(disp, "."+ext+"\"") {
			t.Errorf("qr.%s Content-Disposition %q", ext, disp)
		}
	}
	// Edit.
	m.fill("#name", "Signed first edition, 1978")
	m.fill("#amount", "55")
	m.submit(`#link-form button[type="submit"]`)
	if got := m.text("#flash"); got != "The payment link is saved." {
		t.Fatalf("flash after edit %q", got)
	}
	l := m.s.must("GET", "/links/"+id, m.s.key, nil)
	if l["name"] != "Signed first edition, 1978" || l["amount"].(float64) != 5500 {
		t.Fatalf("edited link %v", l)
	}
	// Archive (the confirmation is accepted) and restore.
	if m.attribute("#archive-form", "data-confirm") == "" {
		t.Fatal("archiving is not confirmed")
	}
	m.confirmYes()
	m.submit(`#archive-form button[type="submit"]`)
	if got := m.text("#flash"); !strings.HasPrefix(got, "The payment link is archived.") {
		t.Fatalf("flash after archive %q", got)
	}
	if got := m.text(".head .badge"); got != "Archived" {
		t.Fatalf("status after archive %q", got)
	}
	m.review("link-archived")
	m.visit("/links?status=archived")
	if got := m.text("#links tbody"); !strings.Contains(got, "Signed first edition, 1978") {
		t.Fatalf("archived list %q", got)
	}
	m.visit("/links/" + id)
	m.confirmYes()
	m.submit(`#restore-form button[type="submit"]`)
	if got := m.text("#flash"); !strings.HasPrefix(got, "The payment link is restored.") {
		t.Fatalf("flash after restore %q", got)
	}
	// A link with payments cannot be deleted.
	paid := m.s.link(nil)
	m.s.must("POST", "/checkouts", "", map[string]any{"link_code": paid["code"], "rail": "crypto", "asset": "BTC", "network": "bitcoin"},
		"Idempotency-Key", "links-paid-1")
	m.visit("/links/" + paid["id"].(string))
	m.click("#confirm")
	m.confirmYes()
	m.submit(`#delete-form button[type="submit"]`)
	if got := m.text("#form-error"); got != "This link has payments, so it cannot be deleted. Archive it instead." {
		t.Fatalf("delete of a paid link refused with %q", got)
	}
	m.review("link-delete-refused")
	// One without is deleted.
	m.visit("/links/" + id)
	m.click("#confirm")
	m.confirmYes()
	m.submit(`#delete-form button[type="submit"]`)
	if got := m.text("#flash"); got != "The payment link is deleted." {
		t.Fatalf("flash after delete %q", got)
	}
	if got := m.text("#links tbody"); strings.Contains(got, "Signed first edition") {
		t.Fatalf("deleted link still listed: %q", got)
	}
	m.review("links")
}

// TestDashboardCustomers walks the customers: the list and its search, a
// customer's stats, a note saved, a refused email, blocking (asked first)
// and unblocking, and the link to their payments.
func TestDashboardCustomers(t *testing.T) {
	m := newMerchant(t, desktop)
	m.visit("/customers")
	if got := m.text("#no-customers"); !strings.HasPrefix(got, "No customers yet.") {
		t.Fatalf("empty list says %q", got)
	}
	grace := m.s.must("POST", "/customers", m.s.key, map[string]any{"name": "Grace Hopper", "email": "grace@example.com"})
	m.s.must("POST", "/customers", m.s.key, map[string]any{"name": "Alan Turing", "email": "alan@example.com"})
	m.s.payment(map[string]any{"customer_id": grace["id"]})
	m.visit("/customers")
	if got := m.text("#customers tbody"); !strings.Contains(got, "Grace Hopper") || !strings.Contains(got, "Alan Turing") {
		t.Fatalf("list %q", got)
	}
	m.review("customers")
	m.fill("#q", "grace")
	m.submit(`form[role="search"] button[type="submit"]`)
	if got := m.text("#customers tbody"); !strings.Contains(got, "Grace Hopper") || strings.Contains(got, "Alan Turing") {
		t.Fatalf("search for grace lists %q", got)
	}
	m.click(`#customers tbody a`)
	m.run(chromedpWait("#customer-form"))
	if got := m.text("main h1"); got != "Grace Hopper" {
		t.Fatalf("customer heading %q", got)
	}
	if got := m.text("#stat-payments"); got != "1" {
		t.Fatalf("payments stat %q", got)
	}
	if got := m.attribute("#customer-payments", "href"); got != "/dashboard/"+m.biz+"/payments?customer_id="+grace["id"].(string) {
		t.Fatalf("payments link %q", got)
	}
	m.review("customer")
	// Another customer's email is refused, with the field marked.
	m.fill("#email", "ALAN@example.com")
	m.submit(`#customer-form button[type="submit"]`)
	if got := m.text("#form-error"); got != "Another customer of this business already has this email address." {
		t.Fatalf("duplicate email refused with %q", got)
	}
	if m.attribute("#email", "aria-invalid") != "true" {
		t.Fatal("the email field is not marked invalid")
	}
	m.review("customer-refused")
	m.fill("#email", "grace@example.com")
	m.fill("#note", "Prefers invoices by email.\nVIP.")
	m.submit(`#customer-form button[type="submit"]`)
	if got := m.text("#flash"); got != "The customer is saved." {
		t.Fatalf("flash %q", got)
	}
	if c := m.s.must("GET", "/customers/"+grace["id"].(string), m.s.key, nil); c["note"] != "Prefers invoices by email.\nVIP." {
		t.Fatalf("note %q", c["note"])
	}
	// Block, then unblock; each is asked first.
	if m.attribute("#block-form", "data-confirm") == "" {
		t.Fatal("blocking is not confirmed")
	}
	m.confirmYes()
	m.submit(`#block-form button[type="submit"]`)
	if got := m.text("#flash"); got != "The customer is blocked: they can no longer pay." {
		t.Fatalf("flash after block %q", got)
	}
	if got := m.text("#customer-status"); got != "Blocked" {
		t.Fatalf("status %q", got)
	}
	if c := m.s.must("GET", "/customers/"+grace["id"].(string), m.s.key, nil); c["blocked"] != true {
		t.Fatal("the customer is not blocked")
	}
	m.review("customer-blocked")
	m.visit("/customers?blocked=true")
	if got := m.text("#customers tbody"); !strings.Contains(got, "Grace Hopper") || strings.Contains(got, "Alan Turing") {
		t.Fatalf("blocked list %q", got)
	}
	m.click(`#customers tbody a`)
	m.run(chromedpWait("#unblock-form"))
	m.confirmYes()
	m.submit(`#unblock-form button[type="submit"]`)
	if got := m.text("#customer-status"); got != "Can pay" {
		t.Fatalf("status after unblock %q", got)
	}
	// 25 a page, newest first; the next page carries on by cursor.
	for i := range 24 {
		m.s.must("POST", "/customers", m.s.key, map[string]any{"name": fmt.Sprintf("Reader %02d", i)})
	}
	m.visit("/customers")
	if n := evalAs[int](m.browser, `document.querySelectorAll("#customers tbody tr").length`); n != 25 {
		t.Fatalf("first page has %d rows", n)
	}
	if got := m.text("#customers tbody tr:first-child"); !strings.Contains(got, "Reader 23") {
		t.Fatalf("first row %q", got)
	}
	m.submit(`a[rel="next"]`)
	if got := m.text("#customers tbody"); !strings.Contains(got, "Grace Hopper") || strings.Contains(got, "Reader") {
		t.Fatalf("second page %q", got)
	}
	if evalAs[int](m.browser, `document.querySelectorAll("a[rel=next]").length`) != 0 {
		t.Fatal("the last page offers a next page")
	}
}

// TestDashboardSettings changes the checkout settings through the form: a
// colour too light for the page is refused with its contrast, then the
// branding and behaviour are saved, and the link's payment page shows the
// name, the support email and the accent colour.
func TestDashboardSettings(t *testing.T) {
	m := newMerchant(t, desktop)
	link := m.s.link(nil)
	m.visit("/settings")
	if got := m.attribute("#quote_minutes", "value"); got != "15" {
		t.Fatalf("quote window %q", got)
	}
	m.review("settings")
	m.fill("#quote_minutes", "20")
	m.click("#collect_email")
	m.click("#fee_customer")
	m.click("#coin_tron_USDT")
	m.fill("#display_name", "Ada's Rare Books")
	m.fill("#support_email", "help@ada.example")
	m.fill("#accent_color", "#ffcc00")
	m.submit(`#settings-form button[type="submit"]`)
	if got := m.text("#form-error"); !strings.Contains(got, "only 1.5:1") || !strings.Contains(got, "4.5:1") {
		t.Fatalf("light colour refused with %q", got)
	}
	if m.attribute("#accent_color", "aria-invalid") != "true" {
		t.Fatal("the colour field is not marked invalid")
	}
	if m.attribute("#quote_minutes", "value") != "20" || m.attribute("#display_name", "value") != "Ada's Rare Books" {
		t.Fatal("the refused form lost what was typed")
	}
	m.review("settings-refused")
	m.fill("#accent_color", "#7A1F5C")
	m.submit(`#settings-form button[type="submit"]`)
	if got := m.text("#flash"); got != "The checkout settings are saved." {
		t.Fatalf("flash %q", got)
	}
	s := m.s.must("GET", "/checkout-settings", m.s.key, nil)
	if s["quote_minutes"].(float64) != 20 || s["collect_email"] != true || s["fee_payer"] != "customer" ||
		s["accent_color"] != "#7a1f5c" || s["display_name"] != "Ada's Rare Books" || s["support_email"] != "help@ada.example" {
		t.Fatalf("saved settings %v", s)
	}
	if assets := s["accepted_assets"].(map[string]any); assets["tron"] != nil {
		t.Fatalf("tron still accepted: %v", assets)
	}
	// A logo: a file that is not an image is refused, a PNG is kept.
	dir := t.TempDir()
	notImage, logo := filepath.Join(dir, "logo.png"), filepath.Join(dir, "ada.png")
	catalogNoErr(t, os.WriteFile(notImage, []byte("not a picture"), 0o600))
	img := image.NewRGBA(image.Rect(0, 0, 120, 40))
	for i := 0; i < len(img.Pix); i += 4 {
		copy(img.Pix[i:], []byte{0x7a, 0x1f, 0x5c, 0xff})
	}
	var pngData bytes.Buffer
	catalogNoErr(t, png.Encode(&pngData, img))
	catalogNoErr(t, os.WriteFile(logo, pngData.Bytes(), 0o600))
	if m.text("#no-logo") == "" {
		t.Fatal("no word that there is no logo")
	}
	m.run(chromedp.SetUploadFiles(chromedp.CSS("#logo"), []string{notImage}))
	m.submit(`#logo-form button[type="submit"]`)
	if got := m.text("#form-error"); got != "The logo must be a PNG or JPEG image." {
		t.Fatalf("a text file refused with %q", got)
	}
	if m.attribute("#logo", "aria-invalid") != "true" {
		t.Fatal("the logo field is not marked invalid")
	}
	m.run(chromedp.SetUploadFiles(chromedp.CSS("#logo"), []string{logo}))
	m.submit(`#logo-form button[type="submit"]`)
	if got := m.text("#flash"); got != "The logo is saved. Your payment pages show it now." {
		t.Fatalf("flash after upload %q", got)
	}
	m.run(chromedpWait("#logo-preview"))
	if !evalAs[bool](m.browser, `document.getElementById("logo-preview").complete && document.getElementById("logo-preview").naturalWidth === 120`) {
		t.Fatal("the logo preview did not load")
	}
	m.review("settings-saved")
	// The payment page wears the branding.
	m.open(link["url"].(string))
	m.run(chromedpWait("main h1"))
	if got := m.text(".merchant"); !strings.Contains(got, "Ada's Rare Books") {
		t.Fatalf("payment page names %q", got)
	}
	if got := m.text(".foot"); !strings.Contains(got, "help@ada.example") {
		t.Fatalf("payment page footer %q", got)
	}
	if got := evalAs[string](m.browser, `getComputedStyle(document.documentElement).getPropertyValue("--accent").trim()`); got != "#7a1f5c" {
		t.Fatalf("payment page accent %q", got)
	}
	logoSrc := evalAs[string](m.browser, `(async () => { const i = document.querySelector(".brand-logo"); if (!i) return "";
		await i.decode(); return i.naturalWidth === 120 ? new URL(i.src).pathname : ""; })()`)
	if !strings.HasPrefix(logoSrc, "/static/logo/") {
		t.Fatalf("payment page logo %q", logoSrc)
	}
	m.checkFits()
	m.checkAxe()
	m.screenshot("checkout-branded")
	// The accent stylesheet is cached for good, and only for colours the API accepts.
	for file, want := range map[string]int{"7a1f5c.css": 200, "ffcc00.css": 404, "7A1F5C.css": 404, "7a1f5c": 404} {
		res, err := http.Get(m.s.origin + "/static/accent/" + file)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("/static/accent/%s: %d, want %d", file, res.StatusCode, want)
		}
		if want == 200 && res.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
			t.Errorf("/static/accent/%s: Cache-Control %q", file, res.Header.Get("Cache-Control"))
		}
	}
	m.checkConsole()
	// The logo is cached for good under its digest.
	res, err := http.Get(m.s.origin + logoSrc)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "image/png" || !bytes.Equal(body, pngData.Bytes()) ||
		res.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
		t.Fatalf("logo: %d %v", res.StatusCode, res.Header)
	}
	m.visit("/settings")
	m.confirmYes()
	m.submit(`#logo-remove-form button[type="submit"]`)
	if got := m.text("#flash"); got != "The logo is removed." {
		t.Fatalf("flash after removing %q", got)
	}
}

func catalogNoErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
