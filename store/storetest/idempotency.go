package storetest

import (
	"bytes"
	"context"
	"testing"
	"time"

	"payd"
)

// claim returns a record claimed at now with the API's lease and window.
func claim(scope, key, bodyHash string, now time.Time) *payd.IdempotencyRecord {
	return &payd.IdempotencyRecord{
		Scope: scope, Key: key, Method: "POST", Path: "/api/v1/payments", BodyHash: bodyHash,
		CreatedAt: now, LockedUntil: now.Add(2 * time.Minute), ExpiresAt: now.Add(24 * time.Hour),
	}
}

// mustClaim claims rec and fails unless the claim was taken.
func mustClaim(t *testing.T, st payd.Store, rec *payd.IdempotencyRecord, now time.Time) {
	t.Helper()
	held, err := st.ClaimIdempotencyKey(t.Context(), rec, now)
	must(t, err)
	if held != nil {
		t.Fatalf("claim of %s/%s at %v refused; held by %+v", rec.Scope, rec.Key, now, held)
	}
}

// mustBeHeld claims rec and fails unless the key is held; it returns the holder.
func mustBeHeld(t *testing.T, st payd.Store, rec *payd.IdempotencyRecord, now time.Time) *payd.IdempotencyRecord {
	t.Helper()
	held, err := st.ClaimIdempotencyKey(t.Context(), rec, now)
	must(t, err)
	if held == nil {
		t.Fatalf("claim of %s/%s at %v taken, want it held", rec.Scope, rec.Key, now)
	}
	return held
}

func testIdempotency(t *testing.T, b *bundle) {
	t.Run("ClaimCompleteReplay", func(t *testing.T) { testClaimCompleteReplay(t, b) })
	t.Run("Release", func(t *testing.T) { testRelease(t, b) })
	t.Run("LockLapseTakeover", func(t *testing.T) { testLockLapse(t, b) })
	t.Run("ExpiryTakeover", func(t *testing.T) { testExpiry(t, b) })
	t.Run("ScopesAreSeparate", func(t *testing.T) {
		_, st := b.setup(t)
		mustClaim(t, st, claim("biz_a", "k", "h", t0), t0)
		mustClaim(t, st, claim("biz_b", "k", "h", t0), t0)
	})
	t.Run("RaceHasOneWinner", func(t *testing.T) {
		ctx, st := b.setup(t)
		held, errs := parallel(50, func(int) (*payd.IdempotencyRecord, error) {
			return st.ClaimIdempotencyKey(ctx, claim("biz_a", "race", "h", t0), t0)
		})
		noErrors(t, errs)
		winners := 0
		for _, h := range held {
			if h == nil {
				winners++
			} else if h.Status != 0 || h.BodyHash != "h" {
				t.Fatalf("loser saw %+v, want the running claim", h)
			}
		}
		if winners != 1 {
			t.Fatalf("%d of 50 racing claims won, want exactly 1", winners)
		}
	})
	t.Run("DeleteExpired", func(t *testing.T) {
		ctx, st := b.setup(t)
		mustClaim(t, st, claim("biz_a", "old", "h", t0), t0)
		mustClaim(t, st, claim("biz_a", "new", "h", t0.Add(time.Hour)), t0.Add(time.Hour))
		n, err := st.DeleteExpiredIdempotencyKeys(ctx, t0.Add(24*time.Hour))
		must(t, err)
		if n != 1 {
			t.Fatalf("deleted %d records, want 1 (expiry at or before now)", n)
		}
		later := t0.Add(time.Hour + time.Minute) // inside the new claim's lock
		mustBeHeld(t, st, claim("biz_a", "new", "h", later), later)
	})
}

