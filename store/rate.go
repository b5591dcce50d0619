package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"payd"
	"payd/money"
)

// CreateExchangeRates stores a snapshot. Prices go in as JSON objects of
// decimal strings, never JSON numbers, so nothing on the way can turn them
// into floats.
func (q *queries) CreateExchangeRates(ctx context.Context, r *payd.ExchangeRates) (err error) {
	defer fail(&err, "exchange rates", "store.CreateExchangeRates(%s)", r.ID)
	coins, fiat, sources, err := encodeRates(r)
	if err != nil {
		return err
	}
	var detail sql.NullString
	if r.Detail != nil {
		if detail.String, err = jsonString(storeDetail(r.Detail)); err != nil {
			return err
		}
		detail.Valid = true
	}
	_, err = q.ex.ExecContext(ctx, `
		INSERT INTO exchange_rates (id, coins, fiat, sources, created_at, detail) VALUES ($1, $2, $3, $4, $5, $6)`,
		r.ID, coins, fiat, sources, micros(r.CreatedAt), detail)
	return err
}

// rateColumns are what scanRates reads.
const rateColumns = `id, coins, fiat, sources, created_at, detail`

// LatestExchangeRates returns the newest snapshot; not_found if there is none.
func (q *queries) LatestExchangeRates(ctx context.Context) (_ *payd.ExchangeRates, err error) {
	defer fail(&err, "exchange rates", "store.LatestExchangeRates()")
	return scanRates(q.ex.QueryRowContext(ctx, `
		SELECT `+rateColumns+` FROM exchange_rates ORDER BY created_at DESC, id DESC LIMIT 1`))
}

// ExchangeRatesByID returns one snapshot of the history; not_found if
// there is none with the id.
func (q *queries) ExchangeRatesByID(ctx context.Context, id string) (_ *payd.ExchangeRates, err error) {
	defer fail(&err, "exchange rates", "store.ExchangeRatesByID(%s)", id)
	return scanRates(q.ex.QueryRowContext(ctx, `SELECT `+rateColumns+` FROM exchange_rates WHERE id = $1`, id))
}

// scanRates reads one row of rateColumns.
func scanRates(row rowScanner) (*payd.ExchangeRates, error) {
	var r payd.ExchangeRates
	var coins, fiat, sources string
	var detail sql.NullString
	var created int64
	if err := row.Scan(&r.ID, &coins, &fiat, &sources, &created, &detail); err != nil {
		return nil, err
	}
	r.CreatedAt = fromMicros(created)
	if err := decodeRates(&r, coins, fiat, sources); err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", r.ID, err)
	}
	if detail.Valid {
		var d storedDetail
		if err := json.Unmarshal([]byte(detail.String), &d); err != nil {
			return nil, fmt.Errorf("snapshot %s: detail: %w", r.ID, err)
		}
		var err error
		if r.Detail, err = d.detail(); err != nil {
			return nil, fmt.Errorf("snapshot %s: detail: %w", r.ID, err)
		}
	}
	return &r, nil
}

// DeleteExchangeRatesBefore removes snapshots older than t, keeping the
// newest one always, so a long outage of every source never leaves
// checkouts without a rate, and every one a checkout was quoted from, so
// each quote can be explained for as long as its checkout exists.
func (q *queries) DeleteExchangeRatesBefore(ctx context.Context, t time.Time) (_ int, err error) {
	defer fail(&err, "exchange rates", "store.DeleteExchangeRatesBefore(%s)", t.Format(time.RFC3339))
	return count(q.ex.ExecContext(ctx, `
		DELETE FROM exchange_rates WHERE created_at < $1 AND id <> (
			SELECT id FROM exchange_rates ORDER BY created_at DESC, id DESC LIMIT 1)
		AND NOT EXISTS (SELECT 1 FROM checkouts WHERE checkouts.exchange_rates_id = exchange_rates.id)`,
		micros(t)))
}

// storedDetail is how payd.RateDetail is kept in exchange_rates.detail:
// decimals as strings and times as Unix microseconds, like every other
// stored value.
type storedDetail struct {
	Sources []storedSourceState    `json:"sources"`
	Values  map[string]storedValue `json:"values"`
}

// storedValue is a payd.ValueState. Details stored before as_of, until
// and note were kept read back without them (not carriable).
type storedValue struct {
	Sources   int    `json:"sources"`
	SpreadBps int64  `json:"spread_bps"`
	AsOf      int64  `json:"as_of,omitempty"`
	Until     int64  `json:"until,omitempty"`
	Note      string `json:"note,omitempty"`
}

type storedSourceState struct {
	Name       string          `json:"name"`
	Status     string          `json:"status"`
	AsOf       int64           `json:"as_of,omitempty"`
	Error      string          `json:"error,omitempty"`
	HTTPStatus int             `json:"http_status,omitempty"`
	Dropped    []storedDropped `json:"dropped,omitempty"`
}

