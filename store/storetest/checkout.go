package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"slices"
	"testing"
	"time"

	"payd"
	"payd/money"
)

// watchForever is the WatchUntil of a checkout still taking funds.
var watchForever = payd.LiveWatchUntil

// solanaAddress is the one Solana address of the suite's wallet; its
// checkouts are told apart by reference.
const solanaAddress = "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU"

// mustCheckoutPayment stores a pending payment for checkouts to belong to.
func mustCheckoutPayment(t *testing.T, ctx context.Context, st payd.Store, biz *payd.Business) *payd.Payment {
	t.Helper()
	p := newPayment(t, biz, 5000, "")
	must(t, st.CreatePayment(ctx, p))
	return p
}

// newCheckout returns an unsaved open crypto checkout of p paying dep on
// network n, in the network's own coin (USDC where it has none in the
// suite's sense).
func newCheckout(p *payd.Payment, n money.Network, dep payd.Deposit) *payd.Checkout {
	asset := n.Native()
	if asset == "" {
		asset = money.USDC
	}
	return &payd.Checkout{
		ID: payd.NewID(payd.PrefixCheckout), BusinessID: p.BusinessID, PaymentID: p.ID,
		Status: payd.CheckoutOpen, Rail: payd.RailCrypto, Amount: p.Amount, Currency: p.Currency,
		Breakdown: payd.Breakdown{Price: p.Amount, Total: p.Amount},
		Crypto: &payd.CryptoQuote{Asset: asset, Network: n, Amount: money.NewCoinAmount(asset, 5_000_000),
			PriorAmount: money.NewCoinAmount(asset, 0), Deposit: dep, WalletID: "wal_x"},
		Required: payd.DefaultConfirmations[n], ExpiresAt: t0.Add(15 * time.Minute), FeeRateBps: 100,
		Reporting: payd.Reporting{AmountUSD: p.Amount, NetUSD: p.Amount}, WatchUntil: watchForever,
		CreatedAt: t0, UpdatedAt: t0,
	}
}

// freshDeposit returns a deposit no other checkout of the suite uses.
func freshDeposit(n money.Network) payd.Deposit {
	if n == money.Solana {
		return payd.Deposit{Address: solanaAddress, Reference: payd.RandomString(44)}
	}
	return payd.Deposit{Address: "addr-" + payd.RandomString(24)}
}

// mustCheckout stores a new checkout of p on n, changed by edit first.
func mustCheckout(t *testing.T, ctx context.Context, st payd.Store, p *payd.Payment, n money.Network, edit func(*payd.Checkout)) *payd.Checkout {
	t.Helper()
	c := newCheckout(p, n, freshDeposit(n))
	if edit != nil {
		edit(c)
	}
	must(t, st.CreateCheckout(ctx, c))
	return c
}

