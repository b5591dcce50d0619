package chain

import (
	"context"
	"errors"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"payd/money"
)

// TestFeeCents prices fees exactly, rounding up, in each network's base
// unit, and refuses a result past int64.
func TestFeeCents(t *testing.T) {
	for _, c := range []struct {
		units    string
		decimals int
		price    int64
		want     int64
	}{
		{"14100", 8, 6_400_000, 903},           // 141 vB at 100 sat/vB, BTC at $64,000: 902.4 → 903
		{"105000000000000", 18, 320_000, 34},   // 21,000 gas at 5 gwei, ETH at $3,200: 33.6 → 34
		{"13345000", 6, 12, 161},               // 13.345 TRX at 12 ¢: 160.14 → 161
		{"205000", 9, 15_000, 4},               // 205,000 lamports, SOL at $150: 3.075 → 4
		{"100000000", 8, 6_400_000, 6_400_000}, // exactly one BTC: no rounding
		{"0", 18, 320_000, 0},                  // nothing costs nothing
		{"1", 18, 1, 1},                        // the least wei is still a cent
	} {
		u, _ := new(big.Int).SetString(c.units, 10)
		if got, ok := FeeCents(u, c.decimals, c.price); !ok || got != c.want {
			t.Errorf("FeeCents(%s, %d, %d) = %d, %v; want %d", c.units, c.decimals, c.price, got, ok, c.want)
		}
	}
	huge := new(big.Int).Lsh(big.NewInt(1), 200)
	if _, ok := FeeCents(huge, 18, 320_000); ok {
		t.Error("a fee past int64 was priced")
	}
}

// TestReading keeps a value for its ttl on the service clock, never
// across a clock set back, and hands back the last one when stale.
func TestReading(t *testing.T) {
	var r Reading[int64]
	t0 := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	if v, fresh := r.Get(t0, time.Minute); fresh || v != 0 {
		t.Fatalf("an empty reading = %d, %v", v, fresh)
	}
	r.Set(42, t0)
	for _, c := range []struct {
		at    time.Duration
		fresh bool
	}{{0, true}, {59 * time.Second, true}, {time.Minute, false}, {-time.Second, false}} {
		if v, fresh := r.Get(t0.Add(c.at), time.Minute); fresh != c.fresh || v != 42 {
			t.Errorf("Get at %s = %d, %v; want 42, %v", c.at, v, fresh, c.fresh)
		}
	}
}

// TestUpstreamWords: an error about a node never repeats its URL (whose
// path or query may hold a key), and repeats at most MaxMessage bytes of
// what the node said; no redirect is followed.
func TestUpstreamWords(t *testing.T) {
	secret := &url.Error{Op: "Post", URL: "https://rpc.example/?api-key=SECRET", Err: errors.New("connection refused")}
	if got := TransportError(secret); got != "connection refused" {
		t.Errorf("TransportError = %q", got)
	}
	if got := TransportError(&url.Error{Op: "Post", URL: "https://KEY@x", Err: context.DeadlineExceeded}); got != "timed out" {
		t.Errorf("TransportError of a deadline = %q", got)
	}
	if got := Clip(strings.Repeat("x", 500)); len(got) != MaxMessage+len("…") {
		t.Errorf("Clip kept %d bytes", len(got))
	}
	req, _ := http.NewRequest("POST", "https://elsewhere.example/path?key=SECRET", nil)
	err := RefuseRedirects(money.Tron)(req, nil)
	if err == nil || strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), "--chain tron") {
		t.Errorf("RefuseRedirects = %v", err)
	}
}

// TestNodeURL refuses what no adapter can reach, never repeating the URL,
// and NodeClient copies the caller's client and follows no redirect.
func TestNodeURL(t *testing.T) {
	for _, raw := range []string{"://KEY@x", "https:///path?key=KEY", "ws://KEY@host:1", "ftp://host/KEY"} {
		if _, err := NodeURL(money.Solana, raw); err == nil || strings.Contains(err.Error(), "KEY") {
			t.Errorf("NodeURL(%q) = %v", raw, err)
		}
	}
	if u, err := NodeURL(money.Tron, "https://KEY@api.example/v1?x=1"); err != nil || u.Host != "api.example" {
		t.Errorf("NodeURL of a good URL = %v, %v", u, err)
	}
	mine := &http.Client{Timeout: time.Second}
	c := NodeClient(money.Tron, mine, time.Minute)
	if c == mine || mine.CheckRedirect != nil || c.CheckRedirect == nil || c.Timeout != time.Second {
		t.Errorf("NodeClient changed or kept the caller's client: %+v", c)
	}
	if c := NodeClient(money.Tron, nil, time.Minute); c.Timeout != time.Minute || c.CheckRedirect == nil {
		t.Errorf("NodeClient without a client: %+v", c)
	}
}
