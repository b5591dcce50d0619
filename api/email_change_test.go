package api

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/store"
	"payd/store/storetest"
)

// startChange starts an email change in br.
func (br *browser) startChange(email, current string, status int, code ...string) map[string]any {
	br.t.Helper()
	return br.call(request{method: "POST", path: "/me/email", body: fmt.Sprintf(`{"email":%q,"current_password":%q}`, email, current)},
		status, code...)
}

// verifyChange finishes br's email change with code.
func (br *browser) verifyChange(code string, status int, errCode ...string) map[string]any {
	br.t.Helper()
	return br.call(request{method: "POST", path: "/me/email/verify", body: fmt.Sprintf(`{"code":%q}`, code)}, status, errCode...)
}

func (br *browser) resendChange(status int, code ...string) *response {
	br.t.Helper()
	r := br.do(request{method: "POST", path: "/me/email/resend"})
	if r.status != status {
		br.t.Fatalf("resend: got %d %s, want %d", r.status, r.body, status)
	}
	if len(code) > 0 {
		if got, _ := r.errorCode(br.t); got != code[0] || r.header.Get("Retry-After") == "" {
			br.t.Fatalf("resend: got %s Retry-After %q, want %s", r.body, r.header.Get("Retry-After"), code[0])
		}
	}
	return r
}

func (br *browser) undoChange(token string, status int, code ...string) map[string]any {
	br.t.Helper()
	return br.call(request{method: "POST", path: "/email-changes/undo", body: fmt.Sprintf(`{"token":%q}`, token)}, status, code...)
}

