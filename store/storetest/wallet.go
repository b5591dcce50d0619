package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"payd"
	"payd/clock"
	"payd/money"
)

func testWallet(t *testing.T, b *bundle) {
	t.Run("RoundTrip", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz, other := mustBusiness(t, ctx, st), mustBusiness(t, ctx, st)
		_, err := st.WalletByBusiness(ctx, biz.ID)
		wantCode(t, err, payd.ErrNotFound)
		w := mustWallet(t, ctx, st, biz.ID, walletKeys("a", money.Networks...))
		got, err := st.WalletByBusiness(ctx, biz.ID)
		must(t, err)
		if !reflect.DeepEqual(got, w) {
			t.Fatalf("WalletByBusiness = %+v, want %+v", got, w)
		}
		_, err = st.WalletByBusiness(ctx, other.ID)
		wantCode(t, err, payd.ErrNotFound)
		gk := walletKeys("b", money.Bitcoin)
		g, err := payd.NewWallet(other.ID, gk, keyIDs(gk), payd.WalletGenerated, t0)
		must(t, err)
		must(t, st.CreateWallet(ctx, g))
		got, err = st.WalletByBusiness(ctx, other.ID)
		must(t, err)
		if !reflect.DeepEqual(got, g) || got.CanReceive(money.Ethereum) {
			t.Fatalf("a bitcoin-only generated wallet read back as %+v", got)
		}
	})
	t.Run("OneWalletPerBusiness", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		first := mustWallet(t, ctx, st, biz.ID, walletKeys("a", money.Bitcoin))
		sk := walletKeys("b", money.Bitcoin, money.Solana)
		second, err := payd.NewWallet(biz.ID, sk, keyIDs(sk), payd.WalletAttached, t0)
		must(t, err)
		wantCode(t, st.CreateWallet(ctx, second), payd.ErrWalletExists)
		wantWallet(t, st, biz.ID, first)
		// The refused wallet left nothing behind: its keys are free.
		must(t, st.CreateWallet(ctx, mustNewWallet(t, mustBusiness(t, ctx, st).ID, second.Keys)))
	})
	t.Run("KeyAttachedToAnotherBusiness", func(t *testing.T) {
		ctx, st := b.setup(t)
		a, other := mustBusiness(t, ctx, st), mustBusiness(t, ctx, st)
		held := mustWallet(t, ctx, st, a.ID, walletKeys("a", money.Bitcoin, money.Ethereum, money.Polygon))
		keys := walletKeys("b", money.Bitcoin, money.Solana)
		keys[money.Ethereum] = held.Keys[money.Ethereum]
		err := st.CreateWallet(ctx, mustNewWallet(t, other.ID, keys))
		wantField(t, err, payd.ErrInvalidRequest, "keys.ethereum")
		_, err = st.WalletByBusiness(ctx, other.ID)
		wantCode(t, err, payd.ErrNotFound)
		// The first network in money.Networks order is named.
		keys = walletKeys("c", money.Solana)
		keys[money.Polygon], keys[money.Bitcoin] = held.Keys[money.Polygon], held.Keys[money.Bitcoin]
		wantField(t, st.CreateWallet(ctx, mustNewWallet(t, other.ID, keys)), payd.ErrInvalidRequest, "keys.bitcoin")
		// Uniqueness is per network: the string of a's ethereum key on
		// tron is another key (other addresses on another chain), and one
		// business uses its ethereum key on polygon too.
		keys = map[money.Network]string{money.Tron: held.Keys[money.Ethereum], money.Ethereum: "xpub-b", money.Polygon: "xpub-b"}
		w := mustWallet(t, ctx, st, other.ID, keys)
		wantWallet(t, st, other.ID, w)
		wantWallet(t, st, a.ID, held)
	})
	t.Run("KeyIdentityIsTheKey", func(t *testing.T) {
		ctx, st := b.setup(t)
		a, other := mustBusiness(t, ctx, st), mustBusiness(t, ctx, st)
		held := mustWallet(t, ctx, st, a.ID, walletKeys("a", money.Bitcoin, money.Tron))
		// Another spelling of a's tron key (another parent fingerprint,
		// say): another string, the same identity, so the same key.
		keys := walletKeys("b", money.Solana)
		keys[money.Tron] = "key-a-tron-reserialised"
		ids := keyIDs(keys)
		ids[money.Tron] = held.KeyIDs[money.Tron]
		w, err := payd.NewWallet(other.ID, keys, ids, payd.WalletAttached, t0)
		must(t, err)
		wantField(t, st.CreateWallet(ctx, w), payd.ErrInvalidRequest, "keys.tron")
		_, err = st.WalletByBusiness(ctx, other.ID)
		wantCode(t, err, payd.ErrNotFound)
		// The identity is per network, as keys are.
		ids = keyIDs(keys)
		ids[money.Solana] = held.KeyIDs[money.Tron]
		w, err = payd.NewWallet(other.ID, keys, ids, payd.WalletAttached, t0)
		must(t, err)
		must(t, st.CreateWallet(ctx, w))
		wantWallet(t, st, other.ID, w)
	})
	t.Run("RefusalKeepsTheTransactionUsable", func(t *testing.T) {
		ctx, st := b.setup(t)
		a, biz := mustBusiness(t, ctx, st), mustBusiness(t, ctx, st)
		held := mustWallet(t, ctx, st, a.ID, walletKeys("a", money.Ethereum))
		keys := walletKeys("b", money.Bitcoin)
		keys[money.Ethereum] = held.Keys[money.Ethereum]
		refused, w := mustNewWallet(t, biz.ID, keys), mustNewWallet(t, biz.ID, walletKeys("b", money.Bitcoin))
		second := mustNewWallet(t, biz.ID, walletKeys("c", money.Tron))
		// Checks inside fn return errors: fn may run on the store's writer
		// goroutine, where t.Fatal must not be called.
		must(t, st.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
			if err := isField(q.CreateWallet(ctx, refused), payd.ErrInvalidRequest, "keys.ethereum"); err != nil {
				return err
			}
			if err := q.CreateWallet(ctx, w); err != nil {
				return err
			}
			if err := isField(q.CreateWallet(ctx, second), payd.ErrWalletExists, ""); err != nil {
				return err
			}
			_, err := q.NextAddressIndex(ctx, w.ID, money.Bitcoin)
			return err
		}))
		wantWallet(t, st, biz.ID, w)
		if idx := mustIndex(t, st, w.ID, money.Bitcoin); idx != 1 {
			t.Fatalf("index after the transaction's own = %d, want 1", idx)
		}
	})
	t.Run("BusinessesRaceForOneKey", func(t *testing.T) {
		ctx, st := b.setup(t)
		const n = 16
		bizs, ws := make([]*payd.Business, n), make([]*payd.Wallet, n)
		for i := range bizs {
			bizs[i] = mustBusiness(t, ctx, st)
			keys := walletKeys(string(rune('a'+i)), money.Bitcoin, money.Solana)
			keys[money.Ethereum] = "xpub-contested"
			ws[i] = mustNewWallet(t, bizs[i].ID, keys)
		}
		_, errs := parallel(n, func(i int) (struct{}, error) { return struct{}{}, st.CreateWallet(ctx, ws[i]) })
		wantOneWinner(t, errs, "keys.ethereum")
		for i, err := range errs {
			w, werr := st.WalletByBusiness(ctx, bizs[i].ID)
			if (err == nil) != (werr == nil) || (werr == nil && w.Keys[money.Ethereum] != "xpub-contested") {
				t.Fatalf("business %d: create %v, read back %+v, %v", i, err, w, werr)
			}
		}
	})
	t.Run("OneBusinessRacesItself", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		ws := make([]*payd.Wallet, 16)
		for i := range ws {
			ws[i] = mustNewWallet(t, biz.ID, walletKeys(string(rune('a'+i)), money.Tron))
		}
		_, errs := parallel(len(ws), func(i int) (struct{}, error) { return struct{}{}, st.CreateWallet(ctx, ws[i]) })
		wantOneWinner(t, errs, "")
	})
	t.Run("NextAddressIndex", testNextAddressIndex(b))
	t.Run("Holdings", testHoldings(b))
	t.Run("HoldingsConcurrent", func(t *testing.T) { testHoldingsConcurrent(t, b) })
}

