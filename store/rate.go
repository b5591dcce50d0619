package store

import (
	"context"
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
	_, err = q.ex.ExecContext(ctx, `
		INSERT INTO exchange_rates (id, coins, fiat, sources, created_at) VALUES ($1, $2, $3, $4, $5)`,
		r.ID, coins, fiat, sources, micros(r.CreatedAt))
	return err
}

// LatestExchangeRates returns the newest snapshot; not_found if there is none.
func (q *queries) LatestExchangeRates(ctx context.Context) (_ *payd.ExchangeRates, err error) {
	defer fail(&err, "exchange rates", "store.LatestExchangeRates()")
	var r payd.ExchangeRates
	var coins, fiat, sources string
	var created int64
	err = q.ex.QueryRowContext(ctx, `
		SELECT id, coins, fiat, sources, created_at FROM exchange_rates
		ORDER BY created_at DESC, id DESC LIMIT 1`).Scan(&r.ID, &coins, &fiat, &sources, &created)
	if err != nil {
		return nil, err
	}
	r.CreatedAt = fromMicros(created)
	if err := decodeRates(&r, coins, fiat, sources); err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", r.ID, err)
	}
	return &r, nil
}

// DeleteExchangeRatesBefore removes snapshots older than t, keeping the
// newest one always, so a long outage of every source never leaves
// checkouts without a rate.
func (q *queries) DeleteExchangeRatesBefore(ctx context.Context, t time.Time) (_ int, err error) {
	defer fail(&err, "exchange rates", "store.DeleteExchangeRatesBefore(%s)", t.Format(time.RFC3339))
	return count(q.ex.ExecContext(ctx, `
		DELETE FROM exchange_rates WHERE created_at < $1 AND id <> (
			SELECT id FROM exchange_rates ORDER BY created_at DESC, id DESC LIMIT 1)`,
		micros(t)))
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
