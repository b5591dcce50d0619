package web

import (
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strconv"
)

// The business's home (/dashboard/{biz}/): volume today and over 30 days,
// payments by status and by rail, a chart of daily volume drawn on the
// server, and what needs attention. Figures come from GET /metrics,
// which sums in US dollars (reporting.amount): payments in several
// currencies have no other common unit, and a business has no currency of
// its own in the API.

// dashMetrics is GET /metrics.
type dashMetrics struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Totals struct {
		Volume    dashUSD          `json:"volume"`
		Fees      dashUSD          `json:"fees"`
		Payments  int64            `json:"payments"`
		Succeeded int64            `json:"succeeded"`
		ByStatus  map[string]int64 `json:"by_status"`
		ByRail    map[string]struct {
			Payments  int64   `json:"payments"`
			Succeeded int64   `json:"succeeded"`
			Volume    dashUSD `json:"volume"`
		} `json:"by_rail"`
	} `json:"totals"`
	Days []struct {
		Date      string  `json:"date"`
		Volume    dashUSD `json:"volume"`
		Payments  int64   `json:"payments"`
		Succeeded int64   `json:"succeeded"`
	} `json:"days"`
}

type dashUSD struct {
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
}

// homePage is the home's data.
type homePage struct {
	Metrics  bool // the role may read metrics
	From, To string
	Today    homeFigure
	Month    homeFigure
	Fees     string
	ByStatus []homeCount
	ByRail   []homeRail
	Chart    homeChart
	// Attention lists underpaid and needs_review payments; More says
	// there are more than shown.
	Attention     []dashPaymentRow
	AttentionMore map[string]bool
	Payments      bool // the role may read payments
	Hooks         []homeHook
	HooksRead     bool
}

type homeFigure struct{ Volume, Payments, Succeeded string }

type homeCount struct {
	Status, Label, Href string
	Count               int64
}

type homeRail struct {
	Rail, Label, Volume string
	Payments, Succeeded int64
}

// homeChart is the SVG of daily volume: one bar per day.
type homeChart struct {
	Width, Height int
	Bars          []homeBar
	Max           string
	GridY         int
	FirstDate     string
	LastDate      string
	Total         string
	Any           bool // some day has volume
}

type homeBar struct {
	X, Y, W, H   int
	Date, Volume string
	Payments     int64
}

// homeHook is a webhook endpoint whose recent deliveries failed.
type homeHook struct {
	ID, URL  string
	Failed   int
	Retrying int
}

// denied is whether err is the API refusing the person's role.
func denied(err error) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.Code == "permission_denied"
}

// showHome serves GET /dashboard/{biz}/: the business's home.
func (h *Handler) showHome(d *dashReq) {
	p := homePage{AttentionMore: map[string]bool{}}
	var m dashMetrics
	switch err := d.call("GET", "/metrics", nil, &m); {
	case err == nil:
		p.Metrics = true
		p.fill(&m, d.bizPath("/payments"))
	case !denied(err):
		d.fail(err)
		return
	}
	p.Payments = true
	for _, st := range []string{"underpaid", "needs_review"} {
		var list dashPaymentList
		err := d.call("GET", "/payments?limit=10&status="+st, nil, whole{&list})
		if denied(err) {
			p.Payments = false
			break
		}
		if err != nil {
			d.fail(err)
			return
		}
		for i := range list.Data {
			p.Attention = append(p.Attention, d.paymentRow(&list.Data[i]))
		}
		p.AttentionMore[st] = list.HasMore
	}
	sort.Slice(p.Attention, func(i, j int) bool { return p.Attention[i].Created > p.Attention[j].Created })
	hooks, err := d.failingHooks()
	switch {
	case err == nil:
		p.HooksRead, p.Hooks = true, hooks
	case !denied(err):
		d.fail(err)
		return
	}
	d.page.Title, d.page.Section, d.page.Data = "Home", "home", p
	d.render(http.StatusOK, "dash/home.html")
}

