package storetest

import (
	"testing"
	"time"

	"payd"
)

func testAccount(t *testing.T, b *bundle) {
	t.Run("User", func(t *testing.T) {
		ctx, st := b.setup(t)
		u, err := payd.NewUser("Ada@Example.com", "Ada", "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA", t0)
		must(t, err)
		must(t, st.CreateUser(ctx, u))
		got, err := st.UserByEmail(ctx, "ada@EXAMPLE.com")
		must(t, err)
		if got.ID != u.ID || got.Email != "Ada@Example.com" || got.PasswordHash != u.PasswordHash ||
			got.RecoveryCodes == nil || len(got.RecoveryCodes) != 0 || got.Version != 0 || !got.CreatedAt.Equal(t0) {
			t.Fatalf("UserByEmail = %+v", got)
		}
		again, _ := payd.NewUser("ada@example.COM", "Other", "", t0)
		wantCode(t, st.CreateUser(ctx, again), payd.ErrEmailTaken)

		hold, on := t0.Add(time.Hour), t0.Add(time.Minute)
		got.PasswordDisabled, got.ResetHoldUntil, got.TOTPSecret, got.TOTPEnabledAt = true, &hold, "JBSWY3DP", &on
		got.TOTPLastStep, got.RecoveryCodes, got.Email = 42, []string{"h1", "h2"}, "ada@new.example"
		must(t, st.SaveUser(ctx, got))
		back, err := st.UserByID(ctx, u.ID)
		must(t, err)
		if !back.PasswordDisabled || !back.ResetHoldUntil.Equal(hold) || back.TOTPSecret != "JBSWY3DP" ||
			back.TOTPLastStep != 42 || len(back.RecoveryCodes) != 2 || back.Version != 1 || back.Email != "ada@new.example" {
			t.Fatalf("after SaveUser: %+v", back)
		}
		if _, err := st.UserByEmail(ctx, "ada@example.com"); !payd.IsNotFound(err) {
			t.Fatalf("old address still finds the user: %v", err)
		}
		wantCode(t, st.SaveUser(ctx, u), payd.ErrConflict) // stale version
		other, _ := payd.NewUser("bob@example.com", "Bob", "", t0)
		must(t, st.CreateUser(ctx, other))
		other.Email = "ADA@new.example"
		wantCode(t, st.SaveUser(ctx, other), payd.ErrEmailTaken)
		_, err = st.UserByID(ctx, "usr_missing")
		wantCode(t, err, payd.ErrNotFound)
	})
	t.Run("Signup", func(t *testing.T) {
		ctx, st := b.setup(t)
		mk := func(at time.Time) *payd.Signup {
			return &payd.Signup{ID: payd.NewID(payd.PrefixSignup), Email: "Ada@example.com", Name: "Ada",
				PasswordHash: "phc", BrowserHash: "b", CodeHash: "c", CodeSentAt: at, CodesSent: 1,
				Status: payd.SignupPending, CreatedAt: at, ExpiresAt: at.Add(payd.VerificationTTL)}
		}
		first, second := mk(t0), mk(t0.Add(time.Second))
		must(t, st.CreateSignup(ctx, first))
		must(t, st.CreateSignup(ctx, second))
		got, err := st.PendingSignup(ctx, "ada@example.com")
		must(t, err)
		if got.ID != second.ID || got.CodesSent != 1 || !got.ExpiresAt.Equal(second.ExpiresAt) {
			t.Fatalf("PendingSignup = %+v, want the second", got)
		}
		wantCode(t, st.SaveSignup(ctx, first), payd.ErrConflict) // replaced: its version moved on
		got.Status = payd.SignupDone
		must(t, st.SaveSignup(ctx, got))
		_, err = st.PendingSignup(ctx, "ada@example.com")
		wantCode(t, err, payd.ErrNotFound)
	})
	t.Run("SessionAndMembers", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		u, _ := payd.NewUser("ada@example.com", "Ada", "", t0)
		must(t, st.CreateUser(ctx, u))
		tok1, s1 := payd.NewSession(u.ID, "password", "Firefox", "127.0.0.1", t0)
		_, s2 := payd.NewSession(u.ID, "passkey", "Chromium", "::1", t0.Add(time.Second))
		must(t, st.CreateSession(ctx, s1))
		must(t, st.CreateSession(ctx, s2))
		got, err := st.SessionByToken(ctx, payd.SecretHash(tok1))
		must(t, err)
		if got.ID != s1.ID || got.UserAgent != "Firefox" || !got.ProofAt.Equal(t0) || !got.ExpiresAt.Equal(t0.Add(payd.SessionMax)) {
			t.Fatalf("SessionByToken = %+v", got)
		}
		setup := t0.Add(time.Minute)
		got.TOTPSetupSecret, got.TOTPSetupAt = "SECRET", &setup
		must(t, st.SaveSession(ctx, got))
		// A touch writes the last use and business only: the setup stays.
		must(t, st.TouchSession(ctx, got.ID, setup, biz.ID))
		all, err := st.SessionsByUser(ctx, u.ID)
		must(t, err)
		if len(all) != 2 || all[0].ID != s2.ID || all[1].BusinessID != biz.ID || all[1].TOTPSetupSecret != "SECRET" {
			t.Fatalf("SessionsByUser = %+v", all)
		}
		n, err := st.DeleteSessions(ctx, u.ID, s1.ID)
		must(t, err)
		if n != 1 {
			t.Fatalf("DeleteSessions ended %d, want 1", n)
		}
		wantCode(t, st.DeleteSession(ctx, u.ID, s2.ID), payd.ErrNotFound)
		must(t, st.DeleteSession(ctx, u.ID, s1.ID))
		wantCode(t, st.SaveSession(ctx, got), payd.ErrNotFound)

		m := &payd.Membership{BusinessID: biz.ID, UserID: u.ID, Role: payd.RoleOwner, CreatedAt: t0}
		must(t, st.AddMember(ctx, m))
		wantCode(t, st.AddMember(ctx, m), payd.ErrConflict)
		gm, err := st.Member(ctx, biz.ID, u.ID)
		must(t, err)
		if gm.Role != payd.RoleOwner {
			t.Fatalf("Member = %+v", gm)
		}
		ms, err := st.MembershipsByUser(ctx, u.ID)
		must(t, err)
		if len(ms) != 1 || ms[0].BusinessID != biz.ID {
			t.Fatalf("MembershipsByUser = %+v", ms)
		}
		known, err := st.KnownDevice(ctx, u.ID, "dev1")
		must(t, err)
		must(t, st.RememberDevice(ctx, u.ID, "dev1", t0))
		must(t, st.RememberDevice(ctx, u.ID, "dev1", t0)) // twice is fine
		again, err := st.KnownDevice(ctx, u.ID, "dev1")
		must(t, err)
		if known || !again {
			t.Fatalf("KnownDevice before/after = %v/%v", known, again)
		}
		_, err = st.Member(ctx, biz.ID, "usr_other")
		wantCode(t, err, payd.ErrNotFound)
	})
	t.Run("Attempts", func(t *testing.T) {
		ctx, st := b.setup(t)
		a, err := st.Attempt(ctx, "pw:ada@example.com", t0)
		must(t, err)
		if a.Failures != 0 || a.Locked(t0) != 0 {
			t.Fatalf("fresh Attempt = %+v", a)
		}
		keep := t0.Add(24 * time.Hour)
		for i := 1; i <= 5; i++ {
			a, ok, err := st.TryAttempt(ctx, "pw:ada@example.com", t0, keep, payd.PasswordLock)
			must(t, err)
			if !ok || a.Failures != i {
				t.Fatalf("try %d: %+v, %v", i, a, ok)
			}
		}
		// The fifth started the lock in the same step: the sixth is refused
		// and not counted.
		a, ok, err := st.TryAttempt(ctx, "pw:ada@example.com", t0, keep, payd.PasswordLock)
		must(t, err)
		if ok || a.Failures != 5 || a.Locked(t0) != time.Minute {
			t.Fatalf("try during the lock: %+v, %v", a, ok)
		}
		a, err = st.Attempt(ctx, "pw:ada@example.com", t0)
		must(t, err)
		if a.Failures != 5 || a.Locked(t0) != time.Minute {
			t.Fatalf("Attempt = %+v", a)
		}
		// After the lock, tries count again.
		a, ok, _ = st.TryAttempt(ctx, "pw:ada@example.com", t0.Add(time.Minute), keep, payd.PasswordLock)
		if !ok || a.Failures != 6 {
			t.Fatalf("try after the lock: %+v, %v", a, ok)
		}
		// Past keep_until the count is gone and starts again.
		if a, _ := st.Attempt(ctx, "pw:ada@example.com", keep); a.Failures != 0 {
			t.Fatalf("Attempt past keep = %+v", a)
		}
		a, ok, _ = st.TryAttempt(ctx, "pw:ada@example.com", keep, keep.Add(time.Hour), payd.PasswordLock)
		if !ok || a.Failures != 1 {
			t.Fatalf("try past keep = %+v, %v", a, ok)
		}
		// Concurrent tries never get past a lock: of 12 racing tries at a
		// fresh subject exactly 5 are let through.
		got, errs := parallel(12, func(int) (bool, error) {
			_, ok, err := st.TryAttempt(ctx, "totp:usr_1", t0, keep, payd.CodeLock)
			return ok, err
		})
		through := 0
		for i, err := range errs {
			must(t, err)
			if got[i] {
				through++
			}
		}
		if through != 5 {
			t.Fatalf("%d of 12 concurrent tries got through, want 5", through)
		}
		must(t, st.ClearAttempts(ctx, "totp:usr_1"))
		if a, _ := st.Attempt(ctx, "totp:usr_1", t0); a.Failures != 0 {
			t.Fatalf("after ClearAttempts: %+v", a)
		}
	})
	t.Run("Sweep", func(t *testing.T) {
		ctx, st := b.setup(t)
		u, _ := payd.NewUser("ada@example.com", "Ada", "", t0)
		must(t, st.CreateUser(ctx, u))
		_, old := payd.NewSession(u.ID, "password", "", "", t0)
		_, fresh := payd.NewSession(u.ID, "password", "", "", t0.Add(payd.SessionIdle))
		must(t, st.CreateSession(ctx, old))
		must(t, st.CreateSession(ctx, fresh))
		_, _, err := st.TryAttempt(ctx, "pw:x", t0, t0.Add(time.Hour), payd.PasswordLock)
		must(t, err)
		n, err := st.DeleteExpiredAccountRows(ctx, t0.Add(payd.SessionIdle+time.Second))
		must(t, err)
		if n != 2 {
			t.Fatalf("swept %d rows, want the idle session and the kept count", n)
		}
		all, _ := st.SessionsByUser(ctx, u.ID)
		if len(all) != 1 || all[0].ID != fresh.ID {
			t.Fatalf("sessions after the sweep: %+v", all)
		}
		// A reset link goes a day after it expired.
		token, pr := payd.NewPasswordReset(u, t0)
		must(t, st.CreatePasswordReset(ctx, pr))
		if n, _ := st.DeleteExpiredAccountRows(ctx, pr.ExpiresAt.Add(time.Hour)); n != 0 {
			t.Fatalf("swept %d rows an hour after the link expired, want none", n)
		}
		if _, err := st.PasswordResetByToken(ctx, payd.SecretHash(token)); err != nil {
			t.Fatalf("the link went too soon: %v", err)
		}
		if _, err := st.DeleteExpiredAccountRows(ctx, pr.ExpiresAt.Add(payd.VerificationTTL)); err != nil {
			t.Fatal(err)
		}
		_, err = st.PasswordResetByToken(ctx, payd.SecretHash(token))
		wantCode(t, err, payd.ErrNotFound)
	})
	t.Run("CountEmails", func(t *testing.T) {
		ctx, st := b.setup(t)
		for i, kind := range []string{"signup_code", "signup_code", "password_reset"} {
			e, err := payd.NewEmail("ada@example.com", "s", "t", "", kind, t0.Add(time.Duration(i)*time.Minute))
			must(t, err)
			must(t, st.CreateEmail(ctx, e))
		}
		n, err := st.CountEmails(ctx, "ADA@example.com", []string{"signup_code", "password_reset"}, t0.Add(time.Minute))
		must(t, err)
		if n != 2 {
			t.Fatalf("CountEmails = %d, want 2", n)
		}
		n, _ = st.CountEmails(ctx, "ada@example.com", []string{"password_reset"}, t0)
		if n != 1 {
			t.Fatalf("CountEmails(password_reset) = %d, want 1", n)
		}
	})
}