// fullCheckout returns an ethereum checkout with every field set, its
// coin amounts beyond int64 as wei are.
func fullCheckout(p *payd.Payment) *payd.Checkout {
	c := newCheckout(p, money.Ethereum, freshDeposit(money.Ethereum))
	wei, _ := new(big.Int).SetString("123456789012345678901234", 10)
	prior, _ := new(big.Int).SetString("98765432109876543210", 10)
	fee, network, usdFee := int64(150), int64(42), int64(17)
	sent := t0.Add(3 * time.Minute)
	c.LinkID, c.Status, c.Amount, c.Currency = payd.NewID(payd.PrefixLink), payd.CheckoutUnderpaid, 4321, money.EUR
	c.Breakdown = payd.Breakdown{Price: 4321, ProcessingFee: &fee, NetworkFee: &network, Total: 4513}
	c.Crypto.Amount, c.Crypto.PriorAmount = money.CoinAmount{Asset: money.ETH, Units: wei}, money.CoinAmount{Asset: money.ETH, Units: prior}
	c.Crypto.AddressIndex, c.Crypto.Rate, c.Crypto.CoinPriceUSD = 4_000_000_000, 312_345, 345_678
	c.Crypto.PaymentURI = "ethereum:" + c.Crypto.Deposit.Address + "@1?value=1.2345e23"
	c.Crypto.ExchangeRatesID = payd.NewID("xr_")
	c.Required, c.Remainder, c.PriorReceived = 12, true, 1200
	c.CanceledBy, c.ReplacedBy, c.FailureCode = payd.CanceledByReplacement, payd.NewID(payd.PrefixCheckout), "f"
	c.ReviewReason, c.SuccessURL, c.SentAt, c.Email = payd.ReviewLatePayment, "https://shop.example/ok", &sent, "ada@example.com"
	c.Reporting = payd.Reporting{AmountUSD: 4700, FeeUSD: &usdFee, TransactionFeeUSD: 3, CustomerFeeUSD: 160, NetUSD: 4840}
	c.FeeRateBps, c.ClaimTxHash, c.WatchUntil = 300, "0xclaim", t0.Add(payd.LateWindow)
	c.Transfers = []payd.SeenTransfer{
		{TxHash: "0xaaa", Index: 3, From: "0xfrom", Amount: money.CoinAmount{Asset: money.ETH, Units: wei},
			Confirmations: 14, Reported: 12, Counted: true, SeenAt: sent},
		{TxHash: "0xbbb", From: "0xother", Amount: money.NewCoinAmount(money.ETH, 1), Late: true, SeenAt: sent.Add(time.Hour)},
	}
	c.CreatedAt, c.UpdatedAt, c.ExpiresAt = t0, t0.Add(time.Hour), t0.Add(20*time.Minute)
	return c
}

// sameCheckout fails unless got equals want field by field. Coin amounts
// are compared by asset and value (and nil Units stay nil): DeepEqual
// would tell apart two spellings of one big.Int.
func sameCheckout(t *testing.T, got, want *payd.Checkout) {
	t.Helper()
	g, w := canonicalCheckout(got), canonicalCheckout(want)
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("checkout read back differs:\n got %+v\n     %+v\n     %+v\nwant %+v\n     %+v\n     %+v",
			g, g.Crypto, g.Transfers, w, w.Crypto, w.Transfers)
	}
}

// canonicalCheckout copies c with every big.Int rebuilt from its digits.
func canonicalCheckout(c *payd.Checkout) *payd.Checkout {
	out := *c
	canon := func(a money.CoinAmount) money.CoinAmount {
		if a.Units != nil {
			a.Units, _ = new(big.Int).SetString(a.Units.String(), 10)
		}
		return a
	}
	if c.Crypto != nil {
		q := *c.Crypto
		q.Amount, q.PriorAmount = canon(q.Amount), canon(q.PriorAmount)
		out.Crypto = &q
	}
	out.Transfers = slices.Clone(c.Transfers)
	for i := range out.Transfers {
		out.Transfers[i].Amount = canon(out.Transfers[i].Amount)
	}
	return &out
}

// wantCheckout reads the checkout back and compares it with want.
func wantCheckout(t *testing.T, st payd.Store, want *payd.Checkout) {
	t.Helper()
	got, err := st.CheckoutByID(t.Context(), want.ID)
	must(t, err)
	sameCheckout(t, got, want)
}

