package api

import (
	"maps"
	"net/http"
	"net/url"
	"slices"
	"time"

	"payd"
)

// GET /metrics: what the dashboard draws (docs/listing.md). Payments count
// on the UTC day they were created, under their current status.

// The date range of GET /metrics.
const (
	defaultMetricsDays = 30
	maxMetricsDays     = 366
)

// metricsBody is the Metrics object.
type metricsBody struct {
	Kind   string        `json:"kind"`
	From   string        `json:"from"`
	To     string        `json:"to"`
	Totals metricsTotals `json:"totals"`
	Days   []metricsDay  `json:"days"`
}

// metricsTotals sums the whole range. Volume and fees are of succeeded
// payments, in US cents.
type metricsTotals struct {
	Volume    metricsUSD            `json:"volume"`
	Fees      metricsUSD            `json:"fees"`
	Payments  int64                 `json:"payments"`
	Succeeded int64                 `json:"succeeded"`
	ByStatus  map[string]int64      `json:"by_status"`
	ByRail    map[string]*railTotal `json:"by_rail"`
}

// railTotal is one rail's share; payments whose customer has not chosen a
// rail yet count in no rail.
type railTotal struct {
	Payments  int64      `json:"payments"`
	Succeeded int64      `json:"succeeded"`
	Volume    metricsUSD `json:"volume"`
}

// metricsDay is one UTC day of the series; every day of the range is
// present, with zeros when nothing happened.
type metricsDay struct {
	Date      string     `json:"date"`
	Volume    metricsUSD `json:"volume"`
	Payments  int64      `json:"payments"`
	Succeeded int64      `json:"succeeded"`
}

// metricsUSD is an amount in US cents.
type metricsUSD struct {
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
}

func usd(cents int64) metricsUSD { return metricsUSD{Amount: cents, Currency: "USD"} }

// getMetrics serves GET /metrics.
func (s *Server) getMetrics(w http.ResponseWriter, r *http.Request) error {
	from, to, err := parseMetricsRange(r.URL.Query(), s.clock.Now())
	if err != nil {
		return err
	}
	rows, err := s.store.PaymentDays(r.Context(), callOf(r.Context()).biz.ID, from, to)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, single{buildMetrics(from, to, rows)})
	return nil
}

// parseMetricsRange reads from and to (UTC dates, both inclusive). By
// default the range is the 30 days ending today.
func parseMetricsRange(v url.Values, now time.Time) (from, to time.Time, err error) {
	for _, name := range slices.Sorted(maps.Keys(v)) {
		if name != "from" && name != "to" {
			return from, to, unknownParam(name)
		}
	}
	to = now.UTC().Truncate(24 * time.Hour)
	if to, err = dateParam(v, "to", to); err != nil {
		return from, to, err
	}
	if from, err = dateParam(v, "from", to.AddDate(0, 0, 1-defaultMetricsDays)); err != nil {
		return from, to, err
	}
	switch days := int(to.Sub(from)/(24*time.Hour)) + 1; {
	case days < 1:
		return from, to, payd.FieldError("from", "from must not be after to")
	case days > maxMetricsDays:
		return from, to, payd.FieldError("from", "the range from..to may cover at most %d days", maxMetricsDays)
	}
	return from, to, nil
}

// dateParam reads a YYYY-MM-DD date, or returns def when it is absent.
func dateParam(v url.Values, name string, def time.Time) (time.Time, error) {
	s, err := optText(v, name, maxFilterLen)
	if s == nil || err != nil {
		return def, err
	}
	t, err := time.Parse(time.DateOnly, *s)
	if err != nil {
		return def, payd.FieldError(name, "%s must be a date such as 2026-11-22", name)
	}
	return t, nil
}

// buildMetrics adds the rollup rows up into totals and a day series.
func buildMetrics(from, to time.Time, rows []payd.PaymentDay) metricsBody {
	m := metricsBody{Kind: "metrics", From: from.Format(time.DateOnly), To: to.Format(time.DateOnly),
		Totals: metricsTotals{Volume: usd(0), Fees: usd(0), ByStatus: map[string]int64{},
			ByRail: map[string]*railTotal{}}}
	for _, st := range payd.PaymentStatuses {
		m.Totals.ByStatus[string(st)] = 0
	}
	for _, rail := range []payd.Rail{payd.RailCrypto, payd.RailCard} {
		m.Totals.ByRail[string(rail)] = &railTotal{Volume: usd(0)}
	}
	index := map[string]int{}
	for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
		index[d.Format(time.DateOnly)] = len(m.Days)
		m.Days = append(m.Days, metricsDay{Date: d.Format(time.DateOnly), Volume: usd(0)})
	}
	for _, row := range rows {
		i, ok := index[row.Date.Format(time.DateOnly)]
		if !ok {
			continue
		}
		m.add(i, row)
	}
	return m
}

// add counts one rollup row into day i and the totals.
func (m *metricsBody) add(i int, row payd.PaymentDay) {
	day, t := &m.Days[i], &m.Totals
	day.Payments += row.Payments
	t.Payments += row.Payments
	t.ByStatus[string(row.Status)] += row.Payments
	rail := t.ByRail[string(row.Rail)]
	if rail != nil {
		rail.Payments += row.Payments
	}
	if row.Status != payd.PaymentSucceeded {
		return
	}
	day.Succeeded += row.Payments
	day.Volume.Amount += row.AmountUSD
	t.Succeeded += row.Payments
	t.Volume.Amount += row.AmountUSD
	t.Fees.Amount += row.FeeUSD
	if rail != nil {
		rail.Succeeded += row.Payments
		rail.Volume.Amount += row.AmountUSD
	}
}