func testClaimCompleteReplay(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	rec := claim("biz_a", "k1", "hash1", t0)
	mustClaim(t, st, rec, t0)
	held := mustBeHeld(t, st, claim("biz_a", "k1", "hash2", t0.Add(time.Second)), t0.Add(time.Second))
	if held.Status != 0 || held.BodyHash != "hash1" || held.Method != "POST" || held.Path != rec.Path ||
		!held.LockedUntil.Equal(rec.LockedUntil) || !held.ExpiresAt.Equal(rec.ExpiresAt) || !held.CreatedAt.Equal(t0) {
		t.Fatalf("running claim read back as %+v, want %+v", held, rec)
	}
	// NUL and invalid UTF-8: the response is replayed byte for byte.
	body := []byte("{\"id\":\"pmt_1\"}\x00\xff")
	must(t, st.CompleteIdempotencyKey(ctx, rec, 201, "application/json", body))
	wantCode(t, st.CompleteIdempotencyKey(ctx, rec, 200, "text/plain", nil), payd.ErrNotFound)
	// A completed response outlives its lock until it expires.
	later := t0.Add(time.Hour)
	held = mustBeHeld(t, st, claim("biz_a", "k1", "hash1", later), later)
	if held.Status != 201 || held.ContentType != "application/json" || !bytes.Equal(held.Body, body) {
		t.Fatalf("completed record = %+v, want status 201 and the body", held)
	}
	// A claim held only in memory: completing inserts the whole record.
	mem := claim("biz_a", "memory", "h", t0)
	must(t, st.CompleteIdempotencyKey(ctx, mem, 201, "application/json", body))
	if got, err := st.IdempotencyRecord(ctx, "biz_a", "memory"); err != nil || got.Status != 201 || !bytes.Equal(got.Body, body) || got.BodyHash != "h" {
		t.Fatalf("record completed from memory = %+v, %v", got, err)
	}
	// Another request's running claim or stored response wins: not_found.
	other := claim("biz_a", "k2", "h", t0)
	mustClaim(t, st, other, t0)
	wantCode(t, st.CompleteIdempotencyKey(ctx, claim("biz_a", "k2", "h", t0.Add(time.Second)), 201, "application/json", body), payd.ErrNotFound)
	wantCode(t, st.CompleteIdempotencyKey(ctx, claim("biz_a", "memory", "h", t0.Add(time.Second)), 201, "application/json", body), payd.ErrNotFound)
	// An expired record is taken over.
	late := claim("biz_a", "memory", "h2", mem.ExpiresAt)
	must(t, st.CompleteIdempotencyKey(ctx, late, 200, "application/json", []byte("{}")))
	_, err := st.IdempotencyRecord(ctx, "biz_a", "nothing")
	wantCode(t, err, payd.ErrNotFound)
}

func testRelease(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	c := claim("biz_a", "k", "h", t0)
	mustClaim(t, st, c, t0)
	must(t, st.ReleaseIdempotencyKey(ctx, c))
	must(t, st.ReleaseIdempotencyKey(ctx, c))
	mustClaim(t, st, c, t0)
	must(t, st.CompleteIdempotencyKey(ctx, c, 200, "application/json", []byte("{}")))
	// A stored response is never released.
	must(t, st.ReleaseIdempotencyKey(ctx, c))
	if held := mustBeHeld(t, st, claim("biz_a", "k", "h", t0), t0); held.Status != 200 {
		t.Fatalf("after releasing a completed key: %+v", held)
	}
}

func testLockLapse(t *testing.T, b *bundle) {
	_, st := b.setup(t)
	first := claim("biz_a", "k", "first", t0)
	mustClaim(t, st, first, t0)
	mustBeHeld(t, st, claim("biz_a", "k", "second", t0), first.LockedUntil.Add(-time.Microsecond))
	// At LockedUntil the claim has lapsed: its process is taken to be dead.
	second := claim("biz_a", "k", "second", first.LockedUntil)
	mustClaim(t, st, second, first.LockedUntil)
	if held := mustBeHeld(t, st, claim("biz_a", "k", "third", second.CreatedAt), second.CreatedAt); held.BodyHash != "second" {
		t.Fatalf("after takeover the key is held by %+v, want the second claim", held)
	}
	// The first request, still alive after all, can neither complete nor
	// release the claim that took over: it is fenced by its own CreatedAt.
	ctx := context.Background()
	wantCode(t, st.CompleteIdempotencyKey(ctx, first, 201, "application/json", []byte("{}")), payd.ErrNotFound)
	must(t, st.ReleaseIdempotencyKey(ctx, first))
	if held := mustBeHeld(t, st, claim("biz_a", "k", "third", second.CreatedAt), second.CreatedAt); held.BodyHash != "second" || held.Status != 0 {
		t.Fatalf("the lapsed claim touched the new one: %+v", held)
	}
	must(t, st.CompleteIdempotencyKey(ctx, second, 201, "application/json", []byte("{}")))
}

func testExpiry(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	first := claim("biz_a", "k", "first", t0)
	mustClaim(t, st, first, t0)
	must(t, st.CompleteIdempotencyKey(context.WithoutCancel(ctx), first, 201, "application/json", []byte("{}")))
	mustBeHeld(t, st, claim("biz_a", "k", "second", t0), first.ExpiresAt.Add(-time.Microsecond))
	mustClaim(t, st, claim("biz_a", "k", "second", first.ExpiresAt), first.ExpiresAt)
	held := mustBeHeld(t, st, claim("biz_a", "k", "third", first.ExpiresAt), first.ExpiresAt)
	if held.Status != 0 || held.Body != nil || held.ContentType != "" || held.BodyHash != "second" {
		t.Fatalf("expired response not replaced by the new claim: %+v", held)
	}
}