func testNextAddressIndex(b *bundle) func(t *testing.T) {
	return func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		w := mustWallet(t, ctx, st, biz.ID, walletKeys("a", money.Bitcoin, money.Ethereum, money.Polygon))
		for want := range uint32(3) {
			if got := mustIndex(t, st, w.ID, money.Bitcoin); got != want {
				t.Fatalf("bitcoin index %d, want %d", got, want)
			}
		}
		// Each network counts on its own, from 0.
		if got := mustIndex(t, st, w.ID, money.Polygon); got != 0 {
			t.Fatalf("first polygon index %d, want 0", got)
		}
		_, err := st.NextAddressIndex(ctx, w.ID, money.Solana)
		wantCode(t, err, payd.ErrNotFound)
		_, err = st.NextAddressIndex(ctx, payd.NewID(payd.PrefixWallet), money.Bitcoin)
		wantCode(t, err, payd.ErrNotFound)
		// A caller that rolls back gives its index back: no gap.
		err = st.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
			if idx, err := q.NextAddressIndex(ctx, w.ID, money.Ethereum); err != nil || idx != 0 {
				t.Errorf("index in the transaction = %d, %v", idx, err)
			}
			return errBoom
		})
		if !errors.Is(err, errBoom) {
			t.Fatalf("Tx = %v", err)
		}
		if got := mustIndex(t, st, w.ID, money.Ethereum); got != 0 {
			t.Fatalf("index after a rollback = %d, want 0 again", got)
		}
		// Many callers at once, half in transactions of their own that
		// do more work, get every index once, without a gap.
		const n = 60
		got, errs := parallel(n, func(i int) (uint32, error) {
			if i%2 == 0 {
				return st.NextAddressIndex(ctx, w.ID, money.Bitcoin)
			}
			var idx uint32
			err := st.Tx(ctx, func(ctx context.Context, q payd.Queries) (err error) {
				if _, err = q.WalletByBusiness(ctx, biz.ID); err != nil {
					return err
				}
				idx, err = q.NextAddressIndex(ctx, w.ID, money.Bitcoin)
				return err
			})
			return idx, err
		})
		noErrors(t, errs)
		wantContiguous(t, got, 3, n)
		t.Run("CallerHoldsTheCounter", func(t *testing.T) { testIndexUnderOwnLock(t, b) })
	}
}