func testCheckout(t *testing.T, b *bundle) {
	t.Run("RoundTrip", func(t *testing.T) {
		ctx, st := b.setup(t)
		p := mustCheckoutPayment(t, ctx, st, mustBusiness(t, ctx, st))
		sol := newCheckout(p, money.Solana, freshDeposit(money.Solana))
		sol.Crypto.PriorAmount = money.CoinAmount{Asset: money.SOL} // nil Units reads back nil
		card := newCheckout(p, money.Bitcoin, payd.Deposit{})
		card.Rail, card.Crypto, card.Required, card.Status = payd.RailCard, nil, 0, payd.CheckoutCanceled
		for _, c := range []*payd.Checkout{fullCheckout(p), sol, card, newCheckout(p, money.Tron, freshDeposit(money.Tron))} {
			must(t, st.CreateCheckout(ctx, c))
			wantCheckout(t, st, c)
		}
		_, err := st.CheckoutByID(ctx, payd.NewID(payd.PrefixCheckout))
		wantCode(t, err, payd.ErrNotFound)
	})
	t.Run("Update", func(t *testing.T) { testUpdateCheckout(t, b) })
	t.Run("DepositIsUnique", func(t *testing.T) { testCheckoutDeposit(t, b) })
	t.Run("RefusalKeepsTheTransactionUsable", func(t *testing.T) {
		ctx, st := b.setup(t)
		p := mustCheckoutPayment(t, ctx, st, mustBusiness(t, ctx, st))
		taken := mustCheckout(t, ctx, st, p, money.Bitcoin, nil)
		dup, ok := newCheckout(p, money.Bitcoin, taken.Crypto.Deposit), newCheckout(p, money.Bitcoin, freshDeposit(money.Bitcoin))
		must(t, st.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
			if code := payd.ErrorCode(q.CreateCheckout(ctx, dup)); code != payd.ErrConflict {
				return fmt.Errorf("a taken deposit gave %s, want conflict", code)
			}
			return q.CreateCheckout(ctx, ok)
		}))
		wantCheckout(t, st, ok)
	})
	t.Run("RollbackLeavesNothing", func(t *testing.T) {
		ctx, st := b.setup(t)
		p := mustCheckoutPayment(t, ctx, st, mustBusiness(t, ctx, st))
		c := newCheckout(p, money.Solana, freshDeposit(money.Solana))
		err := st.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
			if err := q.CreateCheckout(ctx, c); err != nil {
				return err
			}
			if _, err := q.CheckoutByID(ctx, c.ID); err != nil {
				return fmt.Errorf("reading the transaction's own checkout: %w", err)
			}
			return errBoom
		})
		if !errors.Is(err, errBoom) {
			t.Fatalf("Tx = %v, want the function's error", err)
		}
		_, err = st.CheckoutByID(ctx, c.ID)
		wantCode(t, err, payd.ErrNotFound)
		// The deposit went back too.
		must(t, st.CreateCheckout(ctx, newCheckout(p, money.Solana, c.Crypto.Deposit)))
	})
	t.Run("StaleVersionLoses", func(t *testing.T) { testCheckoutRace(t, b) })
	t.Run("LockedUpdatesTakeTurns", func(t *testing.T) { testCheckoutTurns(t, b) })
	t.Run("UpdateLandsOnceWhenRerun", func(t *testing.T) { testCheckoutRerun(t, b) })
	t.Run("Watched", func(t *testing.T) { testWatchedCheckouts(t, b) })
	t.Run("Due", func(t *testing.T) { testDueCheckouts(t, b) })
	t.Run("DueSkipsLocked", func(t *testing.T) { testDueSkipsLocked(t, b) })
	t.Run("DuePayments", func(t *testing.T) { testDuePayments(t, b) })
}

