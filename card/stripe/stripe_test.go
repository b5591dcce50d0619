package stripe

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/card/stripe/stripetest"
	"payd/clock"
	"payd/money"
)

// bundle is a provider pointed at a replaying Stripe, on a fake clock.
type bundle struct {
	t     *testing.T
	api   *stripetest.Server
	clock *clock.Fake
	p     *Provider
}

func setup(t *testing.T) *bundle {
	t.Helper()
	api := stripetest.New(t, "testdata")
	clk := clock.NewFake(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
	p, err := New(Config{SecretKey: stripetest.SecretKey, WebhookSecret: stripetest.WebhookSecret, BaseURL: api.URL,
		HTTPClient: &http.Client{Timeout: 2 * time.Second}, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return &bundle{t: t, api: api, clock: clk, p: p}
}

// request is a route's session request for 97 USDC on polygon.
func request() payd.CardSessionRequest {
	return payd.CardSessionRequest{CheckoutID: "chk_test", Route: 1, Amount: 10_000, Currency: money.USD,
		Deliver: money.NewCoinAmount(money.USDC, 97_000_000), Network: money.Polygon,
		Address: "0xB00F0759DbeeF5E543Cc3E3B07A6442F5f3928a2", Email: "a@example.com", CustomerIP: "8.8.8.8",
		ReturnURL: "https://pay.example/p/x?checkout=chk_test"}
}

// code is the payd error code of err ("" for nil).
func code(err error) string {
	if err == nil {
		return ""
	}
	return payd.ErrorCode(err)
}

func TestNew(t *testing.T) {
	for _, c := range []Config{{WebhookSecret: "w"}, {SecretKey: "k"}, {SecretKey: "k", WebhookSecret: "w", BaseURL: "api.stripe.com"},
		{SecretKey: "k", WebhookSecret: "w", BaseURL: "ftp://api.stripe.com"}} {
		if _, err := New(c); err == nil {
			t.Errorf("New(%+v) accepted", c)
		}
	}
	p, err := New(Config{SecretKey: "k", WebhookSecret: "w", HTTPClient: &http.Client{}})
	if err != nil {
		t.Fatal(err)
	}
	if p.base != DefaultBaseURL || p.http.Timeout != DefaultTimeout || p.clock == nil || p.Name() != "stripe" {
		t.Errorf("defaults: base %q timeout %s", p.base, p.http.Timeout)
	}
	if p.NeedsEmail() || p.Limits(money.USD, "US") != (payd.CardLimits{}) {
		t.Error("Stripe documents no required email and no fixed limits")
	}
}

func TestDelivers(t *testing.T) {
	p := setup(t).p
	yes := map[money.Asset][]money.Network{money.USDC: {money.Ethereum, money.Polygon},
		money.ETH: {money.Ethereum}, money.BTC: {money.Bitcoin}}
	for _, a := range money.Assets {
		for _, n := range money.Networks {
			want := false
			for _, x := range yes[a] {
				want = want || x == n
			}
			if got := p.Delivers(a, n); got != want {
				t.Errorf("Delivers(%s, %s) = %v, want %v", a, n, got, want)
			}
		}
	}
}

func TestStart(t *testing.T) {
	b := setup(t)
	req := request()
	got, err := b.p.Start(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != "cos_stripetest0001" || got.RedirectURL != "https://crypto.link.com?session_hash=stripetest1" {
		t.Fatalf("session = %+v", got)
	}
	f := b.api.Creates[0]
	want := map[string]string{"destination_currency": "usdc", "destination_network": "polygon", "destination_amount": "97.00",
		"destination_currencies[]": "usdc", "destination_networks[]": "polygon", "lock_wallet_address": "true",
		"wallet_addresses[polygon]": req.Address, "source_currency": "usd", "customer_ip_address": "8.8.8.8",
		"customer_information[email]": "a@example.com"}
	for k, v := range want {
		if f.Get(k) != v {
			t.Errorf("form %s = %q, want %q", k, f.Get(k), v)
		}
	}
	if len(f) != len(want) {
		t.Errorf("form has %d parameters, want %d: %v", len(f), len(want), f)
	}
	// A retry of the same request (after a timeout) gets the same session.
	again, err := b.p.Start(context.Background(), req)
	if err != nil || again != got || b.api.Keys[0] == "" || b.api.Keys[1] != b.api.Keys[0] {
		t.Fatalf("retry = %+v, %v; keys %q", again, err, b.api.Keys)
	}
	// Another route is another session.
	req.Route = 2
	if next, err := b.p.Start(context.Background(), req); err != nil || next.ID == got.ID {
		t.Fatalf("route 2 = %+v, %v", next, err)
	}
}

func TestStartOptional(t *testing.T) {
	b := setup(t)
	req := request()
	req.Currency, req.CustomerIP, req.Email = money.GBP, "127.0.0.1", ""
	req.Deliver, req.Network, req.Address = money.NewCoinAmount(money.BTC, 123_456), money.Bitcoin, "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"
	if _, err := b.p.Start(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	f := b.api.Creates[0]
	for _, k := range []string{"source_currency", "customer_ip_address", "customer_information[email]"} {
		if f.Has(k) {
			t.Errorf("%s sent: %q", k, f.Get(k))
		}
	}
	if f.Get("destination_amount") != "0.00123456" || f.Get("wallet_addresses[bitcoin]") != req.Address {
		t.Errorf("form = %v", f)
	}
	for _, ip := range []string{"10.0.0.1", "::1", "fe80::1", "nonsense", ""} {
		if _, ok := publicIP(ip); ok {
			t.Errorf("publicIP(%q) passed", ip)
		}
	}
	if ip, ok := publicIP("::ffff:8.8.4.4"); !ok || ip != "8.8.4.4" {
		t.Errorf("publicIP(mapped) = %q", ip)
	}
	req.Deliver, req.Network = money.NewCoinAmount(money.USDT, 1), money.Tron
	if _, err := b.p.Start(context.Background(), req); code(err) != payd.ErrAssetUnavailable {
		t.Errorf("USDT on tron: %v", err)
	}
}

// TestStartRefusesUnlocked: a minted session that would not deliver only to
// the deposit is not used.
func TestStartRefusesUnlocked(t *testing.T) {
	b := setup(t)
	b.api.Next(http.StatusOK, "event_session_updated.json") // not a session at all
	b.api.Next(http.StatusOK, "session_created.json")       // locked to the fixture's address, not this one
	req := request()
	req.Address = "0x1111111111111111111111111111111111111111"
	for range 2 {
		if _, err := b.p.Start(context.Background(), req); code(err) != payd.ErrUpstreamUnavailable {
			t.Errorf("got %v, want upstream_unavailable", err)
		}
	}
}

func TestStartErrors(t *testing.T) {
	for _, tt := range []struct {
		status            int
		fixture, code, in string
	}{
		{400, "error_unsupportable_customer.json", payd.ErrTemporarilyUnavailable, "crypto_onramp_unsupportable_customer"},
		{400, "error_disabled.json", payd.ErrUpstreamUnavailable, "HTTP 400"},
		{401, "error_invalid_api_key.json", payd.ErrTemporarilyUnavailable, "invalid_request_error, request req_stripetest"},
		{429, "error_rate_limit.json", payd.ErrUpstreamUnavailable, "HTTP 429"},
		{500, "error_api.json", payd.ErrUpstreamUnavailable, "HTTP 500"},
		{503, "error_api.json", payd.ErrUpstreamUnavailable, "HTTP 503"},
	} {
		b := setup(t)
		b.api.Next(tt.status, tt.fixture)
		_, err := b.p.Start(context.Background(), request())
		if code(err) != tt.code || !strings.Contains(err.Error(), tt.in) {
			t.Errorf("%d %s: %v, want %s with %q", tt.status, tt.fixture, err, tt.code, tt.in)
		}
		if err != nil && strings.Contains(err.Error(), "sk_test") {
			t.Errorf("%s: Stripe's free text reached the message: %v", tt.fixture, err)
		}
		if len(b.api.Creates) != 0 {
			t.Errorf("%s: retried", tt.fixture)
		}
	}
}

func TestStartWrongKey(t *testing.T) {
	b := setup(t)
	p, err := New(Config{SecretKey: "sk_test_wrong", WebhookSecret: "w", BaseURL: b.api.URL, Clock: b.clock})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Start(context.Background(), request()); code(err) != payd.ErrTemporarilyUnavailable {
		t.Errorf("wrong key: %v", err)
	}
}

func TestStartTimeout(t *testing.T) {
	b := setup(t)
	b.p.http = &http.Client{Timeout: 100 * time.Millisecond}
	b.api.HangNext()
	if _, err := b.p.Start(context.Background(), request()); code(err) != payd.ErrUpstreamUnavailable {
		t.Errorf("timeout: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.p.Status(ctx, "cos_x"); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
}

func TestStatus(t *testing.T) {
	b := setup(t)
	s, err := b.p.Start(context.Background(), request())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		fixture string
		want    payd.CardReport
	}{
		{"session_created.json", payd.CardReport{Status: payd.CardAwaiting}},
		{"session_requires_payment.json", payd.CardReport{Status: payd.CardAwaiting}},
		{"session_fulfillment_processing.json", payd.CardReport{Status: payd.CardProcessing}},
		{"session_fulfillment_complete.json", payd.CardReport{Status: payd.CardDelivered,
			TxHash: "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060"}},
		{"session_rejected.json", payd.CardReport{Status: payd.CardDeclined, DeclineCode: payd.CardDeclinedGeneric,
			DeclineMessage: rejectedMessage}},
	} {
		b.api.Set(s.ID, tt.fixture)
		got, err := b.p.Status(context.Background(), s.ID)
		tt.want.Session, tt.want.Reference = s.ID, s.ID
		if err != nil || got != tt.want {
			t.Errorf("%s: %+v, %v; want %+v", tt.fixture, got, err, tt.want)
		}
	}
	if _, err := b.p.Status(context.Background(), "cos_unknown"); code(err) != payd.ErrTemporarilyUnavailable {
		t.Errorf("unknown session: %v", err)
	}
	if _, err := b.p.Status(context.Background(), "../v1/charges"); code(err) != payd.ErrInvalidRequest {
		t.Errorf("path in id: %v", err)
	}
	b.api.Next(http.StatusTooManyRequests, "error_rate_limit.json")
	if _, err := b.p.Status(context.Background(), s.ID); code(err) != payd.ErrUpstreamUnavailable {
		t.Errorf("429: %v", err)
	}
}

// signed is a webhook request's header for body signed at the clock's now.
func (b *bundle) signed(body []byte, at time.Time) http.Header {
	return http.Header{"Stripe-Signature": {stripetest.Sign(stripetest.WebhookSecret, at, body)}}
}

func TestWebhook(t *testing.T) {
	b := setup(t)
	s, err := b.p.Start(context.Background(), request())
	if err != nil {
		t.Fatal(err)
	}
	b.api.Set(s.ID, "session_fulfillment_processing.json")
	body := b.api.Event(s.ID)
	now := b.clock.Now()
	want := []payd.CardReport{{Session: s.ID, Reference: s.ID, Status: payd.CardProcessing}}
	for i := range 2 { // a replay is reported again; payd applies it idempotently
		got, err := b.p.Webhook(b.signed(body, now), body)
		if err != nil || len(got) != 1 || got[0] != want[0] {
			t.Fatalf("delivery %d: %+v, %v", i, got, err)
		}
	}
	// Within the tolerance either way is fine; beyond it is stale.
	for d, ok := range map[time.Duration]bool{-5 * time.Minute: true, 5 * time.Minute: true,
		-5*time.Minute - time.Second: false, 5*time.Minute + time.Second: false} {
		_, err := b.p.Webhook(b.signed(body, now.Add(d)), body)
		if (err == nil) != ok || (!ok && code(err) != payd.ErrInvalidSignature) {
			t.Errorf("signed %s from now: %v", d, err)
		}
	}
	// A rolled secret: one old and one current v1; the v0 decoy is ignored.
	good := stripetest.Sign(stripetest.WebhookSecret, now, body)
	bad := stripetest.Sign("whsec_old", now, body)
	h := http.Header{"Stripe-Signature": {bad + "," + strings.Split(good, ",")[1] + ",v0=" + strings.Repeat("ab", 32)}}
	if got, err := b.p.Webhook(h, body); err != nil || len(got) != 1 {
		t.Errorf("two v1: %+v, %v", got, err)
	}
	for name, h := range map[string]http.Header{
		"missing":       {},
		"wrong secret":  {"Stripe-Signature": {bad}},
		"v0 only":       {"Stripe-Signature": {strings.Replace(good, "v1=", "v0=", 1)}},
		"no timestamp":  {"Stripe-Signature": {strings.Split(good, ",")[1]}},
		"two t":         {"Stripe-Signature": {good + ",t=1"}},
		"other body":    b.signed(append([]byte(" "), body...), now),
		"not hex":       {"Stripe-Signature": {"t=1,v1=zz"}},
		"garbage":       {"Stripe-Signature": {"hello"}},
		"lowercase key": {"Stripe-Signature": {strings.Replace(good, "t=", "T=", 1)}},
	} {
		if got, err := b.p.Webhook(h, body); code(err) != payd.ErrInvalidSignature || got != nil {
			t.Errorf("%s: %+v, %v", name, got, err)
		}
	}
}

func TestWebhookEvents(t *testing.T) {
	b := setup(t)
	now := b.clock.Now()
	read := func(name string) []byte {
		raw, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	// Another event type: nothing to report.
	other := read("event_other.json")
	if got, err := b.p.Webhook(b.signed(other, now), other); err != nil || len(got) != 0 {
		t.Errorf("other event: %+v, %v", got, err)
	}
	// The guide's own example, a session payd never opened: reported (payd
	// ignores sessions it does not follow).
	doc := read("event_session_updated.json")
	got, err := b.p.Webhook(b.signed(doc, now), doc)
	if err != nil || len(got) != 1 || got[0].Session != "cos_0MYvv9589O8KAxCGPm84FhVR" || got[0].Status != payd.CardAwaiting {
		t.Errorf("unknown session: %+v, %v", got, err)
	}
	b.api.Set("cos_elsewhere", "session_fulfillment_complete.json")
	ev := b.api.Event("cos_elsewhere")
	if got, err := b.p.Webhook(b.signed(ev, now), ev); err != nil || len(got) != 1 || got[0].Status != payd.CardDelivered ||
		!strings.HasPrefix(got[0].TxHash, "0x5c50") {
		t.Errorf("delivered: %+v, %v", got, err)
	}
	// A well-signed body that is not an event, or whose session is not
	// one, is invalid_json; an unknown status reports nothing.
	for _, body := range []string{`[]`, `{"object":"event","type":"crypto.onramp_session_updated","data":{"object":{"id":"x"}}}`} {
		if _, err := b.p.Webhook(b.signed([]byte(body), now), []byte(body)); code(err) != payd.ErrInvalidJSON {
			t.Errorf("%s: %v", body, err)
		}
	}
	odd := []byte(`{"object":"event","type":"crypto.onramp_session_updated","data":{"object":{"id":"cos_1","object":"crypto.onramp_session","status":"refunded"}}}`)
	if got, err := b.p.Webhook(b.signed(odd, now), odd); err != nil || len(got) != 0 {
		t.Errorf("unknown status: %+v, %v", got, err)
	}
}

// fixtures are the testdata files whose name starts with prefix.
func fixtures(f *testing.F, prefix string) [][]byte {
	names, err := filepath.Glob(filepath.Join("testdata", prefix+"*.json"))
	if err != nil || len(names) == 0 {
		f.Fatalf("no %s fixtures: %v", prefix, err)
	}
	var out [][]byte
	for _, n := range names {
		raw, err := os.ReadFile(n)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, raw)
	}
	return out
}

func FuzzDecodeSession(f *testing.F) {
	for _, raw := range fixtures(f, "session_") {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, err := decodeSession(raw)
		if err != nil {
			return
		}
		if s.ID == "" || s.Object != objectSession {
			t.Fatalf("accepted %+v", s)
		}
		if r, ok := s.report(); ok && (!r.Status.Valid() || r.Session != s.ID) {
			t.Fatalf("report %+v", r)
		}
		s.lockedTo("polygon", "0xabc")
	})
}

func FuzzWebhook(f *testing.F) {
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for _, raw := range append(fixtures(f, "event_"), fixtures(f, "session_")...) {
		f.Add(stripetest.Sign(stripetest.WebhookSecret, at, raw), raw)
	}
	f.Add("t=1,v1=00,v1=", []byte("{}"))
	p, err := New(Config{SecretKey: "k", WebhookSecret: stripetest.WebhookSecret, Clock: clock.NewFake(at)})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, sig string, body []byte) {
		reps, err := p.Webhook(http.Header{"Stripe-Signature": {sig}}, body)
		if err != nil {
			if c := code(err); c != payd.ErrInvalidSignature && c != payd.ErrInvalidJSON {
				t.Fatalf("error %v", err)
			}
			return
		}
		for _, r := range reps {
			if !r.Status.Valid() || r.Session == "" {
				t.Fatalf("report %+v", r)
			}
		}
	})
}

func FuzzParseSignature(f *testing.F) {
	f.Add(stripetest.Sign("s", time.Unix(1492774577, 0), []byte("{}")))
	f.Add("t=1492774577,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd,v0=6ffbb59b2300aae63f272406069a9788598b792a944a07aba816edb039989a39")
	f.Fuzz(func(t *testing.T, h string) {
		ts, sigs, ok := parseSignature(h)
		if ok && (ts <= 0 || len(sigs) == 0 || len(sigs) > maxSignatures) {
			t.Fatalf("%q: t %d, %d signatures", h, ts, len(sigs))
		}
	})
}
