package payd

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"payd/money"
)

// exactCents is x rounded half up to an integer, computed exactly.
func exactRound(x *big.Rat) int64 {
	n := new(big.Int).Mul(x.Num(), big.NewInt(2))
	n.Add(n, x.Denom())
	d := new(big.Int).Mul(x.Denom(), big.NewInt(2))
	return new(big.Int).Div(n, d).Int64()
}

// TestCardTermsProperties checks the card rail's arithmetic against spec
// 2.11 with exact rationals, in every currency, at random rates, prices,
// fee payers and provider limits: the US value (rule 4), the 300 bps fee
// on it (rule 5), the share passed on converted once and rounded to the
// nearest minor unit (rule 6), the total, that the business nets the
// price's value when the customer carries the fee, and that the limits
// are the tightest amounts inside the US-dollar range (minimum rounded up,
// maximum down).
func TestCardTermsProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 11))
	for i := range 20_000 {
		c := money.Currencies[r.IntN(len(money.Currencies))]
		rate := money.MustRate(fmt.Sprintf("0.%04d", 2000+r.IntN(18_000)))
		if r.IntN(4) == 0 {
			rate = money.MustRate(fmt.Sprintf("1.%04d", r.IntN(5000)))
		}
		price := 1 + r.Int64N(2_000_000)
		payer := []money.FeePayer{money.FeePayerBusiness, money.FeePayerCustomer}[r.IntN(2)]
		lim := CardLimits{}
		if r.IntN(3) == 0 {
			lim = CardLimits{MinUSD: 500 + r.Int64N(2000), MaxUSD: 100_000 + r.Int64N(2_000_000)}
		}
		tm, err := CardTermsFor(price, c, rate, payer, lim)
		if err != nil {
			t.Fatalf("%d %s at %s: %v", price, c, rate, err)
		}
		usd := exactRound(new(big.Rat).Mul(big.NewRat(price, 1), rate.Rat()))
		fee := exactRound(big.NewRat(usd*CardFeeBps, 10_000))
		sp := tm.Split
		if sp.AmountUSD != usd || sp.FeeUSD != fee {
			t.Fatalf("case %d: %d %s at %s: amount %d fee %d, want %d %d", i, price, c, rate, sp.AmountUSD, sp.FeeUSD, usd, fee)
		}
		wantShare := int64(0)
		if payer == money.FeePayerCustomer {
			wantShare = exactRound(new(big.Rat).Quo(big.NewRat(fee, 1), rate.Rat()))
			if sp.CustomerFeeUSD != fee || sp.AmountUSD+sp.CustomerFeeUSD-sp.FeeUSD != usd {
				t.Fatalf("case %d: the business does not net the price's value: %+v", i, sp)
			}
		} else if sp.CustomerFeeUSD != 0 || sp.BusinessFeeUSD != fee {
			t.Fatalf("case %d: business pays: %+v", i, sp)
		}
		if sp.CustomerFee != wantShare || sp.Total != price+wantShare {
			t.Fatalf("case %d: %d %s at %s, %s: share %d total %d, want %d %d", i, price, c, rate, payer,
				sp.CustomerFee, sp.Total, wantShare, price+wantShare)
		}
		lo, hi := max(int64(CardMinUSDCents), lim.MinUSD), int64(CardMaxUSDCents)
		if lim.MaxUSD > 0 {
			hi = min(hi, lim.MaxUSD)
		}
		worth := func(n int64) *big.Rat { return new(big.Rat).Mul(big.NewRat(n, 1), rate.Rat()) }
		if worth(tm.Min).Cmp(big.NewRat(lo, 1)) < 0 || worth(tm.Min-1).Cmp(big.NewRat(lo, 1)) >= 0 ||
			worth(tm.Max).Cmp(big.NewRat(hi, 1)) > 0 || worth(tm.Max+1).Cmp(big.NewRat(hi, 1)) <= 0 {
			t.Fatalf("case %d: limits %d..%d %s at %s for %d..%d US cents", i, tm.Min, tm.Max, c, rate, lo, hi)
		}
		if tm.Within() != (sp.Total >= tm.Min && sp.Total <= tm.Max) {
			t.Fatalf("case %d: Within", i)
		}
	}
}