// testUpdateCheckout changes every mutable field, counts versions, and
// refuses stale and unknown checkouts.
func testUpdateCheckout(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	p := mustCheckoutPayment(t, ctx, st, mustBusiness(t, ctx, st))
	c := mustCheckout(t, ctx, st, p, money.Ethereum, nil)
	full := fullCheckout(p)
	full.ID, full.CreatedAt, full.Version = c.ID, c.CreatedAt, c.Version
	must(t, st.UpdateCheckout(ctx, full))
	if full.Version != 1 {
		t.Fatalf("version after the first update = %d, want 1", full.Version)
	}
	wantCheckout(t, st, full)
	// Clearing goes back to empty; the deposit may move to a free one.
	cleared := newCheckout(p, money.Polygon, freshDeposit(money.Polygon))
	cleared.ID, cleared.Version = c.ID, full.Version
	must(t, st.UpdateCheckout(ctx, cleared))
	wantCheckout(t, st, cleared)

	stale := *cleared
	stale.Version--
	wantCode(t, st.UpdateCheckout(ctx, &stale), payd.ErrConflict)
	if stale.Version != cleared.Version-1 {
		t.Fatalf("a refused update moved the version to %d", stale.Version)
	}
	unknown := newCheckout(p, money.Bitcoin, freshDeposit(money.Bitcoin))
	wantCode(t, st.UpdateCheckout(ctx, unknown), payd.ErrNotFound)
	// Moving onto a deposit another checkout has is refused.
	other := mustCheckout(t, ctx, st, p, money.Polygon, nil)
	moved := *cleared
	moved.Crypto = &payd.CryptoQuote{}
	*moved.Crypto = *cleared.Crypto
	moved.Crypto.Deposit = other.Crypto.Deposit
	wantCode(t, st.UpdateCheckout(ctx, &moved), payd.ErrConflict)
	wantCheckout(t, st, cleared)
}

// testCheckoutDeposit checks what counts as the same deposit.
func testCheckoutDeposit(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	p := mustCheckoutPayment(t, ctx, st, mustBusiness(t, ctx, st))
	eth := mustCheckout(t, ctx, st, p, money.Ethereum, nil)
	sol := mustCheckout(t, ctx, st, p, money.Solana, nil)
	for _, dup := range []*payd.Checkout{
		newCheckout(p, money.Ethereum, eth.Crypto.Deposit),
		newCheckout(p, money.Solana, sol.Crypto.Deposit),
	} {
		wantCode(t, st.CreateCheckout(ctx, dup), payd.ErrConflict)
		_, err := st.CheckoutByID(ctx, dup.ID)
		wantCode(t, err, payd.ErrNotFound)
	}
	same := *eth
	wantCode(t, st.CreateCheckout(ctx, &same), payd.ErrConflict)
	wantDepositTaken(t, st, money.Ethereum, eth.Crypto.Deposit, true)
	wantDepositTaken(t, st, money.Solana, sol.Crypto.Deposit, true)
	wantDepositTaken(t, st, money.Polygon, eth.Crypto.Deposit, false)
	wantDepositTaken(t, st, money.Solana, payd.Deposit{Address: sol.Crypto.Deposit.Address, Reference: "other"}, false)
	// One address on another network is another deposit (an EVM key
	// derives the same address on ethereum and polygon), and the Solana
	// address serves every checkout with its own reference.
	must(t, st.CreateCheckout(ctx, newCheckout(p, money.Polygon, eth.Crypto.Deposit)))
	must(t, st.CreateCheckout(ctx, newCheckout(p, money.Solana, freshDeposit(money.Solana))))
	// Card checkouts have no deposit and never collide.
	for range 2 {
		card := newCheckout(p, money.Bitcoin, payd.Deposit{})
		card.Rail, card.Crypto = payd.RailCard, nil
		must(t, st.CreateCheckout(ctx, card))
	}
}

// wantDepositTaken checks DepositTaken, outside a transaction and inside
// one.
func wantDepositTaken(t *testing.T, st payd.Store, n money.Network, d payd.Deposit, want bool) {
	t.Helper()
	ctx := context.Background()
	got, err := st.DepositTaken(ctx, n, d)
	must(t, err)
	var inTx bool
	must(t, st.Tx(ctx, func(ctx context.Context, q payd.Queries) (err error) {
		inTx, err = q.DepositTaken(ctx, n, d)
		return err
	}))
	if got != want || inTx != want {
		t.Fatalf("DepositTaken(%s, %+v) = %v, in a transaction %v; want %v", n, d, got, inTx, want)
	}
}

