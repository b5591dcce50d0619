package api

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	otptotp "github.com/pquerna/otp/totp"

	"payd"
	"payd/store"
	"payd/store/storetest"
	"payd/totp"
)

// authCode is the authenticator app's code for secret at the service
// clock's time, computed by pquerna/otp rather than by payd's totp.
func (br *browser) authCode(secret string) string {
	br.t.Helper()
	code, err := otptotp.GenerateCode(secret, br.b.clock.Now())
	if err != nil {
		br.t.Fatal(err)
	}
	return code
}

// wrongCode is a 6-digit code that no step of the window accepts now.
func (br *browser) wrongCode(secret string) string {
	br.t.Helper()
	now := br.b.clock.Now()
	taken := map[string]bool{}
	for _, d := range []time.Duration{-totp.Period, 0, totp.Period} {
		c, _ := otptotp.GenerateCode(secret, now.Add(d))
		taken[c] = true
	}
	for i := 0; ; i++ {
		if c := fmt.Sprintf("%06d", i); !taken[c] {
			return c
		}
	}
}

// twoFactor posts action to /me/two-factor.
func (br *browser) twoFactor(body string, status int, code ...string) map[string]any {
	br.t.Helper()
	return br.call(request{method: "POST", path: "/me/two-factor", body: body}, status, code...)
}

// enableTwoFactor turns two-step sign-in on for br's person and returns
// the secret and the recovery codes.
func (br *browser) enableTwoFactor() (secret string, recovery []string) {
	br.t.Helper()
	setup := br.twoFactor(`{"action":"setup"}`, http.StatusOK)["data"].(map[string]any)
	secret = setup["secret"].(string)
	on := br.twoFactor(fmt.Sprintf(`{"action":"enable","code":%q}`, br.authCode(secret)), http.StatusOK)["data"].(map[string]any)
	for _, c := range on["recovery_codes"].([]any) {
		recovery = append(recovery, c.(string))
	}
	return secret, recovery
}

// signInTwoStep gives the password and expects the challenge; it returns its id.
func (br *browser) signInTwoStep(email string) string {
	br.t.Helper()
	ch := br.signIn(email, testPassword, http.StatusOK)["data"].(map[string]any)
	if ch["kind"] != "two_factor_challenge" || !strings.HasPrefix(ch["id"].(string), payd.PrefixTwoFactorChallenge) {
		br.t.Fatalf("sign-in with two-step on answered %v", ch)
	}
	if br.cookie(twoFactorCookie) == "" || br.cookie(sessionCookie) != "" {
		br.t.Fatal("the challenge did not set its cookie, or a session started")
	}
	return ch["id"].(string)
}

// finish posts the second step.
func (br *browser) finish(id, code string, status int, errCode ...string) map[string]any {
	br.t.Helper()
	return br.call(request{method: "POST", path: "/sessions/two-factor",
		body: fmt.Sprintf(`{"challenge_id":%q,"code":%q}`, id, code)}, status, errCode...)
}

