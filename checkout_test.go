package payd

import (
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"payd/money"
)

var coinRates = &ExchangeRates{
	Coins: map[money.Asset]int64{money.USDC: 100, money.USDT: 100, money.BTC: 6_000_000, money.ETH: 300_000, money.SOL: 15_000},
	Fiat:  testRates.Fiat,
}

func explorer(h string) string { return "https://explorer.test/tx/" + h }

// openFor opens a USDC-on-polygon checkout (2 confirmations) for p.
func openFor(t *testing.T, p *Payment, remainder bool) *Checkout {
	t.Helper()
	c, err := OpenCryptoCheckout(p, OpenParams{Asset: money.USDC, Network: money.Polygon, Rates: coinRates,
		QuoteMinutes: 15, Deposit: Deposit{Address: "0xdep"}, WalletID: "wal_1", NetworkFeeUSD: 1,
		Required: 2, Remainder: remainder}, testNow)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func usdc(s string) money.CoinAmount {
	a, err := money.ParseCoinAmount(money.USDC, s)
	if err != nil {
		panic(err)
	}
	return a
}

func xfer(hash, amount string, conf int) Transfer {
	return Transfer{TxHash: hash, From: "0xfrom", To: "0xdep", Amount: usdc(amount), Confirmations: conf}
}

func eventTypes(p *Payment) []string {
	var out []string
	for _, e := range p.Events {
		out = append(out, e.Type)
	}
	return out
}

func wantEvents(t *testing.T, p *Payment, want ...string) {
	t.Helper()
	if got := fmt.Sprint(eventTypes(p)); got != fmt.Sprint(want) {
		t.Fatalf("events = %v\nwant     %v", got, want)
	}
}

func TestCheckoutExactPayment(t *testing.T) {
	p := mustPayment(t)
	c := openFor(t, p, false)
	if c.Crypto.Amount.String() != "100.00" || c.Breakdown.Total != 10_000 || *c.Breakdown.NetworkFee != 1 {
		t.Fatalf("quote = %s total %d", c.Crypto.Amount, c.Breakdown.Total)
	}
	now := testNow.Add(time.Minute)
	c.Observe(p, []Transfer{xfer("0xa", "100.00", 0)}, explorer, now)
	if c.Status != CheckoutProcessing || !p.InFlight() {
		t.Fatalf("after detection: %s, in flight %v", c.Status, p.InFlight())
	}
	c.Observe(p, []Transfer{xfer("0xa", "100.00", 1)}, explorer, now)
	o := c.Observe(p, []Transfer{xfer("0xa", "100.00", 2)}, explorer, now)
	if o.Counted.String() != "100.00" || p.Status != PaymentSucceeded || c.Status != CheckoutCompleted {
		t.Fatalf("counted %s, payment %s, checkout %s", o.Counted, p.Status, c.Status)
	}
	wantEvents(t, p, "created", "method_selected", "detected", "confirmation", "confirmation", "succeeded")
	if p.AmountReceived != 10_000 || p.Settlement.Amount != "100.00" || p.Method.OverpaidAmount != "" ||
		*p.Reporting.FeeUSD != 0 || p.ConfirmedAt == nil {
		t.Fatalf("payment = %+v", p)
	}
	if again := c.Observe(p, []Transfer{xfer("0xa", "100.00", 5)}, explorer, now); again.Counted.Sign() != 0 {
		t.Fatal("counted twice")
	}
}

// The wrong coin to the deposit (USDT to a USDC checkout's address) pays
// nothing: no detection, no confirmations, and once confirmed it joins the
// holdings and sends the payment to review. The right coin paid in full on
// time afterwards still makes the payment succeed.
func TestCheckoutWrongCoin(t *testing.T) {
	p := mustPayment(t)
	c := openFor(t, p, false)
	now := testNow.Add(time.Minute)
	wrong := xfer("0xw", "100.00", 0)
	wrong.Amount.Asset = money.USDT
	if o := c.Observe(p, []Transfer{wrong}, explorer, now); !o.Changed || c.Status != CheckoutOpen || p.InFlight() {
		t.Fatalf("after the wrong coin was seen: changed %v, checkout %s, in flight %v", o.Changed, c.Status, p.InFlight())
	}
	if again := c.Observe(p, []Transfer{wrong}, explorer, now); again.Changed {
		t.Fatal("the wrong coin was recorded twice")
	}
	wrong.Confirmations = 2
	o := c.Observe(p, []Transfer{wrong}, explorer, now)
	if o.Counted.Sign() != 0 || len(o.Foreign) != 1 || o.Foreign[0].Asset != money.USDT || o.Foreign[0].String() != "100.00" {
		t.Fatalf("counted %s, foreign %v", o.Counted, o.Foreign)
	}
	if p.Status != PaymentNeedsReview || c.ReviewReason != ReviewWrongAsset || p.AmountReceived != 0 || p.Settlement != nil {
		t.Fatalf("payment %s (%d received), review %q", p.Status, p.AmountReceived, c.ReviewReason)
	}
	wantEvents(t, p, "created", "method_selected", "needs_review")
	var review map[string]string
	_ = json.Unmarshal(p.Events[len(p.Events)-1].Data, &review)
	if review["reason"] != ReviewWrongAsset || review["tx_hash"] != "0xw" {
		t.Fatalf("needs_review data = %v", review)
	}
	if again := c.Observe(p, []Transfer{wrong}, explorer, now); again.Changed || len(again.Foreign) != 0 {
		t.Fatal("the wrong coin was counted twice")
	}
	right := xfer("0xa", "100.00", 2)
	o = c.Observe(p, []Transfer{wrong, right}, explorer, now)
	if o.Counted.String() != "100.00" || len(o.Foreign) != 0 || p.Status != PaymentSucceeded || c.Status != CheckoutCompleted {
		t.Fatalf("counted %s, payment %s, checkout %s", o.Counted, p.Status, c.Status)
	}
	if p.Settlement.Amount != "100.00" || p.Method.Amount != "100.00" || p.Method.TxHash != "0xa" {
		t.Fatalf("settlement %+v, method %+v", p.Settlement, p.Method)
	}
	if sent := c.Sent(); sent.String() != "100.00" || sent.Asset != money.USDC {
		t.Fatalf("sent %s %s", sent, sent.Asset)
	}
}

func TestCheckoutUnderpaidThenRemainder(t *testing.T) {
	p := mustPayment(t)
	c := openFor(t, p, false)
	now := testNow.Add(time.Minute)
	c.Observe(p, []Transfer{xfer("0xa", "60.00", 2)}, explorer, now)
	if p.Status != PaymentUnderpaid || c.Status != CheckoutUnderpaid || p.AmountReceived != 6_000 {
		t.Fatalf("payment %s checkout %s received %d", p.Status, c.Status, p.AmountReceived)
	}
	var under map[string]string
	_ = json.Unmarshal(p.Events[len(p.Events)-1].Data, &under)
	if under["expected"] != "100.00" || under["received"] != "60.00" {
		t.Fatalf("underpaid data = %v", under)
	}
	c.Observe(p, nil, explorer, c.ExpiresAt)
	if c.Status != CheckoutExpired || p.Status != PaymentUnderpaid {
		t.Fatalf("after quote: checkout %s payment %s", c.Status, p.Status)
	}
	r := openFor(t, p, true)
	if r.Amount != 4_000 || r.Crypto.Amount.String() != "40.00" || r.PriorReceived != 6_000 {
		t.Fatalf("remainder = %d %s", r.Amount, r.Crypto.Amount)
	}
	r.Crypto.Deposit.Address = "0xdep2"
	tr := xfer("0xb", "40.00", 2)
	tr.To = "0xdep2"
	r.Observe(p, []Transfer{tr}, explorer, testNow.Add(5*time.Minute))
	wantEvents(t, p, "created", "method_selected", "detected", "confirmation", "confirmation", "underpaid",
		"expired", "remainder_requested", "detected", "confirmation", "confirmation", "succeeded")
	if p.Status != PaymentSucceeded || p.AmountReceived != 10_000 || p.Method.Amount != "100.00" {
		t.Fatalf("payment %s received %d method %s", p.Status, p.AmountReceived, p.Method.Amount)
	}
}

func TestCheckoutOverpaidAndLate(t *testing.T) {
	p := mustPayment(t)
	c := openFor(t, p, false)
	c.Observe(p, []Transfer{xfer("0xa", "120.00", 2)}, explorer, testNow)
	if p.Status != PaymentSucceeded || p.Method.OverpaidAmount != "20.00" || p.AmountReceived != 10_000 {
		t.Fatalf("overpaid: %s %q %d", p.Status, p.Method.OverpaidAmount, p.AmountReceived)
	}

	link := mustPayment(t, func(in *PaymentParams) { in.LinkID = "lnk_1" })
	lc := openFor(t, link, false)
	lc.Observe(link, nil, explorer, lc.ExpiresAt)
	if lc.Status != CheckoutExpired || link.Status != PaymentExpired {
		t.Fatalf("expiry: %s %s", lc.Status, link.Status)
	}
	lc.Observe(link, []Transfer{xfer("0xl", "100.00", 2)}, explorer, lc.ExpiresAt.Add(time.Hour))
	if link.Status != PaymentNeedsReview || lc.ReviewReason != ReviewLatePayment {
		t.Fatalf("late: %s %q", link.Status, lc.ReviewReason)
	}
}

// Late funds on a checkout the payment no longer uses (replaced by a
// checkout in another coin that then paid) are counted into the holdings,
// but never overwrite what the current checkout settled.
func TestCheckoutLateOnReplacedCheckout(t *testing.T) {
	p := mustPayment(t)
	old := openFor(t, p, false)
	if ok, err := old.Replace("chk_next", testNow); !ok || err != nil {
		t.Fatalf("replace: %v %v", ok, err)
	}
	cur := openFor(t, p, false)
	cur.Crypto.Deposit.Address = "0xcur"
	paid := xfer("0xb", "100.00", 2)
	paid.To = "0xcur"
	cur.Observe(p, []Transfer{paid}, explorer, testNow.Add(time.Minute))
	if p.Status != PaymentSucceeded || p.CheckoutID != cur.ID {
		t.Fatalf("payment %s on %s", p.Status, p.CheckoutID)
	}
	events := len(p.Events)
	o := old.Observe(p, []Transfer{xfer("0xlate", "0.01", 2)}, explorer, testNow.Add(time.Hour))
	if o.Counted.String() != "0.01" || old.ReviewReason != ReviewLatePayment {
		t.Fatalf("late transfer: counted %s, review %q", o.Counted, old.ReviewReason)
	}
	if p.Status != PaymentSucceeded || p.AmountReceived != 10_000 || p.Settlement.Amount != "100.00" ||
		p.Settlement.TxHash != "0xb" || p.Method.Amount != "100.00" || p.Method.TxHash != "0xb" {
		t.Fatalf("the late transfer rewrote the payment: received %d, settlement %+v, method %+v",
			p.AmountReceived, p.Settlement, p.Method)
	}
	if got := eventTypes(p)[events:]; fmt.Sprint(got) != "[detected funds_received]" {
		t.Fatalf("events after the late transfer: %v", got)
	}
	if got := string(p.Events[events+1].Data); got != `{"amount":"0.01","asset":"USDC","network":"polygon","reason":"late_payment","tx_hash":"0xlate"}` {
		t.Fatalf("funds_received data = %s", got)
	}
}

// Funds that pay nothing reaching a payment that succeeded, or one in
// review, leave its status and are told once each, as funds_received: a
// wrong coin, then the right coin late.
func TestCheckoutFundsAfterSuccess(t *testing.T) {
	p := mustPayment(t)
	c := openFor(t, p, false)
	c.Observe(p, []Transfer{xfer("0xa", "100.00", 2)}, explorer, testNow.Add(time.Minute))
	if p.Status != PaymentSucceeded {
		t.Fatalf("status %s", p.Status)
	}
	usdt := xfer("0xt", "7.00", 2)
	usdt.Amount.Asset = money.USDT
	at := testNow.Add(time.Hour)
	o := c.Observe(p, []Transfer{xfer("0xa", "100.00", 2), usdt, xfer("0xlate", "1.00", 0)}, explorer, at)
	if len(o.Foreign) != 1 || o.Foreign[0].String() != "7.00" || !o.Counted.IsZero() {
		t.Fatalf("outcome: foreign %v, counted %v", o.Foreign, o.Counted)
	}
	wantEvents(t, p, "created", "method_selected", "detected", "confirmation", "confirmation", "succeeded",
		"detected", "funds_received")
	c.Observe(p, []Transfer{xfer("0xlate", "1.00", 2)}, explorer, at.Add(time.Minute))
	if p.Status != PaymentSucceeded || p.Method.OverpaidAmount != "1.00" || p.AmountReceived != 10_000 {
		t.Fatalf("after the late transfer: %s, method %+v, received %d", p.Status, p.Method, p.AmountReceived)
	}
	wantEvents(t, p, "created", "method_selected", "detected", "confirmation", "confirmation", "succeeded",
		"detected", "funds_received", "funds_received")
	var got []map[string]string
	for _, e := range p.Events[len(p.Events)-2:] {
		var m map[string]string
		if err := json.Unmarshal(e.Data, &m); err != nil {
			t.Fatal(err)
		}
		got = append(got, m)
	}
	if got[0]["reason"] != ReviewWrongAsset || got[0]["asset"] != "USDT" || got[0]["tx_hash"] != "0xt" ||
		got[1]["reason"] != ReviewLatePayment || got[1]["amount"] != "1.00" || got[1]["tx_hash"] != "0xlate" {
		t.Fatalf("funds_received entries = %v", got)
	}
	// Observing the same report again tells nothing twice.
	n := len(p.Events)
	c.Observe(p, []Transfer{xfer("0xa", "100.00", 2), usdt, xfer("0xlate", "1.00", 2)}, explorer, at.Add(2*time.Minute))
	if len(p.Events) != n {
		t.Fatalf("the same report added %v", eventTypes(p)[n:])
	}
}

func TestCheckoutReorgNeverRepeats(t *testing.T) {
	p := mustPayment(t)
	c := openFor(t, p, false)
	c.Required = 3
	for _, conf := range []int{0, 1, 2, 0, 1, 2, 3} {
		c.Observe(p, []Transfer{xfer("0xa", "100.00", conf)}, explorer, testNow)
	}
	wantEvents(t, p, "created", "method_selected", "detected", "confirmation", "confirmation", "confirmation", "succeeded")
}

// Past the required count a block changes nothing: the checkouts paid in
// the last week are not written again at every block (docs/benchmarks.md).
func TestCheckoutKeepsRequiredConfirmations(t *testing.T) {
	p := mustPayment(t)
	c := openFor(t, p, false)
	c.Observe(p, []Transfer{xfer("0xa", "100.00", 2)}, explorer, testNow)
	for _, conf := range []int{3, 4, 100} {
		if o := c.Observe(p, []Transfer{xfer("0xa", "100.00", conf)}, explorer, testNow); o.Changed {
			t.Fatalf("%d confirmations changed the checkout", conf)
		}
	}
	if o := c.Observe(p, []Transfer{xfer("0xa", "100.00", 1)}, explorer, testNow); !o.Changed || c.Transfers[0].Confirmations != 1 {
		t.Fatalf("a reorg to 1 confirmation: changed %v, kept %d", o.Changed, c.Transfers[0].Confirmations)
	}
	wantEvents(t, p, "created", "method_selected", "detected", "confirmation", "confirmation", "succeeded")
	if got := c.KeptConfirmations(7); got != 2 {
		t.Fatalf("KeptConfirmations(7) = %d with 2 required", got)
	}
}

func TestCheckoutCancelReplaceClaim(t *testing.T) {
	p := mustPayment(t)
	c := openFor(t, p, false)
	if ok, err := c.Replace("chk_next", testNow); !ok || err != nil || c.ReplacedBy != "chk_next" {
		t.Fatalf("replace: %v %v", ok, err)
	}
	c2 := openFor(t, p, false)
	c2.Observe(p, []Transfer{xfer("0xa", "1.00", 0)}, explorer, testNow)
	_, err := c2.Replace("chk_x", testNow)
	wantErr(t, err, ErrCheckoutNotSupersedable)
	_, err = c2.Cancel(p, testNow)
	wantErr(t, err, ErrCheckoutNotCancelable)
	wantErr(t, c2.Claim(p, "0xh", testNow), ErrCheckoutNotClaimable)

	link := mustPayment(t, func(in *PaymentParams) { in.LinkID = "lnk_1" })
	lc := openFor(t, link, false)
	if ok, err := lc.Cancel(link, testNow); !ok || err != nil || link.Status != PaymentFailed {
		t.Fatalf("cancel: %v %v %s", ok, err, link.Status)
	}
	if err := lc.Claim(link, "0xh", testNow); err != nil || link.Status != PaymentNeedsReview {
		t.Fatalf("claim: %v %s", err, link.Status)
	}
	wantErr(t, lc.Claim(link, "0xh", testNow), ErrAlreadyClaimed)
}

// legal lists every payment status move the lifecycle may make, with the
// business's Accept (needs_review or underpaid to succeeded).
var legal = map[PaymentStatus][]PaymentStatus{
	PaymentPending:     {PaymentSucceeded, PaymentUnderpaid, PaymentNeedsReview, PaymentExpired, PaymentFailed},
	PaymentUnderpaid:   {PaymentSucceeded, PaymentNeedsReview},
	PaymentExpired:     {PaymentNeedsReview},
	PaymentFailed:      {PaymentNeedsReview},
	PaymentNeedsReview: {PaymentSucceeded},
	PaymentSucceeded:   {},
}

func isLegal(from, to PaymentStatus) bool {
	if from == to {
		return true
	}
	for _, s := range legal[from] {
		if s == to {
			return true
		}
	}
	return false
}

// TestCheckoutLifecycleProperties drives random reports (transfers of
// random sizes, blocks, reorgs, time passing, repeated reads, cancels,
// remainders) through Observe and checks after every step: no illegal
// status move, no transfer counted twice, holdings equal to what was
// counted, a repeated read changing nothing, and amounts that add up.
func TestCheckoutLifecycleProperties(t *testing.T) {
	for seed := uint64(0); seed < 3000; seed++ {
		r := rand.New(rand.NewPCG(seed, 99))
		runLifecycle(t, r, seed)
	}
}

// world is one random run: a payment, its checkouts and the chain's view.
type world struct {
	p        *Payment
	cs       []*Checkout
	view     []Transfer
	now      time.Time
	holdings *big.Int
	// foreign is the USDT (the wrong coin) counted into the holdings.
	foreign *big.Int
	next    int
	// gone are transfers taken out of the view before they confirmed
	// (replaced, double-spent); one may come back.
	gone []Transfer
}

func runLifecycle(t *testing.T, r *rand.Rand, seed uint64) {
	p := mustPayment(t, func(in *PaymentParams) {
		if r.IntN(2) == 0 {
			in.LinkID = "lnk_1"
		}
	})
	w := &world{p: p, now: testNow, holdings: new(big.Int), foreign: new(big.Int)}
	w.cs = append(w.cs, openFor(t, p, false))
	for step := 0; step < 40; step++ {
		before := p.Status
		w.act(t, r)
		w.observeAll(t, seed, step)
		if !isLegal(before, p.Status) {
			t.Fatalf("seed %d step %d: %s → %s\n%v", seed, step, before, p.Status, eventTypes(p))
		}
		w.check(t, seed, step)
	}
}

func (w *world) act(t *testing.T, r *rand.Rand) {
	c := w.cs[len(w.cs)-1]
	switch r.IntN(11) {
	case 0, 1:
		amounts := []string{"100.00", "60.00", "40.00", "0.01", "150.00", c.Crypto.Amount.String()}
		w.next++
		amount := usdc(amounts[r.IntN(len(amounts))])
		if r.IntN(8) == 0 { // the wrong coin to the same address
			amount.Asset = money.USDT
		}
		w.view = append(w.view, Transfer{TxHash: fmt.Sprintf("0x%d", w.next), To: c.Crypto.Deposit.Address,
			Amount: amount})
	case 2, 3:
		for i := range w.view {
			w.view[i].Confirmations++
		}
	case 4:
		depth := r.IntN(3)
		for i := range w.view {
			w.view[i].Confirmations = max(0, w.view[i].Confirmations-depth)
		}
	case 5:
		w.now = w.now.Add(time.Duration(r.IntN(20)) * time.Minute)
	case 6:
		_, _ = c.Cancel(w.p, w.now)
	case 7:
		if w.p.Status == PaymentUnderpaid && !c.Active() {
			next := openFor(t, w.p, true)
			next.Crypto.Deposit.Address = fmt.Sprintf("0xdep%d", len(w.cs))
			next.ExpiresAt = w.now.Add(15 * time.Minute)
			w.cs = append(w.cs, next)
		}
	case 8:
		if w.p.Status == PaymentNeedsReview && r.IntN(2) == 0 {
			_ = w.p.Accept(w.now)
		}
	case 9: // a waiting transfer is replaced or double-spent
		if i := r.IntN(len(w.view) + 1); i < len(w.view) && w.view[i].Confirmations == 0 {
			w.gone = append(w.gone, w.view[i])
			w.view = append(w.view[:i], w.view[i+1:]...)
		}
	case 10: // and may come back
		if i := r.IntN(len(w.gone) + 1); i < len(w.gone) {
			w.view = append(w.view, w.gone[i])
			w.gone = append(w.gone[:i], w.gone[i+1:]...)
		}
	}
}

// observeAll shows every checkout the view, twice: the second read must
// change nothing.
func (w *world) observeAll(t *testing.T, seed uint64, step int) {
	for _, c := range w.cs {
		o := c.Observe(w.p, w.view, explorer, w.now)
		if o.Counted.Units != nil {
			if o.Counted.Asset != money.USDC {
				t.Fatalf("seed %d step %d: counted %s as the payment's coin", seed, step, o.Counted)
			}
			w.holdings.Add(w.holdings, o.Counted.Units)
		}
		for _, f := range o.Foreign {
			w.foreign.Add(w.foreign, f.Units)
		}
		if again := c.Observe(w.p, w.view, explorer, w.now); again.Changed {
			t.Fatalf("seed %d step %d: a repeated read changed the checkout", seed, step)
		}
	}
}

func (w *world) check(t *testing.T, seed uint64, step int) {
	counted, foreign, seen, inCoin := new(big.Int), new(big.Int), map[TransferKey]bool{}, 0
	viewed := map[TransferKey]bool{}
	for _, v := range w.view {
		viewed[v.Key()] = true
	}
	for _, c := range w.cs {
		for _, st := range c.Transfers {
			if seen[st.Key()] && c.pays(Transfer{To: c.Crypto.Deposit.Address, Amount: st.Amount}) {
				t.Fatalf("seed %d step %d: transfer %s recorded twice", seed, step, st.TxHash)
			}
			seen[st.Key()] = true
			if st.Gone == viewed[st.Key()] && !st.Counted {
				t.Fatalf("seed %d step %d: transfer %s gone %v, in the view %v", seed, step, st.TxHash, st.Gone,
					viewed[st.Key()])
			}
			if st.Gone {
				continue
			}
			switch {
			case !c.inCoin(st):
				if st.Counted {
					foreign.Add(foreign, st.Amount.Units)
				}
				if st.Reported != 0 {
					t.Fatalf("seed %d step %d: confirmations reported for the wrong coin", seed, step)
				}
				continue
			case st.Counted:
				counted.Add(counted, st.Amount.Units)
			}
			inCoin++
			if st.Reported > c.Required {
				t.Fatalf("seed %d step %d: reported %d of %d", seed, step, st.Reported, c.Required)
			}
		}
	}
	if counted.Cmp(w.holdings) != 0 || foreign.Cmp(w.foreign) != 0 {
		t.Fatalf("seed %d step %d: holdings %s + %s foreign, counted %s + %s", seed, step, w.holdings, w.foreign,
			counted, foreign)
	}
	if foreign.Sign() > 0 && w.p.Status != PaymentNeedsReview && w.p.Status != PaymentSucceeded {
		t.Fatalf("seed %d step %d: the wrong coin arrived, payment %s", seed, step, w.p.Status)
	}
	total := w.p.Amount + w.p.CustomerFee
	if w.p.AmountReceived < 0 || w.p.AmountReceived > total {
		t.Fatalf("seed %d step %d: amount_received %d of %d", seed, step, w.p.AmountReceived, total)
	}
	detected, accepted := 0, false
	for _, e := range w.p.Events {
		detected += map[bool]int{true: 1}[e.Type == EventDetected]
		detected -= map[bool]int{true: 1}[e.Type == EventDropped]
		accepted = accepted || e.Type == EventAccepted
	}
	if w.p.Status == PaymentSucceeded && !accepted && !w.paidInFull() {
		t.Fatalf("seed %d step %d: succeeded without a checkout paid in full", seed, step)
	}
	if detected != inCoin {
		t.Fatalf("seed %d step %d: %d detected events for %d transfers", seed, step, detected, inCoin)
	}
}

// paidInFull reports whether some checkout received its quote on time.
func (w *world) paidInFull() bool {
	for _, c := range w.cs {
		if c.received(true).Cmp(c.Crypto.Amount) >= 0 {
			return true
		}
	}
	return false
}

// A wrong coin confirming in the run that pays the payment is told after
// the payment succeeded, as it is when it confirms later: the history does
// not depend on which run saw what.
func TestCheckoutExtraFundsSameRun(t *testing.T) {
	usdt := xfer("0xt", "7.00", 0)
	usdt.Amount.Asset = money.USDT
	sameRun := mustPayment(t)
	c := openFor(t, sameRun, false)
	c.Observe(sameRun, []Transfer{xfer("0xa", "100.00", 0), usdt}, explorer, testNow)
	usdt.Confirmations = 2
	c.Observe(sameRun, []Transfer{xfer("0xa", "100.00", 2), usdt}, explorer, testNow.Add(time.Minute))

	later := mustPayment(t)
	d := openFor(t, later, false)
	usdt.Confirmations = 0
	d.Observe(later, []Transfer{xfer("0xa", "100.00", 0), usdt}, explorer, testNow)
	d.Observe(later, []Transfer{xfer("0xa", "100.00", 2), usdt}, explorer, testNow.Add(time.Minute))
	usdt.Confirmations = 2
	d.Observe(later, []Transfer{xfer("0xa", "100.00", 2), usdt}, explorer, testNow.Add(2*time.Minute))

	for _, p := range []*Payment{sameRun, later} {
		if p.Status != PaymentSucceeded {
			t.Fatalf("status %s", p.Status)
		}
		wantEvents(t, p, "created", "method_selected", "detected", "confirmation", "confirmation", "succeeded", "funds_received")
	}
}

// A transfer replaced (RBF) before it confirmed is dropped: the checkout
// waits again, the method no longer names it, and the replacement pays
// the payment once.
func TestCheckoutReplacedTransfer(t *testing.T) {
	p := mustPayment(t)
	c := openFor(t, p, false)
	c.Observe(p, []Transfer{xfer("0xold", "100.00", 0)}, explorer, testNow)
	if c.Status != CheckoutProcessing || p.Method.TxHash != "0xold" {
		t.Fatalf("after detection: checkout %s, method tx %q", c.Status, p.Method.TxHash)
	}
	o := c.Observe(p, nil, explorer, testNow.Add(time.Minute))
	if !o.Changed || c.Status != CheckoutOpen || c.SentAt != nil || p.Method.TxHash != "" || c.Sent().Sign() != 0 {
		t.Fatalf("after the replacement: changed %v, checkout %s, sent_at %v, method tx %q, sent %s",
			o.Changed, c.Status, c.SentAt, p.Method.TxHash, c.Sent())
	}
	if again := c.Observe(p, nil, explorer, testNow.Add(time.Minute)); again.Changed {
		t.Fatal("a second read without the transfer changed the checkout")
	}
	c.Observe(p, []Transfer{xfer("0xnew", "100.00", 0)}, explorer, testNow.Add(2*time.Minute))
	o = c.Observe(p, []Transfer{xfer("0xnew", "100.00", 2)}, explorer, testNow.Add(3*time.Minute))
	if p.Status != PaymentSucceeded || o.Counted.Cmp(usdc("100.00")) != 0 || p.Settlement.TxHash != "0xnew" {
		t.Fatalf("payment %s, counted %s, settled by %q", p.Status, o.Counted, p.Settlement.TxHash)
	}
	wantEvents(t, p, "created", "method_selected", "detected", "dropped", "detected", "confirmation",
		"confirmation", "succeeded")
	// Were the replaced one mined after all, its coin is in the wallet:
	// counted into the holdings as late funds, paying nothing.
	o = c.Observe(p, []Transfer{xfer("0xnew", "100.00", 3), xfer("0xold", "100.00", 3)}, explorer, testNow.Add(time.Hour))
	if p.Status != PaymentSucceeded || p.Events[len(p.Events)-1].Type != EventFundsReceived || p.Settlement.TxHash != "0xnew" {
		t.Fatalf("the old transfer back: payment %s, events %v", p.Status, eventTypes(p))
	}
}

// The rest of an underpaid checkout's quote, detected and then dropped,
// leaves the checkout underpaid, so its quote ends as an underpaid one's
// does.
func TestCheckoutDroppedRemainderStaysUnderpaid(t *testing.T) {
	p := mustPayment(t)
	c := openFor(t, p, false)
	c.Observe(p, []Transfer{xfer("0xa", "60.00", 2)}, explorer, testNow)
	if c.Status != CheckoutUnderpaid || p.Status != PaymentUnderpaid {
		t.Fatalf("after 60 of 100: checkout %s, payment %s", c.Status, p.Status)
	}
	c.Observe(p, []Transfer{xfer("0xa", "60.00", 3), xfer("0xb", "40.00", 0)}, explorer, testNow.Add(time.Minute))
	if c.Status != CheckoutProcessing {
		t.Fatalf("with the rest on its way: checkout %s", c.Status)
	}
	c.Observe(p, []Transfer{xfer("0xa", "60.00", 3)}, explorer, testNow.Add(2*time.Minute))
	if c.Status != CheckoutUnderpaid {
		t.Fatalf("with the rest dropped: checkout %s", c.Status)
	}
	c.Observe(p, []Transfer{xfer("0xa", "60.00", 3)}, explorer, c.ExpiresAt)
	if c.Status != CheckoutExpired || p.Events[len(p.Events)-1].Type != EventExpired {
		t.Fatalf("at the quote's end: checkout %s, events %v", c.Status, eventTypes(p))
	}
}
