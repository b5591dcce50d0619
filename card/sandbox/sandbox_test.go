package sandbox

import (
	"context"
	"errors"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"payd"
	"payd/chain/devnet"
	"payd/clock"
	"payd/money"
	"payd/store"
	"payd/store/storetest"
)

func TestParseNumber(t *testing.T) {
	for in, want := range map[string]string{
		"4242424242424242":      "4242424242424242",
		" 4242 4242 4242 4242 ": "4242424242424242",
		"4000-0000-0000-0077":   "4000000000000077",
		"378282246310005":       "378282246310005",
	} {
		if got, err := ParseNumber(in); got != want || err != nil {
			t.Errorf("ParseNumber(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]error{
		"":                     errNoNumber,
		"   ":                  errNoNumber,
		"4242 4242 4242 424x":  errCharacter,
		"４２４２":                 errCharacter,
		"42424242":             errLength,
		"42424242424242424242": errLength,
		"4242424242424241":     errChecksum,
	} {
		if got, err := ParseNumber(in); got != "" || err != want {
			t.Errorf("ParseNumber(%q) = %q, %v; want %v", in, got, err, want)
		}
	}
	if _, _, err := lookupCard("5555 5555 5555 4444"); err != errNotTest {
		t.Errorf("a valid number that is no test card: %v", err)
	}
	for n := range testCards {
		if got, err := ParseNumber(n); got != n || err != nil {
			t.Errorf("test card %s does not parse: %q, %v", n, got, err)
		}
	}
}

// FuzzParseNumber: whatever is typed, ParseNumber does not panic, and
// what it accepts is 12 to 19 digits with a good checksum that parse to
// themselves.
func FuzzParseNumber(f *testing.F) {
	for _, s := range []string{"4242424242424242", "4242 4242 4242 4242", "4000-0000-0000-0002", "", "x", "1234",
		"42424242424242424242", "4242424242424241", "0000000000000", "\t4000000000009995\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseNumber(s)
		if err != nil {
			if n != "" {
				t.Fatalf("ParseNumber(%q) = %q with error %v", s, n, err)
			}
			return
		}
		if len(n) < 12 || len(n) > 19 || strings.Trim(n, "0123456789") != "" || !luhn([]byte(n)) {
			t.Fatalf("ParseNumber(%q) = %q", s, n)
		}
		if again, err := ParseNumber(n); again != n || err != nil {
			t.Fatalf("ParseNumber(%q) = %q, %v; want itself", n, again, err)
		}
	})
}

// countingDevnet is the devnet as Deliverer, counting the deliveries.
// down makes it fail, as a network that cannot be reached would.
type countingDevnet struct {
	*devnet.Devnet
	n    atomic.Int32
	down atomic.Bool
}

func (c *countingDevnet) Deliver(ctx context.Context, n money.Network, to payd.Deposit, amount money.CoinAmount) (string, error) {
	if c.down.Load() {
		return "", errors.New("the network cannot be reached")
	}
	c.n.Add(1)
	return c.Devnet.Deliver(ctx, n, to, amount)
}

// rig is a provider on a real database and devnet, its pages on a
// loopback server.
type rig struct {
	t     *testing.T
	p     *Provider
	dn    *countingDevnet
	clk   *clock.Offset
	srv   *httptest.Server
	http  *http.Client
	notes atomic.Int32
}

func newRig(t *testing.T, db *store.DB) *rig {
	clk := clock.NewOffset()
	dn, err := devnet.New(context.Background(), db, clk, "http://payd.test/api/v1")
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, dn: &countingDevnet{Devnet: dn}, clk: clk}
	r.p, err = New(Options{Store: db, Clock: clk, PublicURL: "http://payd.test/", Deliverer: r.dn, Log: storetest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	r.p.Notify = func(context.Context, string) { r.notes.Add(1) }
	r.srv = httptest.NewServer(r.p.Handler())
	t.Cleanup(r.srv.Close)
	r.http = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return r
}

const polygonAddr = "0x00000000000000000000000000000000000000aa"

// start opens a session delivering 97.00 USDC on polygon.
func (r *rig) start() string {
	r.t.Helper()
	s, err := r.p.Start(context.Background(), payd.CardSessionRequest{CheckoutID: "chk_1", Route: 1, Amount: 10_000,
		Currency: "USD", Deliver: money.CoinAmount{Asset: money.USDC, Units: big.NewInt(97_000_000)}, Network: money.Polygon,
		Address: polygonAddr, Email: "a@example.com", ReturnURL: "http://payd.test/p/abc?checkout=chk_1",
		ExpiresAt: r.clk.Now().Add(15 * time.Minute)})
	if err != nil {
		r.t.Fatal(err)
	}
	if !strings.HasPrefix(s.ID, "cs_") || s.RedirectURL != "http://payd.test/sandbox/card/"+s.ID {
		r.t.Fatalf("session = %+v", s)
	}
	return s.ID
}

// post submits a form to the page at path and answers the status, the
// Location and the body.
func (r *rig) post(path string, form url.Values) (int, string, string) {
	r.t.Helper()
	res, err := r.http.PostForm(r.srv.URL+path, form)
	if err != nil {
		r.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header.Get("Location"), string(b)
}

// page gets a session's page and answers its status and body.
func (r *rig) page(id string) (int, string) {
	r.t.Helper()
	res, err := r.http.Get(r.srv.URL + PagePath + id)
	if err != nil {
		r.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func (r *rig) status(id string) payd.CardReport {
	r.t.Helper()
	rep, err := r.p.Status(context.Background(), id)
	if err != nil {
		r.t.Fatal(err)
	}
	return rep
}

func TestProvider(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		r := newRig(t, db)
		back := "http://payd.test/p/abc?checkout=chk_1"
		t.Run("Pays", func(t *testing.T) {
			id := r.start()
			res, err := r.http.Get(r.srv.URL + PagePath + id)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != 200 || !strings.Contains(string(b), `<label for="number">`) ||
				!strings.Contains(string(b), "100.00 USD") || res.Header.Get("Content-Security-Policy") != pagePolicy {
				t.Fatalf("page: %d %s", res.StatusCode, b)
			}
			code, loc, _ := r.post(PagePath+id, url.Values{"number": {"4242 4242 4242 4242"}})
			if code != http.StatusSeeOther || loc != back {
				t.Fatalf("pay: %d %s", code, loc)
			}
			rep := r.status(id)
			if rep.Status != payd.CardDelivered || rep.Last4 != "4242" || rep.Brand != "visa" || rep.CardCountry != "US" ||
				rep.Reference != id || rep.TxHash == "" {
				t.Fatalf("report = %+v", rep)
			}
			tr, err := r.dn.Transaction("polygon", rep.TxHash)
			if err != nil || tr.Amount.String() != "97.00" || tr.To != polygonAddr {
				t.Fatalf("delivery = %+v, %v", tr, err)
			}
		})
		t.Run("UnknownNumber", func(t *testing.T) {
			id := r.start()
			before := r.notes.Load()
			for _, n := range []string{"5555555555554444", "4242", ""} {
				code, _, body := r.post(PagePath+id, url.Values{"number": {n}})
				if code != http.StatusUnprocessableEntity || !strings.Contains(body, `role="alert"`) {
					t.Fatalf("number %q: %d %s", n, code, body)
				}
			}
			if rep := r.status(id); rep.Status != payd.CardAwaiting || rep.Last4 != "" || r.notes.Load() != before {
				t.Fatalf("after unknown numbers: %+v", rep)
			}
		})
		t.Run("Declines", func(t *testing.T) {
			for number, want := range map[string]string{"4000000000000002": payd.CardDeclinedGeneric,
				"4000000000009995": payd.CardInsufficientFunds} {
				id := r.start()
				if code, loc, _ := r.post(PagePath+id, url.Values{"number": {number}}); code != 303 || loc != back {
					t.Fatalf("%s: %d %s", number, code, loc)
				}
				if rep := r.status(id); rep.Status != payd.CardDeclined || rep.DeclineCode != want || rep.DeclineMessage == "" {
					t.Fatalf("%s: %+v", number, rep)
				}
				// A second try on the same page changes nothing.
				r.post(PagePath+id, url.Values{"number": {"4242424242424242"}})
				if rep := r.status(id); rep.Status != payd.CardDeclined {
					t.Fatalf("%s then 4242: %+v", number, rep)
				}
			}
		})
		t.Run("Challenge", func(t *testing.T) {
			for result, want := range map[string]payd.CardStatus{"complete": payd.CardDelivered, "fail": payd.CardDeclined} {
				id := r.start()
				if code, loc, _ := r.post(PagePath+id, url.Values{"number": {"4000000000003220"}}); code != 303 || loc != PagePath+id {
					t.Fatalf("challenge card: %d %s", code, loc)
				}
				if rep := r.status(id); rep.Status != payd.CardChallenge {
					t.Fatalf("before the challenge: %+v", rep)
				}
				if code, body := r.page(id); code != 200 || !strings.Contains(body, `value="complete">Complete</button>`) ||
					!strings.Contains(body, `value="fail" class="secondary">Fail</button>`) || strings.Contains(body, `name="number"`) {
					t.Fatalf("challenge page: %d %s", code, body)
				}
				if code, _, _ := r.post(PagePath+id+"/challenge", url.Values{"result": {"maybe"}}); code != 400 {
					t.Fatalf("a bad result: %d", code)
				}
				if code, loc, _ := r.post(PagePath+id+"/challenge", url.Values{"result": {result}}); code != 303 || loc != back {
					t.Fatalf("%s: %d %s", result, code, loc)
				}
				rep := r.status(id)
				if rep.Status != want || (result == "fail" && rep.DeclineCode != payd.CardChallengeFailed) {
					t.Fatalf("%s: %+v", result, rep)
				}
				heading := map[string]string{"complete": "<h1>Paid</h1>", "fail": "<h1>Card declined</h1>"}[result]
				if code, body := r.page(id); code != 200 || !strings.Contains(body, heading) || strings.Contains(body, "<form") {
					t.Fatalf("page after %s: %d %s", result, code, body)
				}
			}
		})
		t.Run("DelayedOnce", func(t *testing.T) {
			id := r.start()
			r.post(PagePath+id, url.Values{"number": {"4000 0000 0000 0077"}})
			r.clk.Advance(Delay - time.Second)
			if rep := r.status(id); rep.Status != payd.CardProcessing {
				t.Fatalf("before it is due: %+v", rep)
			}
			before := r.dn.n.Load()
			r.clk.Advance(time.Second)
			done := make(chan payd.CardReport, 8)
			for range 8 {
				go func() {
					rep, err := r.p.Status(context.Background(), id)
					if err != nil {
						t.Error(err)
					}
					done <- rep
				}()
			}
			for range 8 {
				<-done
			}
			if rep := r.status(id); rep.Status != payd.CardDelivered || r.dn.n.Load()-before != 1 {
				t.Fatalf("after 8 polls: %+v, %d deliveries", rep, r.dn.n.Load()-before)
			}
		})
		t.Run("PaysFirstThenDelivers", func(t *testing.T) {
			// payd hears processing before the page sends the coin.
			id := r.start()
			var seen []payd.CardStatus
			r.p.Notify = func(ctx context.Context, s string) { seen = append(seen, r.status(s).Status) }
			defer func() { r.p.Notify = func(context.Context, string) { r.notes.Add(1) } }()
			r.post(PagePath+id, url.Values{"number": {"4242424242424242"}})
			if len(seen) != 2 || seen[0] != payd.CardProcessing || seen[1] != payd.CardDelivered {
				t.Fatalf("Notify saw %v", seen)
			}
		})
		t.Run("SendFailsThenPoll", func(t *testing.T) {
			id := r.start()
			before := r.dn.n.Load()
			r.dn.down.Store(true)
			if code, _, _ := r.post(PagePath+id, url.Values{"number": {"4242424242424242"}}); code != 303 {
				t.Fatalf("pay: %d", code)
			}
			r.dn.down.Store(false)
			if rep := r.status(id); rep.Status != payd.CardProcessing || r.dn.n.Load() != before {
				t.Fatalf("right after the failed send: %+v", rep)
			}
			r.clk.Advance(RetryAfter)
			if rep := r.status(id); rep.Status != payd.CardDelivered || r.dn.n.Load()-before != 1 {
				t.Fatalf("a poll after RetryAfter: %+v, %d deliveries", rep, r.dn.n.Load()-before)
			}
		})
		t.Run("Expired", func(t *testing.T) {
			id := r.start()
			r.clk.Advance(15 * time.Minute)
			if code, loc, _ := r.post(PagePath+id, url.Values{"number": {"4242424242424242"}}); code != 303 || loc != back {
				t.Fatalf("expired: %d %s", code, loc)
			}
			if rep := r.status(id); rep.Status != payd.CardDeclined || rep.DeclineCode != payd.CardSessionExpired {
				t.Fatalf("expired: %+v", rep)
			}
		})
		t.Run("Missing", func(t *testing.T) {
			if code, _, _ := r.post(PagePath+"cs_none", url.Values{"number": {"4242424242424242"}}); code != 404 {
				t.Fatalf("no session: %d", code)
			}
			if _, err := r.p.Status(context.Background(), "cs_none"); !payd.IsNotFound(err) {
				t.Fatalf("Status of no session: %v", err)
			}
		})
		t.Run("NoWebhooks", func(t *testing.T) {
			_, err := r.p.Webhook(http.Header{}, []byte("{}"))
			var pe *payd.Error
			if !errors.As(err, &pe) || pe.Code != payd.ErrInvalidSignature {
				t.Fatalf("Webhook = %v", err)
			}
		})
	})
}
