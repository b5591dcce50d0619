package storetest

import (
	"testing"
	"time"

	"payd"
)

func testRecovery(t *testing.T, b *bundle) {
	t.Run("PasswordReset", func(t *testing.T) {
		ctx, st := b.setup(t)
		u, _ := payd.NewUser("ada@example.com", "Ada", "phc", t0)
		must(t, st.CreateUser(ctx, u))
		tok1, first := payd.NewPasswordReset(u, t0)
		tok2, second := payd.NewPasswordReset(u, t0.Add(time.Minute))
		must(t, st.CreatePasswordReset(ctx, first))
		must(t, st.CreatePasswordReset(ctx, second))
		got, err := st.PasswordResetByToken(ctx, payd.SecretHash(tok1))
		must(t, err)
		if got.ID != first.ID || got.Status != payd.ResetReplaced || got.Email != "ada@example.com" {
			t.Fatalf("first link after a second = %+v, want replaced", got)
		}
		wantCode(t, st.UsePasswordReset(ctx, first.ID, t0), payd.ErrConflict)
		got, err = st.PasswordResetByToken(ctx, payd.SecretHash(tok2))
		must(t, err)
		if got.Status != payd.ResetPending || !got.ExpiresAt.Equal(t0.Add(time.Minute+payd.ResetTTL)) || got.UsedAt != nil {
			t.Fatalf("second link = %+v", got)
		}
		// A link is used once, even by racing callers.
		_, errs := parallel(4, func(int) (int, error) { return 0, st.UsePasswordReset(ctx, second.ID, t0.Add(2*time.Minute)) })
		ok := 0
		for _, err := range errs {
			if err == nil {
				ok++
			} else {
				wantCode(t, err, payd.ErrConflict)
			}
		}
		if ok != 1 {
			t.Fatalf("%d racing uses succeeded, want 1", ok)
		}
		got, _ = st.PasswordResetByToken(ctx, payd.SecretHash(tok2))
		if got.Status != payd.ResetUsed || got.UsedAt == nil || !got.UsedAt.Equal(t0.Add(2*time.Minute)) {
			t.Fatalf("used link = %+v", got)
		}
		_, err = st.PasswordResetByToken(ctx, payd.SecretHash("nope"))
		wantCode(t, err, payd.ErrNotFound)
	})
	t.Run("ClearDeviceAttempts", func(t *testing.T) {
		ctx, st := b.setup(t)
		keep := t0.Add(time.Hour)
		subjects := []string{"pwdev:usr_a1:h1", "pwdev:usr_a1:h2", "pwdev:usr_a10:h1", "pwdev:usrXa1:h1", "pw:usr_a1"}
		for _, sub := range subjects {
			_, _, err := st.TryAttempt(ctx, sub, t0, keep, payd.PasswordLock)
			must(t, err)
		}
		must(t, st.ClearDeviceAttempts(ctx, "usr_a1"))
		for i, sub := range subjects {
			a, err := st.Attempt(ctx, sub, t0)
			must(t, err)
			if want := map[bool]int{true: 0, false: 1}[i < 2]; a.Failures != want {
				t.Fatalf("%s has %d failures after ClearDeviceAttempts, want %d", sub, a.Failures, want)
			}
		}
	})
	t.Run("EmailChange", func(t *testing.T) {
		ctx, st := b.setup(t)
		u, _ := payd.NewUser("ada@example.com", "Ada", "phc", t0)
		must(t, st.CreateUser(ctx, u))
		mk := func(at time.Time, to string) *payd.EmailChange {
			return &payd.EmailChange{ID: payd.NewID(payd.PrefixEmailChange), UserID: u.ID, OldEmail: u.Email,
				NewEmail: to, CodeHash: "c", CodeSentAt: at, CodesSent: 1, Status: payd.EmailChangePending,
				CreatedAt: at, ExpiresAt: at.Add(payd.VerificationTTL)}
		}
		first, second := mk(t0, "ada@one.example"), mk(t0.Add(time.Minute), "ada@two.example")
		must(t, st.CreateEmailChange(ctx, first))
		must(t, st.CreateEmailChange(ctx, second))
		got, err := st.PendingEmailChange(ctx, u.ID)
		must(t, err)
		if got.ID != second.ID || got.NewEmail != "ada@two.example" || got.UndoHash != "" || got.DoneAt != nil {
			t.Fatalf("PendingEmailChange = %+v, want the second", got)
		}
		wantCode(t, st.SaveEmailChange(ctx, first), payd.ErrConflict) // replaced: its version moved on
		done, undoUntil := t0.Add(2*time.Minute), t0.Add(payd.UndoTTL)
		got.Status, got.UndoHash, got.DoneAt, got.UndoExpiresAt = payd.EmailChangeDone, "undo", &done, &undoUntil
		must(t, st.SaveEmailChange(ctx, got))
		wantCode(t, st.SaveEmailChange(ctx, second), payd.ErrConflict) // stale copy
		_, err = st.PendingEmailChange(ctx, u.ID)
		wantCode(t, err, payd.ErrNotFound)
		back, err := st.EmailChangeByUndo(ctx, "undo")
		must(t, err)
		if back.ID != second.ID || back.Status != payd.EmailChangeDone || !back.DoneAt.Equal(done) ||
			!back.UndoExpiresAt.Equal(undoUntil) || back.Version != 1 {
			t.Fatalf("EmailChangeByUndo = %+v", back)
		}
		_, err = st.EmailChangeByUndo(ctx, "other")
		wantCode(t, err, payd.ErrNotFound)

		third := mk(t0.Add(3*time.Minute), "ada@three.example")
		must(t, st.CreateEmailChange(ctx, third))
		if back, _ = st.EmailChangeByUndo(ctx, "undo"); back.Status != payd.EmailChangeDone {
			t.Fatalf("a new change touched a done one: %+v", back)
		}
		// Ending them replaces the pending change and voids the done one's undo link.
		must(t, st.EndEmailChanges(ctx, u.ID))
		_, err = st.PendingEmailChange(ctx, u.ID)
		wantCode(t, err, payd.ErrNotFound)
		if back, _ = st.EmailChangeByUndo(ctx, "undo"); back.Status != payd.EmailChangeReplaced {
			t.Fatalf("after EndEmailChanges the done change is %+v", back)
		}
		started, alerted, err := st.CountEmailChanges(ctx, u.ID, t0.Add(time.Minute))
		must(t, err)
		if started != 2 || alerted != 1 {
			t.Fatalf("CountEmailChanges = %d started, %d alerted; want 2, 1", started, alerted)
		}
		started, alerted, err = st.CountEmailChanges(ctx, u.ID, t0.Add(time.Hour))
		must(t, err)
		if started != 0 || alerted != 0 {
			t.Fatalf("CountEmailChanges an hour on = %d, %d; want 0, 0", started, alerted)
		}
	})
}