// testIndexUnderOwnLock takes an index in a transaction that has already
// locked the wallet's counter row itself (PostgreSQL, where a refill of
// the address pool runs apart and would wait for that lock): the index
// comes from the caller's own transaction, promptly. It runs where the
// store lets a test write inside a transaction (store's own tests).
func testIndexUnderOwnLock(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	raw, ok := st.(interface {
		ExecInTx(ctx context.Context, query string, args ...any) error
	})
	if !ok {
		t.Skip("the store offers no raw statements here")
	}
	biz := mustBusiness(t, ctx, st)
	w := mustWallet(t, ctx, st, biz.ID, walletKeys("own-lock", money.Bitcoin))
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	start := clock.Real{}.Now()
	var idx uint32
	must(t, st.Tx(ctx, func(ctx context.Context, q payd.Queries) (err error) {
		if err = raw.ExecInTx(ctx, `UPDATE wallet_keys SET key_id = key_id WHERE wallet_id = $1`, w.ID); err != nil {
			return err
		}
		idx, err = q.NextAddressIndex(ctx, w.ID, money.Bitcoin)
		return err
	}))
	if took := (clock.Real{}).Now().Sub(start); idx != 0 || took > 5*time.Second {
		t.Fatalf("index %d after %s, want 0 within the refill's lock timeout", idx, took)
	}
	if got := mustIndex(t, st, w.ID, money.Bitcoin); got != 1 {
		t.Fatalf("next index %d, want 1", got)
	}
}