// storedDropped is a payd.DroppedValue; no reason means an outlier, the
// only reason before fee coins could be dropped alone.
type storedDropped struct {
	Code         string `json:"code"`
	Reason       string `json:"reason,omitempty"`
	Value        string `json:"value"`
	Median       string `json:"median,omitempty"`
	DeviationBps int64  `json:"deviation_bps"`
}

// optMicros is micros for a time that may be unset (zero stays 0).
func optMicros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return micros(t)
}

// optFromMicros undoes optMicros.
func optFromMicros(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return fromMicros(us)
}

// storeDetail returns the stored form of d.
func storeDetail(d *payd.RateDetail) storedDetail {
	out := storedDetail{Sources: make([]storedSourceState, len(d.Sources)), Values: map[string]storedValue{}}
	for code, v := range d.Values {
		out.Values[code] = storedValue{Sources: v.Sources, SpreadBps: v.SpreadBps, AsOf: optMicros(v.AsOf),
			Until: optMicros(v.Until), Note: string(v.Note)}
	}
	for i, s := range d.Sources {
		st := storedSourceState{Name: s.Name, Status: string(s.Status), AsOf: optMicros(s.AsOf), Error: string(s.Error),
			HTTPStatus: s.HTTPStatus}
		for _, v := range s.Dropped {
			d := storedDropped{Code: v.Code, Reason: string(v.Reason), Value: v.Value.String(), DeviationBps: v.DeviationBps}
			if !v.Median.IsZero() {
				d.Median = v.Median.String()
			}
			st.Dropped = append(st.Dropped, d)
		}
		out.Sources[i] = st
	}
	return out
}

// detail reads a stored detail back.
func (d storedDetail) detail() (*payd.RateDetail, error) {
	out := &payd.RateDetail{Sources: make([]payd.SourceState, len(d.Sources)), Values: map[string]payd.ValueState{}}
	for code, v := range d.Values {
		out.Values[code] = payd.ValueState{Sources: v.Sources, SpreadBps: v.SpreadBps, AsOf: optFromMicros(v.AsOf),
			Until: optFromMicros(v.Until), Note: payd.ValueNote(v.Note)}
	}
	for i, s := range d.Sources {
		st := payd.SourceState{Name: s.Name, Status: payd.SourceStatus(s.Status), AsOf: optFromMicros(s.AsOf),
			Error: payd.SourceError(s.Error), HTTPStatus: s.HTTPStatus}
		for _, v := range s.Dropped {
			value, err := money.ParseRate(v.Value)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", s.Name, v.Code, err)
			}
			var median money.Rate
			if v.Median != "" {
				if median, err = money.ParseRate(v.Median); err != nil {
					return nil, fmt.Errorf("%s %s: %w", s.Name, v.Code, err)
				}
			}
			reason := payd.DropReason(v.Reason)
			if reason == "" {
				reason = payd.DropOutlier
			}
			st.Dropped = append(st.Dropped, payd.DroppedValue{Code: v.Code, Reason: reason, Value: value, Median: median,
				DeviationBps: v.DeviationBps})
		}
		out.Sources[i] = st
	}
	return out, nil
}

// encodeRates turns a snapshot's maps into the stored JSON texts.
func encodeRates(r *payd.ExchangeRates) (coins, fiat, sources string, err error) {
	c := make(map[money.Asset]string, len(r.Coins))
	for a, cents := range r.Coins {
		c[a] = strconv.FormatInt(cents, 10)
	}
	f := make(map[money.Currency]string, len(r.Fiat))
	for cur, rate := range r.Fiat {
		f[cur] = rate.String()
	}
	src := r.Sources
	if src == nil {
		src = []string{}
	}
	var texts [3][]byte
	for i, v := range []any{c, f, src} {
		if texts[i], err = json.Marshal(v); err != nil {
			return "", "", "", err
		}
	}
	return string(texts[0]), string(texts[1]), string(texts[2]), nil
}

// decodeRates parses the stored JSON texts back into exact values.
func decodeRates(r *payd.ExchangeRates, coins, fiat, sources string) error {
	var c map[money.Asset]string
	var f map[money.Currency]string
	if err := json.Unmarshal([]byte(coins), &c); err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(fiat), &f); err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(sources), &r.Sources); err != nil {
		return err
	}
	r.Coins = make(map[money.Asset]int64, len(c))
	for a, s := range c {
		cents, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("coin %s: %v", a, err)
		}
		r.Coins[a] = cents
	}
	r.Fiat = make(map[money.Currency]money.Rate, len(f))
	for cur, s := range f {
		rate, err := money.ParseRate(s)
		if err != nil {
			return fmt.Errorf("currency %s: %v", cur, err)
		}
		r.Fiat[cur] = rate
	}
	return nil
}
