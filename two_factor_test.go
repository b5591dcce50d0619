package payd

import (
	"testing"
	"time"
)

func TestTwoFactorChallengeCheck(t *testing.T) {
	now := time.Date(2031, 4, 5, 6, 7, 8, 0, time.UTC)
	on := func() *User {
		return &User{ID: "usr_ada", PasswordHash: "$argon2id$old", TOTPSecret: "JBSWY3DPEHPK3PXP"}
	}
	token, c := NewTwoFactorChallenge(on(), now)
	if !c.ExpiresAt.Equal(now.Add(5*time.Minute)) || c.TokenHash == token || c.PasswordHash == on().PasswordHash {
		t.Fatalf("new challenge %+v", c)
	}
	for _, tc := range []struct {
		name  string
		token string
		user  func(u *User)
		at    time.Duration
		ok    bool
	}{
		{name: "ok", token: token, at: TwoFactorChallengeTTL - time.Second, ok: true},
		{name: "timed out", token: token, at: TwoFactorChallengeTTL},
		{name: "another browser", token: "", at: time.Second},
		{name: "a wrong token", token: token + "x", at: time.Second},
		{name: "another user", token: token, user: func(u *User) { u.ID = "usr_bob" }},
		{name: "turned off since", token: token, user: func(u *User) { u.TOTPSecret = "" }},
		{name: "password disabled since", token: token, user: func(u *User) { u.PasswordDisabled = true }},
		{name: "password changed since", token: token, user: func(u *User) { u.PasswordHash = "$argon2id$new" }},
	} {
		u := on()
		if tc.user != nil {
			tc.user(u)
		}
		err := c.Check(tc.token, u, now.Add(tc.at))
		if tc.ok != (err == nil) || err != nil && ErrorCode(err) != ErrChallengeExpired {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