// walletKeys returns made-up canonical keys, distinct per tag and network.
// The store treats keys as opaque strings; their formats are package hd's.
func walletKeys(tag string, networks ...money.Network) map[money.Network]string {
	keys := map[money.Network]string{}
	for _, n := range networks {
		keys[n] = "key-" + tag + "-" + string(n)
	}
	return keys
}

// keyIDs makes up the identity of each made-up key (hd.AccountKey.Identity
// for real ones): one per key string, so two strings are two keys unless a
// test says otherwise.
func keyIDs(keys map[money.Network]string) map[money.Network]string {
	ids := map[money.Network]string{}
	for n, k := range keys {
		ids[n] = "id-" + k
	}
	return ids
}

// mustNewWallet returns an unsaved attached wallet.
func mustNewWallet(t *testing.T, bizID string, keys map[money.Network]string) *payd.Wallet {
	t.Helper()
	w, err := payd.NewWallet(bizID, keys, keyIDs(keys), payd.WalletAttached, t0)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// mustWallet stores a new attached wallet and returns it.
func mustWallet(t *testing.T, ctx context.Context, st payd.Store, bizID string, keys map[money.Network]string) *payd.Wallet {
	t.Helper()
	w := mustNewWallet(t, bizID, keys)
	must(t, st.CreateWallet(ctx, w))
	return w
}

// wantWallet checks the business's stored wallet.
func wantWallet(t *testing.T, st payd.Store, bizID string, want *payd.Wallet) {
	t.Helper()
	got, err := st.WalletByBusiness(t.Context(), bizID)
	must(t, err)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("wallet = %+v, want %+v", got, want)
	}
}

// mustIndex takes the wallet's next index on n.
func mustIndex(t *testing.T, st payd.Store, walletID string, n money.Network) uint32 {
	t.Helper()
	idx, err := st.NextAddressIndex(t.Context(), walletID, n)
	must(t, err)
	return idx
}

// wantContiguous checks that got holds from, from+1, … once each.
func wantContiguous(t *testing.T, got []uint32, from uint32, n int) {
	t.Helper()
	sorted := slices.Sorted(slices.Values(got))
	for i, idx := range sorted {
		if idx != from+uint32(i) {
			t.Fatalf("indexes = %v, want %d to %d once each", sorted, from, int(from)+n-1)
		}
	}
}

// wantField fails unless err is a payd error with the code and field.
func wantField(t *testing.T, err error, code, field string) {
	t.Helper()
	if err := isField(err, code, field); err != nil {
		t.Fatal(err)
	}
}

// isField returns nil when err is a payd error with the code and field,
// and an error saying what it is otherwise.
func isField(err error, code, field string) error {
	var pe *payd.Error
	if !errors.As(err, &pe) || pe.Code != code || pe.Field != field {
		return fmt.Errorf("error = %v, want %s naming %q", err, code, field)
	}
	return nil
}

// wantOneWinner checks a race: one call succeeded, and every other was
// refused, with invalid_request naming field, or wallet_exists when field
// is "".
func wantOneWinner(t *testing.T, errs []error, field string) {
	t.Helper()
	winners := 0
	for _, err := range errs {
		switch {
		case err == nil:
			winners++
		case field == "":
			wantCode(t, err, payd.ErrWalletExists)
		default:
			wantField(t, err, payd.ErrInvalidRequest, field)
		}
	}
	if winners != 1 {
		t.Fatalf("%d of %d racing wallets were stored, want 1: %v", winners, len(errs), errs)
	}
}
