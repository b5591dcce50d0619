package storetest

import (
	"reflect"
	"testing"
	"time"

	"payd"
)

func testTwoFactorChallenge(t *testing.T, b *bundle) {
	ada := &payd.User{ID: "usr_ada", PasswordHash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA"}
	t.Run("CreateReadTake", func(t *testing.T) {
		ctx, st := b.setup(t)
		_, want := payd.NewTwoFactorChallenge(ada, t0)
		must(t, st.CreateTwoFactorChallenge(ctx, want))
		got, err := st.TwoFactorChallenge(ctx, want.ID)
		must(t, err)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("TwoFactorChallenge = %+v, want %+v", got, want)
		}
		wantCode(t, st.CreateTwoFactorChallenge(ctx, want), payd.ErrConflict)
		must(t, st.TakeTwoFactorChallenge(ctx, want.ID))
		wantCode(t, st.TakeTwoFactorChallenge(ctx, want.ID), payd.ErrNotFound)
		_, err = st.TwoFactorChallenge(ctx, want.ID)
		wantCode(t, err, payd.ErrNotFound)
		_, err = st.TwoFactorChallenge(ctx, "tfa_never")
		wantCode(t, err, payd.ErrNotFound)
	})
	t.Run("ConcurrentTake", func(t *testing.T) {
		ctx, st := b.setup(t)
		const racers = 8
		_, c := payd.NewTwoFactorChallenge(ada, t0)
		must(t, st.CreateTwoFactorChallenge(ctx, c))
		_, errs := parallel(racers, func(int) (struct{}, error) {
			return struct{}{}, st.TakeTwoFactorChallenge(ctx, c.ID)
		})
		won := 0
		for j, err := range errs {
			switch {
			case err == nil:
				won++
			case payd.IsNotFound(err):
			default:
				t.Fatalf("take %d: %v", j, err)
			}
		}
		if won != 1 {
			t.Fatalf("%d of %d concurrent takes won, want 1", won, racers)
		}
	})
	t.Run("DeleteExpired", func(t *testing.T) {
		ctx, st := b.setup(t)
		_, old := payd.NewTwoFactorChallenge(ada, t0.Add(-payd.TwoFactorChallengeTTL))
		_, live := payd.NewTwoFactorChallenge(ada, t0.Add(time.Second))
		must(t, st.CreateTwoFactorChallenge(ctx, old))
		must(t, st.CreateTwoFactorChallenge(ctx, live))
		n, err := st.DeleteExpiredTwoFactorChallenges(ctx, t0)
		must(t, err)
		if n != 1 {
			t.Fatalf("DeleteExpiredTwoFactorChallenges removed %d, want 1", n)
		}
		_, err = st.TwoFactorChallenge(ctx, old.ID)
		wantCode(t, err, payd.ErrNotFound)
		_, err = st.TwoFactorChallenge(ctx, live.ID)
		must(t, err)
	})
}
