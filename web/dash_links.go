package web

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	qrcode "github.com/skip2/go-qrcode"

	"payd/money"
)

// The payment links pages (/dashboard/{biz}/links): the list by state, a
// new link, one link with its edit form, its state changes (archive,
// restore, delete), its address to copy and its QR code to download.

// dashLink is a link as GET /links answers it.
type dashLink struct {
	ID            string       `json:"id"`
	Code          string       `json:"code"`
	URL           string       `json:"url"`
	Name          string       `json:"name"`
	Description   string       `json:"description"`
	Amount        int64        `json:"amount"`
	Currency      string       `json:"currency"`
	SuccessURL    *string      `json:"success_url"`
	Status        string       `json:"status"`
	ArchivedAt    *string      `json:"archived_at"`
	DisabledAt    *string      `json:"disabled_at"`
	PaymentsCount int64        `json:"payments_count"`
	Volume        catalogMoney `json:"volume"`
	CreatedAt     string       `json:"created_at"`
}

// catalogMoney is an amount of the API ({amount, currency}).
type catalogMoney struct {
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
}

// Text is the amount as "12.50 USD".
func (m catalogMoney) Text() string { return priceText(m.Amount, m.Currency) }

// Price is the link's price as "25.00 USD".
func (l dashLink) Price() string { return priceText(l.Amount, l.Currency) }

// Created is when the link was made, in UTC.
func (l dashLink) Created() string { return utcText(l.CreatedAt) }

// linksPage is the list of links.
type linksPage struct {
	Status, Q string
	Links     []dashLink
	// Next is the address of the next page, "" on the last.
	Next string
}

// showDashLinks serves GET /dashboard/{biz}/links: active links by default,
// or status=archived / disabled, with a search.
func (h *Handler) showDashLinks(d *dashReq) {
	qs := d.r.URL.Query()
	p := linksPage{Status: qs.Get("status"), Q: strings.TrimSpace(qs.Get("q"))}
	if p.Status != "archived" && p.Status != "disabled" {
		p.Status = "active"
	}
	v := url.Values{"status": {p.Status}, "limit": {"25"}}
	if p.Q != "" {
		v.Set("q", p.Q)
	}
	if c := qs.Get("cursor"); c != "" {
		v.Set("cursor", c)
	}
	var list dashList[dashLink]
	if err := d.call("GET", "/links?"+v.Encode(), nil, whole{&list}); err != nil {
		d.fail(err)
		return
	}
	p.Links = list.Data
	if next := list.next(); next != "" {
		v.Del("limit")
		v.Set("cursor", next)
		p.Next = d.bizPath("/links?" + v.Encode())
	}
	d.page.Title, d.page.Section, d.page.Data = "Payment links", "links", p
	d.render(http.StatusOK, "dash/links.html")
}

// linkForm is the form of a new link or of a link's edit.
type linkForm struct {
	Name, Description, Amount, Currency, SuccessURL string
	// IdemKey makes a new link's form create one link however often it
	// is sent.
	IdemKey    string
	Currencies []string
}

var linkCurrencies = []string{"USD", "EUR", "GBP", "CAD", "AUD"}

func (f *linkForm) read(form url.Values) {
	f.Name = strings.TrimSpace(form.Get("name"))
	f.Description = catalogLines(form.Get("description"))
	f.Amount = strings.TrimSpace(form.Get("amount"))
	f.Currency = form.Get("currency")
	f.SuccessURL = strings.TrimSpace(form.Get("success_url"))
	f.IdemKey = form.Get("idem")
	f.Currencies = linkCurrencies
}