func TestEmailChange(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		br := newBrowser(t, b)
		br.signUp("ada@example.com")
		newBrowser(t, b).signUp("bob@example.com")
		anon := newBrowser(t, b)

		r := br.do(request{method: "POST", path: "/me/email", body: `{"email":"ada@new.example","current_password":"wrong one"}`})
		if code, field := r.errorCode(t); code != payd.ErrInvalidCredentials || field != "current_password" {
			t.Fatalf("wrong current password: %d %s", r.status, r.body)
		}
		br.startChange("BOB@example.com", testPassword, http.StatusConflict, payd.ErrEmailTaken)
		br.startChange("ADA@example.com", testPassword, http.StatusBadRequest, payd.ErrInvalidRequest)
		br.verifyChange("123456", http.StatusBadRequest, payd.ErrVerificationExpired)
		br.resendChange(http.StatusBadRequest)

		got := br.startChange("ada@new.example", testPassword, http.StatusAccepted)["data"].(map[string]any)
		if got["email"] != "ada@new.example" {
			t.Fatalf("start = %v", got)
		}
		if kinds := b.emails(t, "ada@new.example"); len(kinds) != 1 || kinds[0] != payd.EmailChangeCode {
			t.Fatalf("emails to the new address: %v", kinds)
		}
		code := b.lastCode(t, "ada@new.example")
		wrong := "000000"
		if code == wrong {
			wrong = "111111"
		}
		// A new code a minute after the last; 5 wrong tries per code.
		br.resendChange(http.StatusTooManyRequests, payd.ErrTooManyEmails)
		for range payd.CodeTries {
			br.verifyChange(wrong, http.StatusBadRequest, payd.ErrInvalidCode)
		}
		r = br.do(request{method: "POST", path: "/me/email/verify", body: fmt.Sprintf(`{"code":%q}`, code)})
		if c, _ := r.errorCode(t); c != payd.ErrTooManyAttempts || r.header.Get("Retry-After") == "" {
			t.Fatalf("right code after 5 wrong: %d %s", r.status, r.body)
		}
		b.clock.Advance(time.Minute)
		br.resendChange(http.StatusAccepted)
		code2 := b.lastCode(t, "ada@new.example")
		// A code works 15 minutes.
		b.clock.Advance(payd.CodeTTL)
		br.verifyChange(code2, http.StatusBadRequest, payd.ErrCodeExpired)
		br.resendChange(http.StatusAccepted)
		me := br.verifyChange(b.lastCode(t, "ada@new.example"), http.StatusOK)["data"].(map[string]any)
		if me["email"] != "ada@new.example" {
			t.Fatalf("after the change: %v", me)
		}
		if kinds := b.emails(t, "ada@example.com"); kinds[0] != payd.EmailChangeAlert {
			t.Fatalf("emails to the old address: %v", kinds)
		}
		br.verifyChange(code2, http.StatusBadRequest, payd.ErrVerificationExpired)
		newBrowser(t, b).signIn("ada@new.example", testPassword, http.StatusCreated)

		// Whoever made the change adds sign-in methods of their own: a
		// passkey, two-step.
		u, err := db.UserByEmail(t.Context(), "ada@new.example")
		if err != nil {
			t.Fatal(err)
		}
		now := b.clock.Now()
		u.TOTPSecret, u.TOTPEnabledAt, u.RecoveryCodes = "JBSWY3DPEHPK3PXP", &now, []string{"h"}
		if err := db.SaveUser(t.Context(), u); err != nil {
			t.Fatal(err)
		}
		planted := &payd.Passkey{ID: payd.NewID(payd.PrefixPasskey), UserID: u.ID, CredentialID: []byte("planted"),
			PublicKey: []byte{1}, Name: "planted", CreatedAt: now}
		if err := db.CreatePasskey(t.Context(), planted); err != nil {
			t.Fatal(err)
		}

		// The undo puts the old address back, disables the password, holds
		// resets for a day, ends every session, and takes the methods added
		// since the change started with it.
		undo := b.lastLink(t, "ada@example.com", payd.EmailChangeAlert)
		anon.undoChange("nope", http.StatusBadRequest, payd.ErrInvalidToken)
		done := anon.undoChange(undo, http.StatusOK)["data"].(map[string]any)
		if done["email"] != "ada@example.com" || done["status"] != "undone" {
			t.Fatalf("undo = %v", done)
		}
		anon.undoChange(undo, http.StatusBadRequest, payd.ErrInvalidToken)
		if u, err := db.UserByID(t.Context(), u.ID); err != nil || u.TwoFactor() {
			t.Fatalf("two-step turned on by the change's maker survives the undo: %v", err)
		}
		if pks, err := db.PasskeysByUser(t.Context(), u.ID); err != nil || len(pks) != 0 {
			t.Fatalf("passkeys after the undo: %d %v", len(pks), err)
		}
		br.call(request{method: "GET", path: "/me"}, http.StatusUnauthorized, payd.ErrUnauthenticated)
		anon.signIn("ada@example.com", testPassword, http.StatusForbidden, payd.ErrPasswordResetRequired)
		anon.askReset("ada@example.com", http.StatusAccepted)
		link := b.lastLink(t, "ada@example.com", payd.EmailPasswordReset)
		r = anon.confirmReset(link, nextPassword, http.StatusConflict, payd.ErrResetOnHold)
		if ra, _ := strconv.Atoi(r.header.Get("Retry-After")); ra <= 0 || ra > int(payd.ResetHold/time.Second) {
			t.Fatalf("reset_on_hold Retry-After %d", ra)
		}
		anon.checkReset(link, http.StatusConflict, payd.ErrResetOnHold)
		b.clock.Advance(payd.ResetHold)
		anon.askReset("ada@example.com", http.StatusAccepted)
		anon.confirmReset(b.lastLink(t, "ada@example.com", payd.EmailPasswordReset), nextPassword, http.StatusOK)
		br.signIn("ada@example.com", nextPassword, http.StatusCreated)

		// An undo link works 7 days.
		br.startChange("ada@third.example", nextPassword, http.StatusAccepted)
		br.verifyChange(b.lastCode(t, "ada@third.example"), http.StatusOK)
		b.clock.Advance(payd.UndoTTL)
		anon.undoChange(b.lastLink(t, "ada@example.com", payd.EmailChangeAlert), http.StatusBadRequest, payd.ErrInvalidToken)

		// At most 3 changes started an hour; a change can be finished a day.
		br.signIn("ada@third.example", nextPassword, http.StatusCreated) // 7 days ended the session
		for i := range payd.EmailChangesPerHour {
			br.startChange(fmt.Sprintf("ada%d@example.com", i), nextPassword, http.StatusAccepted)
		}
		r = br.do(request{method: "POST", path: "/me/email", body: fmt.Sprintf(`{"email":"ada9@example.com","current_password":%q}`, nextPassword)})
		if c, _ := r.errorCode(t); c != payd.ErrTooManyEmails || r.header.Get("Retry-After") == "" {
			t.Fatalf("4th change in an hour: %d %s", r.status, r.body)
		}
		// At most 5 codes per change.
		for range payd.CodesPerVerification - 1 {
			b.clock.Advance(time.Minute)
			br.resendChange(http.StatusAccepted)
		}
		b.clock.Advance(time.Minute)
		if r := br.resendChange(http.StatusTooManyRequests, payd.ErrTooManyEmails); !strings.Contains(string(r.body), "5 codes") {
			t.Fatalf("6th code: %s", r.body)
		}
		// No mail server: nothing that must email can start.
		off := setupWith(t, db, func(o *Options) { o.Mail = false })
		(&browser{t: t, b: off, jar: br.jar}).startChange("ada@fourth.example", nextPassword, http.StatusServiceUnavailable, payd.ErrEmailUnavailable)

		b.clock.Advance(payd.VerificationTTL)
		br.signIn("ada@third.example", nextPassword, http.StatusCreated)
		br.verifyChange(b.lastCode(t, "ada2@example.com"), http.StatusBadRequest, payd.ErrVerificationExpired)
	})
}