// TestCardQuote checks the coin a card checkout delivers: the value of the
// total less the fee, rounded to the coin's decimals, with the gross the
// customer's total is worth; amount_out_of_range outside the limits.
func TestCardQuote(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		price      int64
		c          money.Currency
		payer      money.FeePayer
		asset      money.Asset
		net, gross string
		err        string
	}{
		{10_000, money.USD, money.FeePayerBusiness, money.USDC, "97.00", "100.00", ""},
		{10_000, money.USD, money.FeePayerCustomer, money.USDC, "100.00", "103.00", ""},
		// 100.00 EUR = 108.42 USD; fee 3.25 USD; net 105.17 USD at 60,000 USD a coin.
		{10_000, money.EUR, money.FeePayerBusiness, money.BTC, "0.00175283", "0.00180700", ""},
		{400, money.USD, money.FeePayerBusiness, money.USDC, "", "", ErrAmountOutOfRange},
		{1_000_001, money.USD, money.FeePayerBusiness, money.USDC, "", "", ErrAmountOutOfRange},
		// 9,900.00 USD is inside, but with the fee passed on it totals 10,197.00.
		{990_000, money.USD, money.FeePayerCustomer, money.USDC, "", "", ErrAmountOutOfRange},
	} {
		p, err := NewPayment("biz_1", PaymentParams{Amount: tc.price, Currency: tc.c, FeePayer: tc.payer}, coinRates, false, now)
		if err != nil {
			t.Fatal(err)
		}
		in := CardOpenParams{Asset: tc.asset, Network: money.NetworksFor(tc.asset)[0], Rates: coinRates, QuoteMinutes: 15,
			Provider: "test", Required: 2}
		tm, q, gross, err := CardQuote(p, in)
		if tc.err != "" {
			if ErrorCode(err) != tc.err {
				t.Errorf("%d %s: err %v, want %s", tc.price, tc.c, err, tc.err)
			}
			continue
		}
		if err != nil || q.Amount.String() != tc.net || gross.String() != tc.gross {
			t.Errorf("%d %s %s: net %v gross %v (%v), want %s %s", tc.price, tc.c, tc.payer, q, gross, err, tc.net, tc.gross)
			continue
		}
		c := OpenCardCheckout(p, in, tm, q, gross, now)
		if p.FeeRateBps != CardFeeBps || c.FeeRateBps != CardFeeBps || p.CustomerFee != tm.Split.CustomerFee ||
			c.Breakdown.Total != tm.Split.Total || p.Method.ExpectedAmount != tc.gross || p.CheckoutID != c.ID {
			t.Errorf("%d %s: opened %+v on %+v", tc.price, tc.c, c, p)
		}
	}
}