func TestTwoFactorSetup(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		br := newBrowser(t, b)
		br.signUp("ada@example.com")
		st := br.call(request{method: "GET", path: "/me/two-factor"}, http.StatusOK)["data"].(map[string]any)
		if st["enabled"] != false || st["enabled_at"] != nil || st["recovery_codes_left"] != 0.0 {
			t.Fatalf("GET /me/two-factor while off = %v", st)
		}
		// The request's shape.
		br.twoFactor(`{"action":"on"}`, http.StatusBadRequest, payd.ErrInvalidRequest)
		br.twoFactor(`{"action":"setup","code":"123456"}`, http.StatusBadRequest, payd.ErrInvalidRequest)
		br.twoFactor(`{"action":"enable"}`, http.StatusBadRequest, payd.ErrInvalidRequest)
		// Off: nothing to enable without a setup, to disable or to renew.
		br.twoFactor(`{"action":"enable","code":"123456"}`, http.StatusConflict, payd.ErrTwoFactorSetupRequired)
		br.twoFactor(fmt.Sprintf(`{"action":"disable","current_password":%q,"code":"123456"}`, testPassword), http.StatusConflict, payd.ErrTwoFactorDisabled)
		br.twoFactor(`{"action":"recovery_codes","code":"123456"}`, http.StatusConflict, payd.ErrTwoFactorDisabled)

		setup := br.twoFactor(`{"action":"setup"}`, http.StatusOK)["data"].(map[string]any)
		secret := setup["secret"].(string)
		if !strings.Contains(setup["uri"].(string), "secret="+secret) || !strings.HasPrefix(setup["qr_png"].(string), "data:image/png;base64,") ||
			!strings.HasPrefix(setup["qr_svg"].(string), "<svg ") {
			t.Fatalf("setup = %v", setup)
		}
		// The setup belongs to this session: another one cannot confirm it.
		other := newBrowser(t, b)
		other.signIn("ada@example.com", testPassword, http.StatusCreated)
		other.twoFactor(fmt.Sprintf(`{"action":"enable","code":%q}`, other.authCode(secret)), http.StatusConflict, payd.ErrTwoFactorSetupRequired)
		br.twoFactor(fmt.Sprintf(`{"action":"enable","code":%q}`, br.wrongCode(secret)), http.StatusBadRequest, payd.ErrInvalidCode)
		// The QR code is good 10 minutes.
		b.clock.Advance(totp.SetupValidity)
		br.twoFactor(fmt.Sprintf(`{"action":"enable","code":%q}`, br.authCode(secret)), http.StatusConflict, payd.ErrTwoFactorSetupRequired)

		// After 15 minutes the session needs a new proof (spec 5.7).
		b.clock.Advance(6 * time.Minute)
		br.twoFactor(`{"action":"setup"}`, http.StatusForbidden, payd.ErrStepUpRequired)
		br.call(request{method: "POST", path: "/sessions/current/step-up", body: fmt.Sprintf(`{"password":%q}`, testPassword)}, http.StatusOK)
		secret, recovery := br.enableTwoFactor()
		if len(recovery) != totp.RecoveryCodes {
			t.Fatalf("%d recovery codes", len(recovery))
		}
		st = br.call(request{method: "GET", path: "/me/two-factor"}, http.StatusOK)["data"].(map[string]any)
		if st["enabled"] != true || st["enabled_at"] == nil || st["recovery_codes_left"] != 10.0 || st["recovery_codes"] != nil {
			t.Fatalf("GET /me/two-factor while on = %v", st)
		}
		if me := br.call(request{method: "GET", path: "/me"}, http.StatusOK)["data"].(map[string]any); me["two_factor"] != true {
			t.Fatalf("GET /me = %v", me)
		}
		br.twoFactor(`{"action":"setup"}`, http.StatusConflict, payd.ErrTwoFactorEnabled)
		br.twoFactor(fmt.Sprintf(`{"action":"enable","code":%q}`, br.authCode(secret)), http.StatusConflict, payd.ErrTwoFactorEnabled)
		// The database holds the recovery codes' hashes only.
		u, err := db.UserByEmail(t.Context(), "ada@example.com")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(strings.Join(u.RecoveryCodes, " "), strings.ReplaceAll(recovery[0], "-", "")) {
			t.Fatal("a recovery code is stored in plain text")
		}

		// A new set of recovery codes, for a code; the old set stops working.
		b.clock.Advance(totp.Period)
		fresh := br.twoFactor(fmt.Sprintf(`{"action":"recovery_codes","code":%q}`, br.authCode(secret)), http.StatusOK)["data"].(map[string]any)
		codes := fresh["recovery_codes"].([]any)
		if len(codes) != 10 || codes[0] == recovery[0] || fresh["recovery_codes_left"] != 10.0 {
			t.Fatalf("new recovery codes = %v", fresh)
		}
		// Turning it off takes the current password and a code.
		disable := func(password, code string, status int, errCode ...string) map[string]any {
			return br.twoFactor(fmt.Sprintf(`{"action":"disable","current_password":%q,"code":%q}`, password, code), status, errCode...)
		}
		br.twoFactor(fmt.Sprintf(`{"action":"disable","code":%q}`, recovery[1]), http.StatusBadRequest, payd.ErrInvalidRequest)
		br.twoFactor(fmt.Sprintf(`{"action":"enable","code":%q,"current_password":%q}`, recovery[1], testPassword), http.StatusBadRequest, payd.ErrInvalidRequest)
		disable("not the password", codes[0].(string), http.StatusBadRequest, payd.ErrInvalidCredentials)
		disable(testPassword, recovery[1], http.StatusBadRequest, payd.ErrInvalidCode)
		off := disable(testPassword, strings.ToUpper(codes[0].(string)), http.StatusOK)["data"].(map[string]any)
		if off["enabled"] != false || off["recovery_codes_left"] != 0.0 {
			t.Fatalf("after disable = %v", off)
		}
		disable(testPassword, br.authCode(secret), http.StatusConflict, payd.ErrTwoFactorDisabled)
		// Sign-in is back to the password alone.
		newBrowser(t, b).signIn("ada@example.com", testPassword, http.StatusCreated)
	})
}

