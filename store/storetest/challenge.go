package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"payd"
)

func testChallengeToken(t *testing.T, b *bundle) {
	tok := func(hash string, form payd.ChallengeForm) *payd.ChallengeToken {
		return &payd.ChallengeToken{Hash: hash, Form: form, CreatedAt: t0, ExpiresAt: t0.Add(10 * time.Minute)}
	}
	t.Run("TakeOnce", func(t *testing.T) {
		ctx, st := b.setup(t)
		want := tok("aa01", payd.ChallengeSignin)
		must(t, st.CreateChallengeToken(ctx, want))
		got, err := st.TakeChallengeToken(ctx, "aa01")
		must(t, err)
		if *got != *want {
			t.Fatalf("TakeChallengeToken = %+v, want %+v", got, want)
		}
		_, err = st.TakeChallengeToken(ctx, "aa01")
		wantCode(t, err, payd.ErrNotFound)
		_, err = st.TakeChallengeToken(ctx, "never-issued")
		wantCode(t, err, payd.ErrNotFound)
	})
	t.Run("DuplicateHash", func(t *testing.T) {
		ctx, st := b.setup(t)
		must(t, st.CreateChallengeToken(ctx, tok("bb02", payd.ChallengeSignup)))
		wantCode(t, st.CreateChallengeToken(ctx, tok("bb02", payd.ChallengeReset)), payd.ErrConflict)
	})
	t.Run("ConcurrentTake", func(t *testing.T) {
		// Many racers, each token once: exactly one take per token wins,
		// on either database.
		ctx, st := b.setup(t)
		const tokens, racers = 5, 8
		for i := range tokens {
			must(t, st.CreateChallengeToken(ctx, tok(fmt.Sprintf("cc%02d", i), payd.ChallengeSignup)))
		}
		for i := range tokens {
			hash := fmt.Sprintf("cc%02d", i)
			got, errs := parallel(racers, func(int) (*payd.ChallengeToken, error) {
				return st.TakeChallengeToken(ctx, hash)
			})
			won := 0
			for j, err := range errs {
				switch {
				case err == nil && got[j].Hash == hash:
					won++
				case payd.IsNotFound(err):
				default:
					t.Fatalf("take %d of %s: %+v, %v", j, hash, got[j], err)
				}
			}
			if won != 1 {
				t.Fatalf("%d of %d concurrent takes of %s won, want 1", won, racers, hash)
			}
		}
	})
	t.Run("DeleteExpired", func(t *testing.T) {
		ctx, st := b.setup(t)
		old := tok("dd01", payd.ChallengeReset)
		old.ExpiresAt = t0.Add(time.Minute)
		must(t, st.CreateChallengeToken(ctx, old))
		must(t, st.CreateChallengeToken(ctx, tok("dd02", payd.ChallengeReset)))
		n, err := st.DeleteExpiredChallengeTokens(ctx, t0.Add(time.Minute))
		must(t, err)
		if n != 1 {
			t.Fatalf("DeleteExpiredChallengeTokens removed %d, want 1", n)
		}
		_, err = st.TakeChallengeToken(ctx, "dd01")
		wantCode(t, err, payd.ErrNotFound)
		_, err = st.TakeChallengeToken(ctx, "dd02")
		must(t, err)
	})
	t.Run("InTx", func(t *testing.T) {
		// A take rolled back with its transaction leaves the token usable.
		ctx, st := b.setup(t)
		must(t, st.CreateChallengeToken(ctx, tok("ee01", payd.ChallengeSignin)))
		errRollback := fmt.Errorf("roll back")
		err := st.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
			if _, err := q.TakeChallengeToken(ctx, "ee01"); err != nil {
				return err
			}
			return errRollback
		})
		if err != errRollback {
			t.Fatalf("Tx = %v, want the rollback error", err)
		}
		_, err = st.TakeChallengeToken(ctx, "ee01")
		must(t, err)
	})
}
