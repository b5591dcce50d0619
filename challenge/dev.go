package challenge

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"time"

	"payd"
	"payd/clock"
)

// DevTokenTTL is how long a dev token stays good: long enough for a test
// to fetch one and submit a form, short enough that the table stays small.
const DevTokenTTL = 10 * time.Minute

// devPrefix marks a dev token, so one pasted into a production form is
// recognisable in a bug report.
const devPrefix = "devchal_"

// Dev is the challenger of --dev: it issues its own tokens
// (POST /devnet/challenges), each good once, for one form, for
// DevTokenTTL of the service clock. The tokens live hashed in the
// database, so any replica can spend a token another issued, and spending
// is one atomic take: of two concurrent uses, one wins.
type Dev struct {
	st  payd.ChallengeTokenStore
	clk clock.Clock
}

// NewDev returns the dev challenger over st, on the service clock (the
// fake one under --dev, so POST /devnet/clock expires tokens).
func NewDev(st payd.ChallengeTokenStore, clk clock.Clock) *Dev { return &Dev{st: st, clk: clk} }

var _ payd.Challenger = (*Dev)(nil)

// Issue returns a new token good once for form. It also sweeps the tokens
// that have expired, so the table holds at most the last DevTokenTTL's.
func (d *Dev) Issue(ctx context.Context, form payd.ChallengeForm) (token string, err error) {
	defer payd.Wrap(&err, "challenge.Dev.Issue(%s)", form)
	if _, err := payd.ParseChallengeForm(string(form)); err != nil {
		return "", err
	}
	now := d.clk.Now()
	if _, err := d.st.DeleteExpiredChallengeTokens(ctx, now); err != nil {
		return "", err
	}
	var b [32]byte
	rand.Read(b[:])
	token = devPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	t := &payd.ChallengeToken{Hash: devHash(token), Form: form, CreatedAt: now, ExpiresAt: now.Add(DevTokenTTL)}
	if err := d.st.CreateChallengeToken(ctx, t); err != nil {
		return "", err
	}
	return token, nil
}

// Verify spends token for form (payd.Challenger): challenge_failed when it
// is missing, never issued, already spent, expired or for another form. A
// token tried on the wrong form is spent all the same.
func (d *Dev) Verify(ctx context.Context, form payd.ChallengeForm, token, _ string) (err error) {
	defer payd.Wrap(&err, "challenge.Dev.Verify(%s)", form)
	if token == "" {
		return payd.ChallengeFailed()
	}
	t, err := d.st.TakeChallengeToken(ctx, devHash(token))
	if payd.IsNotFound(err) {
		return payd.ChallengeFailed()
	}
	if err != nil {
		return err
	}
	return t.Check(form, d.clk.Now())
}

// devHash is what the table stores for a token: hex SHA-256. The tokens
// are 256 random bits, so a plain hash is enough; no salt or slow hash.
func devHash(token string) string {
	h := hashToken(token)
	return hex.EncodeToString(h[:])
}