func TestTwoFactorSignin(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		ada := newBrowser(t, b)
		ada.signUp("ada@example.com")
		secret, recovery := ada.enableTwoFactor()
		b.clock.Advance(totp.Period) // the setup's code is taken

		// A correct password answers a challenge, not a session.
		br := newBrowser(t, b)
		id := br.signInTwoStep("ada@example.com")
		br.call(request{method: "GET", path: "/me"}, http.StatusUnauthorized, payd.ErrUnauthenticated)
		// The database holds the cookie's token as its hash only.
		if c, err := db.TwoFactorChallenge(t.Context(), id); err != nil || c.TokenHash != payd.SecretHash(br.cookie(twoFactorCookie)) {
			t.Fatalf("stored challenge %+v, %v", c, err)
		}
		// The id alone is not enough: another browser lacks the cookie.
		newBrowser(t, b).finish(id, br.authCode(secret), http.StatusBadRequest, payd.ErrChallengeExpired)
		br.finish("tfa_unknown", br.authCode(secret), http.StatusBadRequest, payd.ErrChallengeExpired)
		br.finish("", br.authCode(secret), http.StatusBadRequest, payd.ErrInvalidRequest)
		br.finish(id, br.wrongCode(secret), http.StatusBadRequest, payd.ErrInvalidCode)
		br.finish(id, "not a code", http.StatusBadRequest, payd.ErrInvalidCode)
		code := br.authCode(secret)
		ses := br.finish(id, code, http.StatusCreated)["data"].(map[string]any)
		if ses["method"] != "two_factor" || ses["user"].(map[string]any)["email"] != "ada@example.com" {
			t.Fatalf("two-step sign-in = %v", ses)
		}
		if br.cookie(twoFactorCookie) != "" {
			t.Fatal("the challenge's cookie outlived the sign-in")
		}
		br.call(request{method: "GET", path: "/me"}, http.StatusOK)
		// A challenge is good once.
		br.finish(id, code, http.StatusBadRequest, payd.ErrChallengeExpired)

		// A code is never taken twice, even on another challenge.
		again := newBrowser(t, b)
		id2 := again.signInTwoStep("ada@example.com")
		r := again.do(request{method: "POST", path: "/sessions/two-factor", body: fmt.Sprintf(`{"challenge_id":%q,"code":%q}`, id2, code)})
		if c, _ := r.errorCode(t); c != payd.ErrInvalidCode || !strings.Contains(string(r.body), "used already") {
			t.Fatalf("a replayed code: %d %s", r.status, r.body)
		}
		b.clock.Advance(totp.Period)
		again.finish(id2, again.authCode(secret), http.StatusCreated)

		// Two sign-ins racing with one code: one wins.
		b.clock.Advance(totp.Period)
		racers := []*browser{newBrowser(t, b), newBrowser(t, b)}
		ids := []string{racers[0].signInTwoStep("ada@example.com"), racers[1].signInTwoStep("ada@example.com")}
		code = br.authCode(secret)
		statuses := make([]int, len(racers))
		var wg sync.WaitGroup
		for i, rb := range racers {
			wg.Go(func() {
				statuses[i] = rb.do(request{method: "POST", path: "/sessions/two-factor",
					body: fmt.Sprintf(`{"challenge_id":%q,"code":%q}`, ids[i], code)}).status
			})
		}
		wg.Wait()
		slices.Sort(statuses)
		if statuses[0] != http.StatusCreated || statuses[1] != http.StatusBadRequest {
			t.Fatalf("racing sign-ins with one code answered %v", statuses)
		}

		// A recovery code, typed loosely, works once.
		rc := newBrowser(t, b)
		rc.finish(rc.signInTwoStep("ada@example.com"), " "+strings.ToUpper(recovery[0])+" ", http.StatusCreated)
		st := rc.call(request{method: "GET", path: "/me/two-factor"}, http.StatusOK)["data"].(map[string]any)
		if st["recovery_codes_left"] != 9.0 {
			t.Fatalf("after a recovery code: %v", st)
		}
		rc2 := newBrowser(t, b)
		rc2.finish(rc2.signInTwoStep("ada@example.com"), recovery[0], http.StatusBadRequest, payd.ErrInvalidCode)

		// A challenge times out after 5 minutes.
		late := newBrowser(t, b)
		id3 := late.signInTwoStep("ada@example.com")
		b.clock.Advance(payd.TwoFactorChallengeTTL)
		late.finish(id3, late.authCode(secret), http.StatusBadRequest, payd.ErrChallengeExpired)

		// A password changed since the challenge voids it.
		pw := newBrowser(t, b)
		id4 := pw.signInTwoStep("ada@example.com")
		ada.call(request{method: "POST", path: "/me/password",
			body: fmt.Sprintf(`{"current_password":%q,"password":"a brand new passphrase"}`, testPassword)}, http.StatusOK)
		pw.finish(id4, pw.authCode(secret), http.StatusBadRequest, payd.ErrChallengeExpired)
	})
}

