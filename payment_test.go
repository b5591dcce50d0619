package payd

import (
	"errors"
	"strings"
	"testing"
	"time"

	"payd/money"
)

var (
	testNow   = time.Date(2031, 4, 5, 6, 7, 8, 0, time.UTC)
	testRates = &ExchangeRates{Fiat: map[money.Currency]money.Rate{money.USD: money.MustRate("1"),
		money.EUR: money.MustRate("1.0842"), money.AUD: money.MustRate("0.65")}}
)

// mustPayment makes a valid pending payment of 100.00 USD.
func mustPayment(t *testing.T, change ...func(*PaymentParams)) *Payment {
	t.Helper()
	in := PaymentParams{Amount: 10_000, Currency: money.USD, FeePayer: money.FeePayerBusiness}
	for _, c := range change {
		c(&in)
	}
	p, err := NewPayment("biz_1", in, testRates, false, testNow)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// wantErr fails unless err is a payd error with code (and field, if given).
func wantErr(t *testing.T, err error, code string, field ...string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Code != code || (len(field) > 0 && e.Field != field[0]) {
		t.Fatalf("error = %v, want %s %v", err, code, field)
	}
}

func TestNewPayment(t *testing.T) {
	p := mustPayment(t, func(in *PaymentParams) { in.Currency, in.Amount = money.EUR, 1000 })
	if p.Status != PaymentPending || p.Reporting.AmountUSD != 1084 || p.Reporting.NetUSD != 1084 || p.Reporting.FeeUSD != nil ||
		p.FeeRateBps != 0 || len(p.Events) != 1 || p.Events[0].Type != EventCreated || p.Events[0].Data != nil ||
		!HasPrefix(p.ID, PrefixPayment) || len(p.Code) != 20 || p.Metadata == nil || !p.UpdatedAt.Equal(testNow) {
		t.Fatalf("NewPayment = %+v", p)
	}
	cases := []struct {
		change func(*PaymentParams)
		field  string
	}{
		{func(in *PaymentParams) { in.Currency = "usd" }, "currency"},
		{func(in *PaymentParams) { in.Amount = 99 }, "amount"},
		{func(in *PaymentParams) { in.Amount = money.MaxPrice + 1 }, "amount"},
		{func(in *PaymentParams) { in.Currency, in.Amount = money.AUD, 153 }, "amount"},
		{func(in *PaymentParams) { in.FeePayer = "" }, "fee_payer"},
		{func(in *PaymentParams) { in.Country = "D1" }, "country"},
		{func(in *PaymentParams) { in.SuccessURL = "http://shop.example" }, "success_url"},
		{func(in *PaymentParams) { in.CancelURL = "https://user:pw@shop.example" }, "cancel_url"},
		{func(in *PaymentParams) { in.Reference = "x " }, "reference"},
		{func(in *PaymentParams) { in.Description = strings.Repeat("x", MaxDescriptionLen+1) }, "description"},
		{func(in *PaymentParams) { at := testNow.Add(59 * time.Second); in.ExpiresAt = &at }, "expires_at"},
		{func(in *PaymentParams) { at := testNow.Add(MaxPaymentLifetime + 1); in.ExpiresAt = &at }, "expires_at"},
		{func(in *PaymentParams) { in.Metadata = map[string]string{"PAYD_x": "1"} }, "metadata"},
	}
	for _, tc := range cases {
		in := PaymentParams{Amount: 10_000, Currency: money.USD, FeePayer: money.FeePayerBusiness}
		tc.change(&in)
		_, err := NewPayment("biz_1", in, testRates, false, testNow)
		wantErr(t, err, ErrInvalidRequest, tc.field)
	}
	_, err := NewPayment("biz_1", PaymentParams{Amount: 1000, Currency: money.GBP, FeePayer: money.FeePayerBusiness}, testRates, false, testNow)
	if err == nil || ErrorCode(err) == ErrInvalidRequest {
		t.Fatalf("a currency without a rate is the service's problem, not the caller's: %v", err)
	}
}

func TestCancelAndAccept(t *testing.T) {
	later := testNow.Add(time.Minute)
	p := mustPayment(t)
	if changed, err := p.Cancel(later); err != nil || !changed || p.Status != PaymentFailed || p.FailureCode != FailureCanceled ||
		!p.CanceledAt.Equal(later) || p.Events[1].Type != EventCanceled || !p.UpdatedAt.Equal(later) {
		t.Fatalf("Cancel: %v %+v", err, p)
	}
	if changed, err := p.Cancel(later.Add(time.Hour)); err != nil || changed || len(p.Events) != 2 {
		t.Fatalf("a second Cancel changed something: %v %v", changed, err)
	}
	refusals := []struct {
		change func(*Payment)
		code   string
	}{
		{func(p *Payment) { p.LinkID = "lnk_1" }, ErrPaymentNotCancelable},
		{func(p *Payment) { p.AmountReceived = 1 }, ErrPaymentNotCancelable},
		{func(p *Payment) { p.Status = PaymentNeedsReview }, ErrPaymentNotCancelable},
		{func(p *Payment) { p.Status = PaymentExpired }, ErrPaymentNotCancelable},
		{func(p *Payment) { p.Method = &Method{Rail: RailCrypto, TxHash: "h"} }, ErrPaymentInFlight},
	}
	for _, r := range refusals {
		p := mustPayment(t)
		r.change(p)
		_, err := p.Cancel(later)
		wantErr(t, err, r.code)
	}
	for _, st := range []PaymentStatus{PaymentPending, PaymentSucceeded, PaymentFailed, PaymentExpired} {
		p := mustPayment(t)
		p.Status = st
		wantErr(t, p.Accept(later), ErrPaymentNotAcceptable)
	}
	p = mustPayment(t, func(in *PaymentParams) { in.FeePayer = money.FeePayerCustomer })
	p.Status, p.FeeRateBps, p.Reporting.CustomerFeeUSD = PaymentNeedsReview, 300, 300
	if err := p.Accept(later); err != nil || p.Status != PaymentSucceeded || *p.Reporting.FeeUSD != 300 ||
		p.Reporting.TransactionFeeUSD != 0 || p.Reporting.NetUSD != 10_000 ||
		string(p.Events[1].Data) != `{"previous_status":"needs_review"}` || p.Events[2].Type != EventSucceeded {
		t.Fatalf("Accept: %v %+v", err, p)
	}
}

func TestReuseFor(t *testing.T) {
	soon := testNow.Add(time.Hour)
	cases := []struct {
		name   string
		change func(*Payment)
		amount int64
		c      money.Currency
		ok     bool
		code   string
	}{
		{"same request", nil, 10_000, money.USD, true, ""},
		{"other amount", nil, 10_001, money.USD, false, ErrReferenceInUse},
		{"other currency", nil, 10_000, money.EUR, false, ErrReferenceInUse},
		{"funds arrived", func(p *Payment) { p.AmountReceived = 5 }, 10_000, money.USD, false, ErrReferenceInUse},
		{"succeeded", func(p *Payment) { p.Status = PaymentSucceeded }, 10_000, money.USD, false, ErrReferenceInUse},
		{"canceled", func(p *Payment) { p.Status = PaymentFailed }, 10_000, money.USD, false, ""},
		{"expired", func(p *Payment) { p.Status = PaymentExpired }, 1, money.EUR, false, ""},
		{"past expires_at", func(p *Payment) { p.ExpiresAt = &testNow }, 1, money.EUR, false, ""},
		{"before expires_at", func(p *Payment) { p.ExpiresAt = &soon }, 10_000, money.USD, true, ""},
	}
	for _, tc := range cases {
		p := mustPayment(t)
		if tc.change != nil {
			tc.change(p)
		}
		ok, err := p.ReuseFor(tc.amount, tc.c, testNow)
		if ok != tc.ok || (err != nil) != (tc.code != "") || err != nil && ErrorCode(err) != tc.code {
			t.Errorf("%s: ReuseFor = %v, %v", tc.name, ok, err)
		}
	}
}

func TestPaymentStatsDelta(t *testing.T) {
	p := mustPayment(t)
	d := PaymentStatsDelta(nil, p)
	if d.Payments != 1 || d.Succeeded != 0 || d.VolumeUSD != 0 || d.LastPaymentAt == nil || !d.LastPaymentAt.Equal(testNow) {
		t.Fatalf("new payment: %+v", d)
	}
	old := *p
	p.Status, p.Method = PaymentSucceeded, &Method{Rail: RailCrypto}
	if d := PaymentStatsDelta(&old, p); d != (StatsDelta{Succeeded: 1, VolumeUSD: 10_000, Crypto: 1}) {
		t.Fatalf("success: %+v", d)
	}
	if d := PaymentStatsDelta(p, p); !d.IsZero() {
		t.Fatalf("no change: %+v", d)
	}
	back := *p
	back.Status = PaymentNeedsReview
	if d := PaymentStatsDelta(p, &back); d != (StatsDelta{Succeeded: -1, VolumeUSD: -10_000, Crypto: -1}) {
		t.Fatalf("undone success: %+v", d)
	}
	card := mustPayment(t)
	card.Status, card.Method = PaymentSucceeded, &Method{Rail: RailCard}
	if d := PaymentStatsDelta(nil, card); d.Payments != 1 || d.Succeeded != 1 || d.Card != 1 || d.VolumeUSD != 10_000 {
		t.Fatalf("new succeeded card payment: %+v", d)
	}
}

func TestCheckoutSettingsValidate(t *testing.T) {
	s := DefaultCheckoutSettings("biz_1")
	if err := s.Validate(); err != nil || len(s.Offers()) != 9 || !s.AcceptsRail(RailCard) {
		t.Fatalf("defaults: %v, %d offers", err, len(s.Offers()))
	}
	s.AcceptedRails = []Rail{RailCard, RailCrypto}
	s.AcceptedAssets = map[money.Network][]money.Asset{money.Ethereum: {money.ETH, money.USDC}, money.Tron: {}}
	if err := s.Validate(); err != nil || s.AcceptedRails[0] != RailCrypto || len(s.AcceptedAssets) != 1 ||
		s.AcceptedAssets[money.Ethereum][0] != money.USDC {
		t.Fatalf("canonical order: %v %+v", err, s)
	}
	if o := s.Offers(); len(o) != 2 || o[0] != (Offer{money.USDC, money.Ethereum}) || o[1] != (Offer{money.ETH, money.Ethereum}) {
		t.Fatalf("Offers = %v", o)
	}
	for field, change := range map[string]func(*CheckoutSettings){
		"quote_minutes":            func(s *CheckoutSettings) { s.QuoteMinutes = MaxQuoteMinutes + 1 },
		"fee_payer":                func(s *CheckoutSettings) { s.FeePayer = "x" },
		"accepted_rails":           func(s *CheckoutSettings) { s.AcceptedRails = nil },
		"accepted_assets":          func(s *CheckoutSettings) { s.AcceptedAssets = nil },
		"accepted_assets.bitcoin":  func(s *CheckoutSettings) { s.AcceptedAssets[money.Bitcoin] = []money.Asset{money.ETH} },
		"accepted_assets.litecoin": func(s *CheckoutSettings) { s.AcceptedAssets["litecoin"] = []money.Asset{money.BTC} },
	} {
		s := DefaultCheckoutSettings("biz_1")
		change(s)
		wantErr(t, s.Validate(), ErrInvalidRequest, field)
	}
}

// FuzzCheckMetadata checks that the metadata rules never panic and that
// whatever they accept can be written as metadata[key] in a query string.
func FuzzCheckMetadata(f *testing.F) {
	for _, s := range [][2]string{{"order_id", "A-1"}, {"payd_x", "y"}, {"k[0]", "v"}, {"", ""},
		{strings.Repeat("k", 41), "v"}, {"k", strings.Repeat("é", 501)}, {"a.b-c:d", "line\nbreak"}, {"k", "\x01"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, k, v string) {
		err := CheckMetadata(map[string]string{k: v})
		if err == nil {
			if strings.ContainsAny(k, "[]&=%+# ") || k == "" || len(k) > MaxMetadataKeyLen ||
				strings.HasPrefix(strings.ToLower(k), "payd_") {
				t.Fatalf("accepted key %q", k)
			}
			return
		}
		if ErrorCode(err) != ErrInvalidRequest {
			t.Fatalf("error %v is not invalid_request", err)
		}
	})
}