// TestCardReports drives a card checkout's routes through reports in
// every order: a report for another session, an older status or a replay
// changes nothing; a decline leaves the checkout open while a route is
// left and fails it (and a link's payment) after the last.
func TestCardReports(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	open := func(link bool) (*Payment, *Checkout) {
		in := PaymentParams{Amount: 5000, Currency: money.USD, FeePayer: money.FeePayerBusiness}
		if link {
			in.LinkID = "lnk_1"
		}
		p, err := NewPayment("biz_1", in, coinRates, false, now)
		if err != nil {
			t.Fatal(err)
		}
		ci := CardOpenParams{Asset: money.USDC, Network: money.Polygon, Rates: coinRates, QuoteMinutes: 15, Provider: "test"}
		tm, q, gross, err := CardQuote(p, ci)
		if err != nil {
			t.Fatal(err)
		}
		c := OpenCardCheckout(p, ci, tm, q, gross, now)
		if !c.AttachSession(1, CardSession{ID: "s1", RedirectURL: "https://p.test/s1"}, now) {
			t.Fatal("AttachSession refused the first session")
		}
		if c.AttachSession(1, CardSession{ID: "s1b"}, now) || c.Card.Session != "s1" {
			t.Fatal("a second session replaced the first")
		}
		return p, c
	}
	p, c := open(false)
	apply := func(r CardReport) bool { return c.ApplyCardReport(p, r, now) }
	if apply(CardReport{Session: "other", Status: CardProcessing}) {
		t.Fatal("a report for another session applied")
	}
	if !apply(CardReport{Session: "s1", Status: CardChallenge}) || apply(CardReport{Session: "s1", Status: CardChallenge}) ||
		apply(CardReport{Session: "s1", Status: CardAwaiting}) {
		t.Fatal("challenge: applied twice, or an older status applied")
	}
	if err := c.CheckRetry(p, 1); ErrorCode(err) != ErrRouteInProgress {
		t.Fatalf("retry during the challenge: %v", err)
	}
	if _, err := c.Replace("chk_2", now); ErrorCode(err) != ErrRouteInProgress {
		t.Fatalf("replace during the challenge: %v", err)
	}
	for route := 1; route <= CardMaxRoutes; route++ {
		sess := fmt.Sprintf("s%d", route)
		if route > 1 {
			if err := c.CheckRetry(p, route-1); err != nil {
				t.Fatalf("retry after decline %d: %v", route-1, err)
			}
			c.NextRoute(p, now)
			c.AttachSession(route, CardSession{ID: sess}, now)
		}
		if !apply(CardReport{Session: sess, Status: CardDeclined, DeclineCode: CardInsufficientFunds}) {
			t.Fatalf("decline %d not applied", route)
		}
		if apply(CardReport{Session: sess, Status: CardProcessing}) {
			t.Fatalf("a charge after the decline of route %d applied", route)
		}
	}
	if c.Status != CheckoutFailed || c.FailureCode != CardInsufficientFunds || p.Status != PaymentPending {
		t.Fatalf("after %d declines: checkout %s (%s), payment %s", CardMaxRoutes, c.Status, c.FailureCode, p.Status)
	}
	if err := c.CheckRetry(p, CardMaxRoutes); ErrorCode(err) != ErrNoRoute {
		t.Fatalf("retry after the last decline: %v", err)
	}
	if err := c.CheckRetry(p, 1); ErrorCode(err) != ErrStaleRoute {
		t.Fatalf("retry from an old page: %v", err)
	}

	p, c = open(true)
	c.ApplyCardReport(p, CardReport{Session: "s1", Status: CardProcessing, Brand: "visa", Last4: "4242"}, now)
	if c.Status != CheckoutProcessing || !p.InFlight() || p.Method.Card.Last4 != "4242" {
		t.Fatalf("charged: checkout %s, in flight %v, method %+v", c.Status, p.InFlight(), p.Method.Card)
	}
	if err := c.CheckRetry(p, 1); ErrorCode(err) != ErrCheckoutNotRetryable {
		t.Fatalf("retry once charged: %v", err)
	}
	if err := c.CheckAwaiting(); ErrorCode(err) != ErrCheckoutNotAwaiting {
		t.Fatalf("awaiting once charged: %v", err)
	}
	if _, err := c.Replace("chk_2", now); ErrorCode(err) != ErrCheckoutNotSupersedable {
		t.Fatalf("replace once charged: %v", err)
	}
	if _, err := p.Cancel(now); err == nil {
		t.Fatal("a charged payment was canceled")
	}
	c.ApplyCardReport(p, CardReport{Session: "s1", Status: CardDelivered, TxHash: "0xabc"}, now)
	if c.Card.TxHash != "0xabc" || c.Status != CheckoutProcessing {
		t.Fatalf("delivered: %+v", c.Card)
	}
	// The delivery confirms on the network: the watcher's Observe counts it.
	q := c.Crypto
	seen := []Transfer{{TxHash: "0xabc", To: q.Deposit.Address, Amount: q.Amount, Confirmations: c.Required}}
	c.Observe(p, seen, explorer, now)
	if p.Status != PaymentSucceeded || *p.Reporting.FeeUSD != 150 || p.Reporting.NetUSD != 4850 ||
		p.Settlement.Amount != "48.50" || p.Method.Amount != "50.00" {
		t.Fatalf("after the delivery: %s fee %v net %d settlement %+v method %+v", p.Status, p.Reporting.FeeUSD,
			p.Reporting.NetUSD, p.Settlement, p.Method)
	}

	// A link's payment fails with its card checkout.
	p, c = open(true)
	for route := 1; route <= CardMaxRoutes; route++ {
		if route > 1 {
			c.NextRoute(p, now)
			c.AttachSession(route, CardSession{ID: fmt.Sprintf("s%d", route)}, now)
		}
		c.ApplyCardReport(p, CardReport{Session: fmt.Sprintf("s%d", route), Status: CardDeclined}, now)
	}
	if c.Status != CheckoutFailed || p.Status != PaymentFailed || p.FailureCode != CardDeclinedGeneric {
		t.Fatalf("link payment after the last decline: %s %s", p.Status, p.FailureCode)
	}
}