func TestTwoFactorLock(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		ada := newBrowser(t, b)
		ada.signUp("ada@example.com")
		secret, recovery := ada.enableTwoFactor()
		b.clock.Advance(totp.Period)

		// 5 wrong codes across challenges and /me/two-factor lock codes
		// for 15 minutes, whatever the challenge or the session.
		br := newBrowser(t, b)
		id := br.signInTwoStep("ada@example.com")
		for range 3 {
			br.finish(id, br.wrongCode(secret), http.StatusBadRequest, payd.ErrInvalidCode)
		}
		ada.twoFactor(fmt.Sprintf(`{"action":"recovery_codes","code":%q}`, ada.wrongCode(secret)), http.StatusBadRequest, payd.ErrInvalidCode)
		other := newBrowser(t, b)
		other.finish(other.signInTwoStep("ada@example.com"), "aaaaa-bbbbb", http.StatusBadRequest, payd.ErrInvalidCode)
		r := br.do(request{method: "POST", path: "/sessions/two-factor", body: fmt.Sprintf(`{"challenge_id":%q,"code":%q}`, id, br.authCode(secret))})
		if c, _ := r.errorCode(t); c != payd.ErrTooManyAttempts || r.header.Get("Retry-After") != "900" {
			t.Fatalf("6th code: %d %s Retry-After %q", r.status, r.body, r.header.Get("Retry-After"))
		}
		ada.twoFactor(fmt.Sprintf(`{"action":"recovery_codes","code":%q}`, recovery[0]), http.StatusTooManyRequests, payd.ErrTooManyAttempts)
		// A new sign-in does not lift the lock.
		fresh := newBrowser(t, b)
		fid := fresh.signInTwoStep("ada@example.com")
		fresh.finish(fid, fresh.authCode(secret), http.StatusTooManyRequests, payd.ErrTooManyAttempts)
		b.clock.Advance(4 * time.Minute)
		fresh.finish(fid, fresh.authCode(secret), http.StatusTooManyRequests, payd.ErrTooManyAttempts)
		// After 15 minutes codes work again, and a success clears the count.
		b.clock.Advance(11 * time.Minute)
		fresh.finish(fresh.signInTwoStep("ada@example.com"), fresh.authCode(secret), http.StatusCreated)
		b.clock.Advance(totp.Period)
		last := newBrowser(t, b)
		lid := last.signInTwoStep("ada@example.com")
		for range 4 {
			last.finish(lid, last.wrongCode(secret), http.StatusBadRequest, payd.ErrInvalidCode)
		}
		last.finish(lid, last.authCode(secret), http.StatusCreated)
	})
}
