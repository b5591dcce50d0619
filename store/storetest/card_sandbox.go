package storetest

import (
	"math/big"
	"testing"
	"time"

	"payd"
	"payd/money"
)

func testCardSandbox(t *testing.T, b *bundle) {
	session := func(id string) *payd.CardSandboxSession {
		return &payd.CardSandboxSession{ID: id, CheckoutID: "chk_1", Route: 2, Amount: 10_300, Currency: "USD",
			Deliver: money.CoinAmount{Asset: money.USDC, Units: big.NewInt(97_000_000)}, Network: money.Solana,
			Deposit: payd.Deposit{Address: "So1Address", Reference: "Ref1"}, Email: "a@example.com",
			ReturnURL: "http://payd.test/p/abc?checkout=chk_1", State: payd.CardSandboxState(payd.CardAwaiting),
			ExpiresAt: t0.Add(15 * time.Minute), CreatedAt: t0, UpdatedAt: t0}
	}
	t.Run("CreateRead", func(t *testing.T) {
		ctx, st := b.setup(t)
		want := session("cs_a")
		must(t, st.CreateCardSandboxSession(ctx, want))
		got, err := st.CardSandboxSession(ctx, "cs_a")
		must(t, err)
		if got.Deliver.String() != "97.00" || got.Deliver.Asset != money.USDC || got.Deposit != want.Deposit ||
			got.Email != want.Email || got.ReturnURL != want.ReturnURL || got.Route != 2 || got.Amount != 10_300 ||
			got.Currency != "USD" || got.Network != money.Solana || got.State != want.State || got.PayAt != nil ||
			!got.ExpiresAt.Equal(want.ExpiresAt) || !got.CreatedAt.Equal(t0) || got.CheckoutID != "chk_1" {
			t.Fatalf("CardSandboxSession = %+v, want %+v", got, want)
		}
		wantCode(t, st.CreateCardSandboxSession(ctx, session("cs_a")), payd.ErrConflict)
		_, err = st.CardSandboxSession(ctx, "cs_none")
		wantCode(t, err, payd.ErrNotFound)
	})
	t.Run("Move", func(t *testing.T) {
		ctx, st := b.setup(t)
		s := session("cs_b")
		s.Deposit.Reference, s.Email = "", ""
		must(t, st.CreateCardSandboxSession(ctx, s))
		due := t0.Add(30 * time.Second)
		s.State, s.Last4, s.PayAt, s.UpdatedAt = payd.CardSandboxState(payd.CardProcessing), "0077", &due, t0.Add(time.Second)
		ok, err := st.MoveCardSandboxSession(ctx, s, payd.CardSandboxState(payd.CardAwaiting))
		must(t, err)
		if !ok {
			t.Fatal("the move from awaiting_payment did not happen")
		}
		// From a state it is no longer in, nothing changes.
		other := *s
		other.State, other.DeclineCode = payd.CardSandboxState(payd.CardDeclined), payd.CardDeclinedGeneric
		if ok, err := st.MoveCardSandboxSession(ctx, &other, payd.CardSandboxState(payd.CardAwaiting)); err != nil || ok {
			t.Fatalf("stale move = %v, %v", ok, err)
		}
		got, err := st.CardSandboxSession(ctx, "cs_b")
		must(t, err)
		if got.State != payd.CardSandboxState(payd.CardProcessing) || got.Last4 != "0077" || got.PayAt == nil ||
			!got.PayAt.Equal(due) || got.DeclineCode != "" || got.Deposit.Reference != "" || got.Email != "" ||
			!got.UpdatedAt.Equal(t0.Add(time.Second)) {
			t.Fatalf("after the move: %+v", got)
		}
		if ok, err := st.MoveCardSandboxSession(ctx, &payd.CardSandboxSession{ID: "cs_none", State: "declined", UpdatedAt: t0},
			payd.CardSandboxState(payd.CardAwaiting)); err != nil || ok {
			t.Fatalf("move of no session = %v, %v", ok, err)
		}
	})
	t.Run("ConcurrentMove", func(t *testing.T) {
		// Many pollers race to claim one delivery: exactly one wins, on
		// either database.
		ctx, st := b.setup(t)
		s := session("cs_c")
		s.State = payd.CardSandboxState(payd.CardProcessing)
		must(t, st.CreateCardSandboxSession(ctx, s))
		won, errs := parallel(8, func(int) (bool, error) {
			claim := *s
			claim.State = payd.CardSandboxDelivering
			return st.MoveCardSandboxSession(ctx, &claim, payd.CardSandboxState(payd.CardProcessing))
		})
		noErrors(t, errs)
		n := 0
		for _, ok := range won {
			if ok {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%d of 8 concurrent claims won, want 1", n)
		}
	})
}
