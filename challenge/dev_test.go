package challenge

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"payd"
	"payd/clock"
	"payd/store/storetest"
)

// forEachStore runs fn on SQLite, and on PostgreSQL when
// PAYD_TEST_POSTGRES is set, each store on its own fake clock.
func forEachStore(t *testing.T, fn func(t *testing.T, st payd.Store, clk *clock.Fake)) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			if dialect == "postgres" && os.Getenv(storetest.PostgresEnv) == "" {
				t.Skipf("%s is not set", storetest.PostgresEnv)
			}
			t.Parallel()
			clk := clock.NewFake(t0)
			fn(t, storetest.Open(t, dialect, clk), clk)
		})
	}
}

func TestDev(t *testing.T) {
	ctx := context.Background()
	forEachStore(t, func(t *testing.T, st payd.Store, clk *clock.Fake) {
		d := NewDev(st, clk)
		issue := func(form payd.ChallengeForm) string {
			t.Helper()
			tok, err := d.Issue(ctx, form)
			if err != nil {
				t.Fatal(err)
			}
			return tok
		}

		// Good once.
		tok := issue(payd.ChallengeSignup)
		wantCode(t, d.Verify(ctx, payd.ChallengeSignup, tok, ""), "")
		wantCode(t, d.Verify(ctx, payd.ChallengeSignup, tok, ""), failed)

		// Another form: refused, and spent with it.
		tok = issue(payd.ChallengeSignin)
		wantCode(t, d.Verify(ctx, payd.ChallengeReset, tok, ""), failed)
		wantCode(t, d.Verify(ctx, payd.ChallengeSignin, tok, ""), failed)

		// Missing, made up.
		wantCode(t, d.Verify(ctx, payd.ChallengeSignup, "", ""), failed)
		wantCode(t, d.Verify(ctx, payd.ChallengeSignup, devPrefix+"made-up", ""), failed)

		// Expiry on the service clock.
		early, late := issue(payd.ChallengeReset), issue(payd.ChallengeReset)
		clk.Advance(DevTokenTTL - time.Microsecond)
		wantCode(t, d.Verify(ctx, payd.ChallengeReset, early, ""), "")
		clk.Advance(time.Microsecond)
		wantCode(t, d.Verify(ctx, payd.ChallengeReset, late, ""), failed)

		// The database holds the hash, never the token.
		tok = issue(payd.ChallengeSignup)
		if _, err := st.TakeChallengeToken(ctx, tok); !payd.IsNotFound(err) {
			t.Fatalf("the token itself is a stored key: %v", err)
		}
		stored, err := st.TakeChallengeToken(ctx, devHash(tok))
		if err != nil || stored.Form != payd.ChallengeSignup || !stored.ExpiresAt.Equal(clk.Now().Add(DevTokenTTL)) {
			t.Fatalf("stored token = %+v, %v", stored, err)
		}

		// Issuing sweeps the expired tokens.
		stale := issue(payd.ChallengeSignin)
		clk.Advance(DevTokenTTL)
		issue(payd.ChallengeSignin)
		if _, err := st.TakeChallengeToken(ctx, devHash(stale)); !payd.IsNotFound(err) {
			t.Fatalf("an expired token outlived the next Issue: %v", err)
		}

		// Unknown form.
		if _, err := d.Issue(ctx, "checkout"); payd.ErrorCode(err) != payd.ErrInvalidRequest {
			t.Fatalf("Issue(checkout) = %v, want invalid_request", err)
		}
	})
}

func TestDevConcurrentAcrossReplicas(t *testing.T) {
	// Two replicas share the database: a token issued by one is spent on
	// the other, and of many concurrent uses exactly one wins.
	ctx := context.Background()
	forEachStore(t, func(t *testing.T, st payd.Store, clk *clock.Fake) {
		a, b := NewDev(st, clk), NewDev(st, clk)
		for range 5 {
			tok, err := a.Issue(ctx, payd.ChallengeSignup)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make([]error, 8)
			for i := range errs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					replica := []*Dev{a, b}[i%2]
					errs[i] = replica.Verify(ctx, payd.ChallengeSignup, tok, "")
				}()
			}
			wg.Wait()
			passed := 0
			for _, err := range errs {
				if err == nil {
					passed++
				} else {
					wantCode(t, err, failed)
				}
			}
			if passed != 1 {
				t.Fatalf("%d of %d concurrent uses passed, want 1", passed, len(errs))
			}
		}
	})
}