// TestEmailChangeAlerts holds the alert emails to 3 an hour per person
// (spec 8.3) and checks that an undo voids every other undo link.
func TestEmailChangeAlerts(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		br := newBrowser(t, b)
		br.signUp("a0@example.com")
		stepUp := func() {
			t.Helper()
			br.call(request{method: "POST", path: "/sessions/current/step-up", body: fmt.Sprintf(`{"password":%q}`, testPassword)}, http.StatusOK)
		}
		// A change started over an hour ago, finished now, then three more
		// started and finished within the hour: their alerts make four.
		br.startChange("a1@example.com", testPassword, http.StatusAccepted)
		b.clock.Advance(time.Hour + time.Minute)
		stepUp()
		br.resendChange(http.StatusAccepted)
		br.verifyChange(b.lastCode(t, "a1@example.com"), http.StatusOK)
		for i := 2; i <= 3; i++ {
			b.clock.Advance(time.Minute)
			br.startChange(fmt.Sprintf("a%d@example.com", i), testPassword, http.StatusAccepted)
			br.verifyChange(b.lastCode(t, fmt.Sprintf("a%d@example.com", i)), http.StatusOK)
		}
		b.clock.Advance(time.Minute)
		br.startChange("a4@example.com", testPassword, http.StatusAccepted)
		r := br.do(request{method: "POST", path: "/me/email/verify", body: fmt.Sprintf(`{"code":%q}`, b.lastCode(t, "a4@example.com"))})
		if c, _ := r.errorCode(t); c != payd.ErrTooManyEmails || r.header.Get("Retry-After") == "" {
			t.Fatalf("4th alert in an hour: %d %s", r.status, r.body)
		}
		// An hour after the first alert, the change can finish.
		b.clock.Advance(time.Hour - 2*time.Minute)
		br.resendChange(http.StatusAccepted)
		br.verifyChange(b.lastCode(t, "a4@example.com"), http.StatusOK)

		// An old address that has become another account's cannot come back.
		anon := newBrowser(t, b)
		newBrowser(t, b).signUp("a3@example.com")
		anon.undoChange(b.lastLink(t, "a3@example.com", payd.EmailChangeAlert), http.StatusConflict, payd.ErrEmailTaken)
		// Undoing one change voids the other changes' undo links.
		anon.undoChange(b.lastLink(t, "a2@example.com", payd.EmailChangeAlert), http.StatusOK)
		anon.undoChange(b.lastLink(t, "a3@example.com", payd.EmailChangeAlert), http.StatusBadRequest, payd.ErrInvalidToken)
		u, err := db.UserByEmail(t.Context(), "a2@example.com")
		if err != nil || !u.PasswordDisabled || u.ResetHoldUntil == nil {
			t.Fatalf("after the undo: %+v %v", u, err)
		}
	})
}