// TestCardEdges: the customer's fee counts in amount_received; a route
// whose session never opened holds nothing up; a checkout whose page may
// still take the payment is held past its quote, up to CardHold; a decline
// after a reported charge puts the checkout back to open.
func TestCardEdges(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	open := func(payer money.FeePayer) (*Payment, *Checkout) {
		p, err := NewPayment("biz_1", PaymentParams{Amount: 5000, Currency: money.USD, FeePayer: payer}, coinRates, false, now)
		if err != nil {
			t.Fatal(err)
		}
		ci := CardOpenParams{Asset: money.USDC, Network: money.Polygon, Rates: coinRates, QuoteMinutes: 15, Provider: "test", Required: 1}
		tm, q, gross, err := CardQuote(p, ci)
		if err != nil {
			t.Fatal(err)
		}
		return p, OpenCardCheckout(p, ci, tm, q, gross, now)
	}

	p, c := open(money.FeePayerCustomer)
	c.AttachSession(1, CardSession{ID: "s1"}, now)
	c.ApplyCardReport(p, CardReport{Session: "s1", Status: CardDelivered, TxHash: "0x1"}, now)
	c.Observe(p, []Transfer{{TxHash: "0x1", To: c.Crypto.Deposit.Address, Amount: c.Crypto.Amount, Confirmations: 1}}, explorer, now)
	if p.Status != PaymentSucceeded || p.AmountReceived != p.Amount+p.CustomerFee || p.CustomerFee != 150 ||
		p.Reporting.NetUSD != 5000 || *p.Reporting.FeeUSD != 150 {
		t.Fatalf("customer pays the fee: %s received %d of %d+%d, net %d", p.Status, p.AmountReceived, p.Amount,
			p.CustomerFee, p.Reporting.NetUSD)
	}

	_, c = open(money.FeePayerBusiness)
	if _, err := c.Replace("chk_2", now); err != nil {
		t.Fatalf("a route without a session blocks a replacement: %v", err)
	}
	p, c = open(money.FeePayerBusiness)
	if _, err := c.Cancel(p, now); err != nil {
		t.Fatalf("a route without a session blocks a cancel: %v", err)
	}

	p, c = open(money.FeePayerBusiness)
	c.AttachSession(1, CardSession{ID: "s1"}, now)
	if c.Expire(p, c.ExpiresAt.Add(CardHold-time.Second)); c.Status != CheckoutOpen {
		t.Fatalf("expired while the provider's page may still take the payment")
	}
	c.ApplyCardReport(p, CardReport{Session: "s1", Status: CardProcessing}, c.ExpiresAt.Add(time.Minute))
	if c.Status != CheckoutProcessing {
		t.Fatalf("a charge after the quote's end: %s", c.Status)
	}
	c.ApplyCardReport(p, CardReport{Session: "s1", Status: CardDeclined}, c.ExpiresAt.Add(2*time.Minute))
	if c.Status != CheckoutOpen || p.InFlight() {
		t.Fatalf("a decline after the charge: checkout %s, in flight %v", c.Status, p.InFlight())
	}
	c.Expire(p, c.ExpiresAt.Add(3*time.Minute))
	if c.Status != CheckoutExpired {
		t.Fatalf("declined past its quote: %s", c.Status)
	}

	p, c = open(money.FeePayerBusiness)
	c.AttachSession(1, CardSession{ID: "s1"}, now)
	if c.Expire(p, c.ExpiresAt.Add(CardHold)); c.Status != CheckoutExpired {
		t.Fatalf("held beyond CardHold: %s", c.Status)
	}
}
