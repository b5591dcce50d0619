package rate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"time"

	"payd"
	"payd/money"
)

// BankOfCanadaURL is the base address of the Bank of Canada's site, whose
// Valet API publishes its daily exchange rates.
const BankOfCanadaURL = "https://www.bankofcanada.ca"

// BankOfCanada reads the Bank of Canada's daily exchange rates
// (GET /valet/observations/group/FX_RATES_DAILY/json?recent=1, no key),
// the price currencies' second source beside the ECB. It is independent of
// the ECB: the bank sets its own rates from its own market data, at 16:30
// Eastern time rather than 14:15 CET, so one bank's error or outage is not
// the other's (unlike services that republish the ECB's file).
type BankOfCanada struct {
	endpoint
}

// NewBankOfCanada returns the Bank of Canada source. A nil client means
// http.DefaultClient and an empty baseURL means BankOfCanadaURL.
func NewBankOfCanada(client *http.Client, baseURL string) *BankOfCanada {
	return &BankOfCanada{endpoint: newEndpoint(client, baseURL, BankOfCanadaURL)}
}

// Name identifies the source as "bankofcanada".
func (b *BankOfCanada) Name() string { return "bankofcanada" }

// Validity is ReferenceValidity, counted from the observation's date: the
// bank publishes once per Canadian business day.
func (b *BankOfCanada) Validity() time.Duration { return ReferenceValidity }

// Fetch returns US dollars per unit of EUR, GBP, CAD and AUD, as of the
// newest observation's date.
func (b *BankOfCanada) Fetch(ctx context.Context) (payd.Quotes, error) {
	url := b.base + "/valet/observations/group/FX_RATES_DAILY/json?recent=1"
	return fetchJSON(ctx, b.client, b.Name(), url, nil, parseBankOfCanada)
}

// bocObservations is the answer: {"groupDetail": {...}, "terms": {...},
// "seriesDetail": {...}, "observations": [{"d": "2024-05-17", "FXUSDCAD":
// {"v": "1.3620"}, ...}]}. Each series is Canadian dollars per unit of its
// first currency; values are decimal strings (numbers in older answers,
// which json.Number takes as well, never as floats).
type bocObservations struct {
	Observations []map[string]json.RawMessage `json:"observations"`
}

// bocSeries are the series read besides FXUSDCAD.
var bocSeries = []struct {
	currency money.Currency
	series   string
}{
	{money.EUR, "FXEURCAD"},
	{money.GBP, "FXGBPCAD"},
	{money.AUD, "FXAUDCAD"},
}

// parseBankOfCanada reads the newest observation (the last: they come in
// date order). Everything is per Canadian dollar, so a currency's US
// dollars per unit is (CAD per unit) ÷ (CAD per USD), and the Canadian
// dollar's own is 1 ÷ (CAD per USD), each cut after 18 decimals like the
// ECB's quotients.
func parseBankOfCanada(body []byte) (payd.Quotes, error) {
	var o bocObservations
	if err := json.Unmarshal(body, &o); err != nil {
		return payd.Quotes{}, fmt.Errorf("rate: bankofcanada: malformed answer: %w", err)
	}
	if len(o.Observations) == 0 {
		return payd.Quotes{}, fmt.Errorf("rate: bankofcanada: answer has no observation")
	}
	obs := o.Observations[len(o.Observations)-1]
	var date string
	if err := json.Unmarshal(obs["d"], &date); err != nil {
		return payd.Quotes{}, fmt.Errorf("rate: bankofcanada: observation has no date")
	}
	day, err := time.Parse(time.DateOnly, date)
	if err != nil {
		return payd.Quotes{}, fmt.Errorf("rate: bankofcanada: observation date %q: %w", date, err)
	}
	usd, err := bocValue(obs, "FXUSDCAD")
	if err != nil {
		return payd.Quotes{}, err
	}
	q := payd.Quotes{Fiat: map[money.Currency]money.Rate{}, AsOf: day}
	if q.Fiat[money.CAD], err = truncatedRate(new(big.Rat).Inv(usd)); err != nil {
		return payd.Quotes{}, fmt.Errorf("rate: bankofcanada: CAD: %w", err)
	}
	for _, s := range bocSeries {
		v, err := bocValue(obs, s.series)
		if err != nil {
			return payd.Quotes{}, err
		}
		if q.Fiat[s.currency], err = truncatedRate(v.Quo(v, usd)); err != nil {
			return payd.Quotes{}, fmt.Errorf("rate: bankofcanada: %s: %w", s.currency, err)
		}
	}
	return q, nil
}

// bocValue reads one series of an observation: {"v": "1.3620"}, a
// positive plain decimal.
func bocValue(obs map[string]json.RawMessage, series string) (*big.Rat, error) {
	raw, ok := obs[series]
	if !ok {
		return nil, fmt.Errorf("rate: bankofcanada: observation has no %s", series)
	}
	var v struct {
		V *json.Number `json:"v"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil || v.V == nil {
		return nil, fmt.Errorf("rate: bankofcanada: %s is not {\"v\": decimal}", series)
	}
	r, err := parseDecimal(v.V.String())
	if err != nil || r.IsZero() {
		return nil, fmt.Errorf("rate: bankofcanada: %s value %q is not a positive decimal", series, v.V.String())
	}
	return r.Rat(), nil
}
