package rate

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"math/big"
	"net/http"
	"time"

	"payd"
	"payd/clock"
	"payd/money"
)

// ECBURL is the base address of the European Central Bank's site.
const ECBURL = "https://www.ecb.europa.eu"

// ECBMaxAge is how old the ECB's reference date may be. The bank publishes
// on TARGET working days around 16:00 CET, so the newest file is up to four
// days old over Easter; a week means the feed has stopped.
const ECBMaxAge = 7 * 24 * time.Hour

// ReferenceValidity is the freshness limit of a central bank's reference
// rates, counted from their reference date (Quotes.AsOf), whether the file
// was just fetched or is a kept report standing in for a failed fetch.
// The banks publish once per working day in the afternoon, so the newest
// file is up to three and a half days old over a weekend and nearly six
// over Easter (Thursday's rates until Tuesday afternoon); six days bridge
// that, after which the rates are too old to quote and are not used.
const ReferenceValidity = 6 * 24 * time.Hour

// ECBValidity is the ECB's freshness limit, ReferenceValidity.
const ECBValidity = ReferenceValidity

// ECB reads the euro foreign exchange reference rates
// (GET /stats/eurofxref/eurofxref-daily.xml), the price currencies' only
// source apart from the static table.
type ECB struct {
	endpoint
	clock clock.Clock
}

// NewECB returns the ECB source. A nil client means http.DefaultClient and
// an empty baseURL means ECBURL. With a clock, a file whose reference date
// is older than ECBMaxAge is refused; tests of recorded files pass nil.
func NewECB(client *http.Client, baseURL string, clk clock.Clock) *ECB {
	return &ECB{endpoint: newEndpoint(client, baseURL, ECBURL), clock: clk}
}

// Name identifies the source as "ecb".
func (e *ECB) Name() string { return "ecb" }

// Validity is ECBValidity, counted from the file's reference date: the
// rates change once per working day.
func (e *ECB) Validity() time.Duration { return ECBValidity }

// Fetch returns US dollars per unit of EUR, GBP, CAD and AUD.
func (e *ECB) Fetch(ctx context.Context) (payd.Quotes, error) {
	url := e.base + "/stats/eurofxref/eurofxref-daily.xml"
	body, err := get(ctx, e.client, e.Name(), url, "application/xml, text/xml", nil)
	if err != nil {
		return payd.Quotes{}, err
	}
	q, day, err := parseECB(body)
	if err != nil {
		return payd.Quotes{}, categorized(payd.SourceErrMalformed, err)
	}
	if e.clock != nil {
		if age := e.clock.Now().Sub(day); age > ECBMaxAge {
			return payd.Quotes{}, categorized(payd.SourceErrStale,
				fmt.Errorf("rate: ecb: reference rates of %s are %s old", day.Format(time.DateOnly), age.Round(time.Hour)))
		}
	}
	if err := check(e.Name(), q); err != nil {
		return payd.Quotes{}, err
	}
	return q, nil
}

// ecbEnvelope is the daily file: a gesmes:Envelope holding one Cube with a
// time attribute, whose Cubes carry currency and rate attributes (units of
// the currency per euro). Element names match in any namespace.
type ecbEnvelope struct {
	XMLName xml.Name `xml:"Envelope"`
	Outer   []struct {
		Days []struct {
			Time  string `xml:"time,attr"`
			Rates []struct {
				Currency string `xml:"currency,attr"`
				Rate     string `xml:"rate,attr"`
			} `xml:"Cube"`
		} `xml:"Cube"`
	} `xml:"Cube"`
}

// ecbCurrencies are the price currencies read from the file besides USD.
var ecbCurrencies = []money.Currency{money.GBP, money.CAD, money.AUD}

// parseECB reads the daily file and returns the quotes and reference date.
// The file quotes everything per euro, so a currency's US dollars per unit
// is (USD per EUR) ÷ (currency per EUR), cut after 18 decimals, and the
// euro's is USD per EUR itself.
func parseECB(body []byte) (payd.Quotes, time.Time, error) {
	var env ecbEnvelope
	if err := xml.NewDecoder(bytes.NewReader(body)).Decode(&env); err != nil {
		return payd.Quotes{}, time.Time{}, fmt.Errorf("rate: ecb: malformed file: %w", err)
	}
	if len(env.Outer) != 1 || len(env.Outer[0].Days) != 1 {
		return payd.Quotes{}, time.Time{}, fmt.Errorf("rate: ecb: file does not hold exactly one day")
	}
	d := env.Outer[0].Days[0]
	day, err := time.Parse(time.DateOnly, d.Time)
	if err != nil {
		return payd.Quotes{}, time.Time{}, fmt.Errorf("rate: ecb: reference date %q: %w", d.Time, err)
	}
	perEUR := map[string]*big.Rat{}
	for _, r := range d.Rates {
		if _, dup := perEUR[r.Currency]; dup {
			return payd.Quotes{}, time.Time{}, fmt.Errorf("rate: ecb: %q is listed twice", r.Currency)
		}
		x, err := money.ParseRate(r.Rate)
		if err != nil || x.IsZero() {
			return payd.Quotes{}, time.Time{}, fmt.Errorf("rate: ecb: %q rate %q is not a positive decimal", r.Currency, r.Rate)
		}
		perEUR[r.Currency] = x.Rat()
	}
	q, err := ecbQuotes(perEUR)
	q.AsOf = day
	return q, day, err
}

// ecbQuotes turns per-euro rates into US dollars per unit.
func ecbQuotes(perEUR map[string]*big.Rat) (payd.Quotes, error) {
	usd, ok := perEUR[string(money.USD)]
	if !ok {
		return payd.Quotes{}, fmt.Errorf("rate: ecb: file has no USD rate")
	}
	eur, err := exactRate(usd)
	if err != nil {
		return payd.Quotes{}, fmt.Errorf("rate: ecb: USD: %w", err)
	}
	q := payd.Quotes{Fiat: map[money.Currency]money.Rate{money.EUR: eur}}
	for _, c := range ecbCurrencies {
		x, ok := perEUR[string(c)]
		if !ok {
			return payd.Quotes{}, fmt.Errorf("rate: ecb: file has no %s rate", c)
		}
		r, err := truncatedRate(new(big.Rat).Quo(usd, x))
		if err != nil {
			return payd.Quotes{}, fmt.Errorf("rate: ecb: %s: %w", c, err)
		}
		q.Fiat[c] = r
	}
	return q, nil
}