// parseMinor reads a price typed in major units ("25", "25.5", "25.50",
// "1,250.00") as minor units of cur. A comma is taken only as a thousands
// separator in its place: "19,99" (a decimal comma) is refused rather
// than read as 1999.
func parseMinor(s, cur string) (int64, bool) {
	digits := money.Currency(cur).MinorDigits()
	whole, frac, dot := strings.Cut(strings.TrimSpace(s), ".")
	if strings.Contains(whole, ",") {
		if !thousands.MatchString(whole) {
			return 0, false
		}
		whole = strings.ReplaceAll(whole, ",", "")
	}
	if whole == "" || len(whole) > 12 || len(frac) > digits || dot && frac == "" {
		return 0, false
	}
	for _, c := range whole + frac {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	frac += strings.Repeat("0", digits-len(frac))
	n, err := strconv.ParseInt(whole+frac, 10, 64)
	return n, err == nil
}

// thousands is a whole number written with commas between groups of three.
var thousands = regexp.MustCompile(`^[0-9]{1,3}(,[0-9]{3})+$`)

// majorText is minor units typed back into a form ("25.00").
func majorText(amount int64, cur string) string { return money.Currency(cur).Format(amount) }

// body is the API request the form asks for; a price that cannot be read
// is refused on the page, as the API would.
func (f *linkForm) body(d *dashReq) (map[string]any, bool) {
	amount, ok := parseMinor(f.Amount, f.Currency)
	if !ok {
		d.page.Error, d.page.Field = "Enter the price as a number, such as 25 or 1,250.00, with a dot before the cents.", "amount"
		return nil, false
	}
	b := map[string]any{"name": f.Name, "description": f.Description, "amount": amount, "currency": f.Currency}
	b["success_url"] = f.SuccessURL
	return b, true
}

// showDashNewLink serves GET /dashboard/{biz}/links/new.
func (h *Handler) showDashNewLink(d *dashReq) {
	f := linkForm{Currency: "USD", IdemKey: newIdemKey(), Currencies: linkCurrencies}
	d.page.Title, d.page.Section, d.page.Data = "New payment link", "links", &linkPage{Form: f}
	d.render(http.StatusOK, "dash/link_new.html")
}

// createDashLink serves POST /dashboard/{biz}/links/new: POST /links, then
// the new link's page.
func (h *Handler) createDashLink(d *dashReq) {
	var f linkForm
	f.read(d.form)
	d.page.Title, d.page.Section, d.page.Data = "New payment link", "links", &linkPage{Form: f}
	body, ok := f.body(d)
	if !ok {
		d.render(http.StatusBadRequest, "dash/link_new.html")
		return
	}
	if f.SuccessURL == "" {
		delete(body, "success_url")
	}
	hd := http.Header{}
	if strings.HasPrefix(f.IdemKey, "web_") {
		hd.Set("Idempotency-Key", f.IdemKey)
	}
	var l dashLink
	if err := d.callWith("POST", "/links", hd, body, &l); err != nil {
		if d.refuse(err) {
			d.render(d.status(err), "dash/link_new.html")
		}
		return
	}
	d.redirect(d.bizPath("/links/"+l.ID), "link_created")
}

// linkPage is one link: its facts, the edit form, its actions.
type linkPage struct {
	Link dashLink
	Form linkForm
	// QR is the link's address as a PNG data: URI.
	QR                 template.URL
	Archived, Disabled bool
}

// loadLink reads the link of the path's {id}; false when the page has
// been answered.
func (d *dashReq) loadLink() (*linkPage, bool) {
	var l dashLink
	if err := d.call("GET", "/links/"+url.PathEscape(d.r.PathValue("id")), nil, &l); err != nil {
		d.fail(err)
		return nil, false
	}
	p := &linkPage{Link: l, QR: qrDataURI(l.URL), Archived: l.Status == "archived", Disabled: l.Status == "disabled"}
	p.Form = linkForm{Name: l.Name, Description: l.Description, Amount: majorText(l.Amount, l.Currency),
		Currency: l.Currency, Currencies: linkCurrencies}
	if l.SuccessURL != nil {
		p.Form.SuccessURL = *l.SuccessURL
	}
	d.page.Title, d.page.Section, d.page.Data = l.Name, "links", p
	return p, true
}

// showDashLink serves GET /dashboard/{biz}/links/{id}.
func (h *Handler) showDashLink(d *dashReq) {
	if _, ok := d.loadLink(); ok {
		d.render(http.StatusOK, "dash/link.html")
	}
}

// saveDashLink serves POST /dashboard/{biz}/links/{id}: PATCH /links/{id}
// with the edit form.
func (h *Handler) saveDashLink(d *dashReq) {
	p, ok := d.loadLink()
	if !ok {
		return
	}
	p.Form.read(d.form)
	body, ok := p.Form.body(d)
	if !ok {
		d.render(http.StatusBadRequest, "dash/link.html")
		return
	}
	if err := d.call("PATCH", "/links/"+url.PathEscape(p.Link.ID), body, nil); err != nil {
		if d.refuse(err) {
			d.render(d.status(err), "dash/link.html")
		}
		return
	}
	d.redirect(d.bizPath("/links/"+p.Link.ID), "link_saved")
}

// linkAction serves POST /dashboard/{biz}/links/{id}/{action}: archive,
// restore, or delete (which must be confirmed with the form's box, so
// that without script it is asked too).
func (h *Handler) linkAction(d *dashReq) {
	p, ok := d.loadLink()
	if !ok {
		return
	}
	id := url.PathEscape(p.Link.ID)
	var err error
	switch act := d.r.PathValue("action"); act {
	case "archive", "restore":
		err = d.call("POST", "/links/"+id+"/"+act, nil, nil)
		if err == nil {
			d.redirect(d.bizPath("/links/"+p.Link.ID), "link_"+act+"d")
			return
		}
	case "delete":
		if d.form.Get("confirm") != "yes" {
			d.page.Error, d.page.Field = "Tick the box to confirm that the link is deleted for good.", "confirm"
			d.render(http.StatusBadRequest, "dash/link.html")
			return
		}
		err = d.call("DELETE", "/links/"+id, nil, nil)
		if err == nil {
			d.redirect(d.bizPath("/links"), "link_deleted")
			return
		}
	default:
		d.notFound()
		return
	}
	if d.refuse(err) {
		d.render(d.status(err), "dash/link.html")
	}
}

// linkQR serves GET /dashboard/{biz}/links/{id}/qr.png and qr.svg: the
// link's address as a QR code to download.
func (h *Handler) linkQR(ext string) dashHandler { return func(d *dashReq) { h.serveLinkQR(d, ext) } }

func (h *Handler) serveLinkQR(d *dashReq, ext string) {
	var l dashLink
	if err := d.call("GET", "/links/"+url.PathEscape(d.r.PathValue("id")), nil, &l); err != nil {
		d.fail(err)
		return
	}
	q, err := qrcode.New(l.URL, qrcode.Medium)
	if err != nil {
		d.fail(err)
		return
	}
	var body []byte
	switch ext {
	case "png":
		body, err = q.PNG(-8)
		d.w.Header().Set("Content-Type", "image/png")
	case "svg":
		body = qrSVG(q.Bitmap())
		d.w.Header().Set("Content-Type", "image/svg+xml")
	default:
		d.notFound()
		return
	}
	if err != nil {
		d.fail(err)
		return
	}
	d.w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="payment-link-%s.%s"`, l.Code, ext))
	d.w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = d.w.Write(body)
}

// qrSVG draws a QR bitmap (its quiet zone included) as one path of whole
// unit squares on white, so it stays crisp at any size.
func qrSVG(bits [][]bool) []byte {
	n := len(bits)
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" shape-rendering="crispEdges">`, n, n, n*8, n*8)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/><path fill="#000000" d="`, n, n)
	for y, row := range bits {
		for x := 0; x < len(row); {
			if !row[x] {
				x++
				continue
			}
			start := x
			for x < len(row) && row[x] {
				x++
			}
			fmt.Fprintf(&b, "M%d %dh%dv1h-%dz", start, y, x-start, x-start)
		}
	}
	b.WriteString(`"/></svg>`)
	return b.Bytes()
}
