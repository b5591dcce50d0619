package api

import (
	"errors"
	"net/url"
	"testing"
	"time"

	"payd"
	"payd/store"
	"payd/store/storetest"
)

// TestMetrics covers GET /metrics on both databases.
func TestMetrics(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		c := clTest{t, b}
		biz, other := b.newBusiness(false), b.newBusiness(false)
		// Two payments three days ago, one today; one of each succeeds.
		old := []string{
			c.data(payPost(biz.live, map[string]any{"amount": 1000, "currency": "USD"}), 201)["id"].(string),
			c.data(payPost(biz.live, map[string]any{"amount": 2000, "currency": "EUR"}), 201)["id"].(string),
		}
		b.clock.Advance(72 * time.Hour)
		today := c.data(payPost(biz.live, map[string]any{"amount": 500, "currency": "USD"}), 201)["id"].(string)
		c.data(payPost(other.live, map[string]any{"amount": 700, "currency": "USD"}), 201)
		for i, id := range []string{old[1], today} {
			rail := []payd.Rail{payd.RailCrypto, payd.RailCard}[i]
			setPayment(t, b, biz, id, func(p *payd.Payment) {
				fee := int64(10 * (i + 1))
				p.Status, p.Reporting.FeeUSD = payd.PaymentSucceeded, &fee
				p.Method = &payd.Method{Rail: rail, Asset: "USDC", Network: "polygon", Amount: "1.00", ExpectedAmount: "1.00"}
			})
		}
		now := b.clock.Now().UTC()
		d := c.data(request{method: "GET", path: "/metrics", key: biz.live}, 200)
		days := d["days"].([]any)
		if len(days) != 30 || d["to"] != now.Format(time.DateOnly) || d["from"] != now.AddDate(0, 0, -29).Format(time.DateOnly) {
			t.Fatalf("default range: %v to %v, %d days", d["from"], d["to"], len(days))
		}
		tot := d["totals"].(map[string]any)
		wantFields(t, tot, map[string]any{"payments": 3, "succeeded": 2, "volume": map[string]any{"amount": 2160 + 500, "currency": "USD"},
			"fees":      map[string]any{"amount": 30, "currency": "USD"},
			"by_status": map[string]any{"pending": 1, "succeeded": 2, "underpaid": 0, "needs_review": 0, "failed": 0, "expired": 0},
			"by_rail": map[string]any{"crypto": map[string]any{"payments": 1, "succeeded": 1, "volume": map[string]any{"amount": 2160, "currency": "USD"}},
				"card": map[string]any{"payments": 1, "succeeded": 1, "volume": map[string]any{"amount": 500, "currency": "USD"}}}})
		wantFields(t, days[29].(map[string]any), map[string]any{"date": now.Format(time.DateOnly), "payments": 1, "succeeded": 1,
			"volume": map[string]any{"amount": 500, "currency": "USD"}})
		wantFields(t, days[26].(map[string]any), map[string]any{"payments": 2, "succeeded": 1})
		wantFields(t, days[0].(map[string]any), map[string]any{"payments": 0, "succeeded": 0, "volume": map[string]any{"amount": 0, "currency": "USD"}})
		t.Run("range", func(t *testing.T) {
			day := now.AddDate(0, 0, -3).Format(time.DateOnly)
			d := c.data(request{method: "GET", path: "/metrics?from=" + day + "&to=" + day, key: biz.live}, 200)
			if days := d["days"].([]any); len(days) != 1 || d["totals"].(map[string]any)["payments"] != 2.0 {
				t.Fatalf("one day: %v", d)
			}
			year := c.data(request{method: "GET", path: "/metrics?from=2025-01-01&to=2026-01-01", key: other.live}, 200)
			if len(year["days"].([]any)) != 366 {
				t.Fatal("a 366-day range is allowed")
			}
		})
		t.Run("errors and access", func(t *testing.T) {
			for query, field := range map[string]string{"from=2026-02-30": "from", "to=22-11-2026": "to", "to=": "to",
				"from=2026-01-02&to=2026-01-01": "from", "from=2024-01-01&to=2025-01-01": "from", "currency=USD": "currency",
				"from=2026-01-01&from=2026-01-02": "from"} {
				c.call(request{method: "GET", path: "/metrics?" + query, key: biz.live}, 400, "invalid_request", field)
			}
			c.data(request{method: "GET", path: "/metrics", key: b.restricted(biz, "metrics:read")}, 200)
			c.call(request{method: "GET", path: "/metrics", key: b.restricted(biz, "payments:write")}, 403, "permission_denied")
			c.call(request{method: "GET", path: "/metrics"}, 401, "unauthenticated")
		})
	})
}

// FuzzParseMetricsRange checks that any query parses to a range of 1 to
// 366 days or fails with invalid_request naming a field.
func FuzzParseMetricsRange(f *testing.F) {
	for _, s := range []string{"", "from=2026-01-01", "from=2026-01-01&to=2026-12-31", "to=0001-01-01", "from=9999-12-31", "x=1"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		from, to, err := parseMetricsRange(v, now)
		if err != nil {
			var pe *payd.Error
			if !errors.As(err, &pe) || pe.Code != payd.ErrInvalidRequest || pe.Field == "" {
				t.Fatalf("%q: %v", raw, err)
			}
			return
		}
		if n := len(buildMetrics(from, to, nil).Days); n < 1 || n > maxMetricsDays {
			t.Fatalf("%q: %d days", raw, n)
		}
	})
}