// testCheckoutRace races writers holding one version of a checkout, round
// after round: exactly one of each round wins, the rest get conflict.
func testCheckoutRace(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	p := mustCheckoutPayment(t, ctx, st, mustBusiness(t, ctx, st))
	c := mustCheckout(t, ctx, st, p, money.Bitcoin, nil)
	const n = 8
	for round := range 3 {
		cur, err := st.CheckoutByID(ctx, c.ID)
		must(t, err)
		copies := make([]payd.Checkout, n)
		_, errs := parallel(n, func(i int) (struct{}, error) {
			copies[i] = *cur
			copies[i].FailureCode = fmt.Sprint("writer-", i)
			return struct{}{}, st.UpdateCheckout(ctx, &copies[i])
		})
		winner := -1
		for i, err := range errs {
			if err == nil {
				if winner >= 0 {
					t.Fatalf("round %d: writers %d and %d both won", round, winner, i)
				}
				winner = i
				continue
			}
			wantCode(t, err, payd.ErrConflict)
		}
		if winner < 0 {
			t.Fatalf("round %d: no writer won: %v", round, errs)
		}
		if copies[winner].Version != round+1 {
			t.Fatalf("round %d: the winner's version = %d", round, copies[winner].Version)
		}
		wantCheckout(t, st, &copies[winner])
	}
}

// testCheckoutTurns runs read-change-write transactions on one checkout at
// once: the read locks the row (PostgreSQL) or the writer runs them one by
// one (SQLite), so every one lands.
func testCheckoutTurns(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	p := mustCheckoutPayment(t, ctx, st, mustBusiness(t, ctx, st))
	c := mustCheckout(t, ctx, st, p, money.Bitcoin, nil)
	const n = 8
	_, errs := parallel(n, func(i int) (struct{}, error) {
		return struct{}{}, st.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
			cur, err := q.CheckoutByID(ctx, c.ID)
			if err != nil {
				return err
			}
			cur.Transfers = append(cur.Transfers, payd.SeenTransfer{TxHash: fmt.Sprint("tx-", i),
				Amount: money.NewCoinAmount(money.BTC, int64(i)), SeenAt: t0})
			return q.UpdateCheckout(ctx, cur)
		})
	})
	noErrors(t, errs)
	got, err := st.CheckoutByID(ctx, c.ID)
	must(t, err)
	if len(got.Transfers) != n || got.Version != n {
		t.Fatalf("after %d updates: %d transfers, version %d", n, len(got.Transfers), got.Version)
	}
}

// testCheckoutRerun updates checkouts while writes that fail with a raw
// database error run beside them. On SQLite such a failure rolls back the
// writer's whole batch and runs the others again; each update must still
// land once and count its checkout's version once.
func testCheckoutRerun(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	p := mustCheckoutPayment(t, ctx, st, mustBusiness(t, ctx, st))
	const n = 32
	cs := make([]*payd.Checkout, n)
	for i := range cs {
		cs[i] = mustCheckout(t, ctx, st, p, money.Bitcoin, nil)
	}
	_, errs := parallel(n, func(i int) (struct{}, error) {
		if i%2 == 1 {
			orphan := newCheckout(p, money.Bitcoin, freshDeposit(money.Bitcoin))
			orphan.PaymentID = payd.NewID(payd.PrefixPayment) // no such payment
			if st.CreateCheckout(ctx, orphan) == nil {
				return struct{}{}, fmt.Errorf("a checkout of an unknown payment was stored")
			}
			return struct{}{}, nil
		}
		cs[i].FailureCode = "updated"
		return struct{}{}, st.UpdateCheckout(ctx, cs[i])
	})
	noErrors(t, errs)
	for i := 0; i < n; i += 2 {
		if cs[i].Version != 1 {
			t.Fatalf("checkout %d: version after one update = %d", i, cs[i].Version)
		}
		wantCheckout(t, st, cs[i])
	}
}