// fill turns the metrics into the home's figures and chart.
func (p *homePage) fill(m *dashMetrics, list string) {
	p.From, p.To = m.From, m.To
	t := &m.Totals
	p.Month = homeFigure{Volume: usdText(t.Volume.Amount), Payments: strconv.FormatInt(t.Payments, 10),
		Succeeded: strconv.FormatInt(t.Succeeded, 10)}
	p.Fees = usdText(t.Fees.Amount)
	if n := len(m.Days); n > 0 {
		day := m.Days[n-1]
		p.Today = homeFigure{Volume: usdText(day.Volume.Amount), Payments: strconv.FormatInt(day.Payments, 10),
			Succeeded: strconv.FormatInt(day.Succeeded, 10)}
	}
	for _, st := range dashStatuses {
		p.ByStatus = append(p.ByStatus, homeCount{Status: st, Label: statusLabel(st), Count: t.ByStatus[st],
			Href: list + "?status=" + st + "&created_after=" + m.From})
	}
	for _, r := range []string{"crypto", "card"} {
		v := t.ByRail[r]
		p.ByRail = append(p.ByRail, homeRail{Rail: r, Label: railLabel(r), Volume: usdText(v.Volume.Amount),
			Payments: v.Payments, Succeeded: v.Succeeded})
	}
	// The chart: bars on a 600 × 160 view box above a base line; the
	// dates are HTML below it, readable at any width.
	const w, h, foot = 600, 160, 2
	c := homeChart{Width: w, Height: h, Total: p.Month.Volume, GridY: h - foot}
	var top int64
	for _, d := range m.Days {
		top = max(top, d.Volume.Amount)
	}
	c.Max, c.Any = usdText(top), top > 0
	if n := len(m.Days); n > 0 {
		c.FirstDate, c.LastDate = m.Days[0].Date, m.Days[n-1].Date
		step := w / n
		for i, d := range m.Days {
			bh := 0
			if top > 0 {
				bh = int(d.Volume.Amount * int64(h-foot-10) / top)
			}
			if d.Volume.Amount > 0 && bh < 1 {
				bh = 1
			}
			c.Bars = append(c.Bars, homeBar{X: i*step + 1, Y: h - foot - bh, W: max(step-2, 1), H: bh,
				Date: d.Date, Volume: usdText(d.Volume.Amount), Payments: d.Payments})
		}
	}
	p.Chart = c
}

// failingHooks lists the webhook endpoints with failed or retrying
// deliveries among the latest 100 of each.
func (d *dashReq) failingHooks() ([]homeHook, error) {
	var hooks struct {
		Data []struct {
			ID  string `json:"id"`
			URL string `json:"url"`
		} `json:"data"`
	}
	if err := d.call("GET", "/webhooks?limit=100", nil, whole{&hooks}); err != nil {
		return nil, err
	}
	by := map[string]*homeHook{}
	for _, st := range []string{"failed", "retrying"} {
		var list struct {
			Data []struct {
				WebhookID string `json:"webhook_id"`
				Test      bool   `json:"test"`
			} `json:"data"`
		}
		if err := d.call("GET", "/webhook-deliveries?limit=100&status="+st, nil, whole{&list}); err != nil {
			return nil, err
		}
		for _, dl := range list.Data {
			hk := by[dl.WebhookID]
			if hk == nil {
				hk = &homeHook{ID: dl.WebhookID}
				by[dl.WebhookID] = hk
			}
			if st == "failed" {
				hk.Failed++
			} else {
				hk.Retrying++
			}
		}
	}
	var out []homeHook
	for _, w := range hooks.Data {
		if hk := by[w.ID]; hk != nil {
			hk.URL = w.URL
			out = append(out, *hk)
		}
	}
	return out, nil
}

// dashStatuses are the payment statuses in the spec's order.
var dashStatuses = []string{"pending", "succeeded", "underpaid", "needs_review", "failed", "expired"}

// statusLabel names a payment status for people.
func statusLabel(s string) string {
	switch s {
	case "pending":
		return "Pending"
	case "succeeded":
		return "Succeeded"
	case "underpaid":
		return "Underpaid"
	case "needs_review":
		return "Needs review"
	case "failed":
		return "Failed"
	case "expired":
		return "Expired"
	}
	return s
}

// statusTone is the badge class of a status (the text says it too).
func statusTone(s string) string {
	switch s {
	case "succeeded":
		return "ok"
	case "failed", "expired":
		return "bad"
	case "underpaid", "needs_review":
		return ""
	}
	return "info"
}

func railLabel(r string) string {
	switch r {
	case "crypto":
		return "Crypto"
	case "card":
		return "Card"
	case "":
		return "Not chosen"
	}
	return r
}

// query renders v with its keys in order, for links that keep filters.
func query(v url.Values) string {
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}
