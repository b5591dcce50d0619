package solana

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"payd"
	"payd/clock"
	"payd/money"
)

// usdcMint is the USDC mint on mainnet-beta.
const usdcMint = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"

// decodeTx decodes a getTransaction result.
func decodeTx(t *testing.T, s string) *txInfo {
	t.Helper()
	var tx transaction
	if err := json.Unmarshal([]byte(s), &tx); err != nil {
		t.Fatal(err)
	}
	return tx.info()
}

// TestTransferIndexes: one transaction paying two wallets gives each
// transfer the credited account's index, so their (TxHash, Index) keys
// differ.
func TestTransferIndexes(t *testing.T) {
	in := decodeTx(t, `{"slot":5,"transaction":{"message":{"accountKeys":["PAYER","OWNA","OWNB","REFA","REFB","11111111111111111111111111111111"]}},
	"meta":{"err":null,"preBalances":[100,0,0,0,0,1],"postBalances":[70,10,20,0,0,1],"preTokenBalances":[],"postTokenBalances":[]}}`)
	a := in.transfers("SIG", "OWNA", map[string]bool{"REFA": true}, nil)
	b := in.transfers("SIG", "OWNB", map[string]bool{"REFB": true}, nil)
	if len(a) != 1 || len(b) != 1 || a[0].Index != 1 || b[0].Index != 2 || a[0].Key() == b[0].Key() {
		t.Errorf("two payees of one transaction: %+v %+v", a, b)
	}
}

// TestOnlyTheATA: a token account the wallet owns that is not its
// associated token account of the mint is not a deposit; the ATA is,
// with its account index.
func TestOnlyTheATA(t *testing.T) {
	const owner = "3h1zGmCwsRJnVk5BuRNMLsPaQu1y2aqXqXDWYCgrp5UG"
	ata, err := AssociatedTokenAccount(owner, usdcMint)
	if err != nil {
		t.Fatal(err)
	}
	atas := map[string]tokenAccount{ata: {mint: usdcMint, asset: money.USDC}}
	tx := func(recipient string) *txInfo {
		return decodeTx(t, `{"slot":5,"transaction":{"message":{"accountKeys":["PAYER","PAYERATA","`+recipient+`","REF"]}},
	"meta":{"err":null,"preBalances":[1,1,1,1],"postBalances":[1,1,1,1],
	"preTokenBalances":[{"accountIndex":1,"mint":"`+usdcMint+`","owner":"PAYER","uiTokenAmount":{"amount":"100000000"}}],
	"postTokenBalances":[{"accountIndex":1,"mint":"`+usdcMint+`","owner":"PAYER","uiTokenAmount":{"amount":"75000000"}},
	{"accountIndex":2,"mint":"`+usdcMint+`","owner":"`+owner+`","uiTokenAmount":{"amount":"25000000"}}]}}`)
	}
	refs := map[string]bool{"REF": true}
	if ts := tx("RANDOMACCOUNT").transfers("SIG", owner, refs, atas); len(ts) != 0 {
		t.Errorf("a token account of the wallet that is not its ATA counted: %+v", ts)
	}
	ts := tx(ata).transfers("SIG", owner, refs, atas)
	if len(ts) != 1 || ts[0].Index != 2 || ts[0].Amount.Asset != money.USDC || ts[0].Amount.Units.Int64() != 25_000_000 {
		t.Errorf("the ATA: %+v", ts)
	}
}

// TestReferenceRule: with two watched references in one transaction the
// one at the lower account index is credited, whichever order the set is
// read in; reference says there were more.
func TestReferenceRule(t *testing.T) {
	in := decodeTx(t, `{"slot":5,"transaction":{"message":{"accountKeys":["PAYER","OWN","REF2","REF1"]}},
	"meta":{"err":null,"preBalances":[100,0,0,0],"postBalances":[70,30,0,0],"preTokenBalances":[],"postTokenBalances":[]}}`)
	for range 20 {
		ts := in.transfers("SIG", "OWN", map[string]bool{"REF1": true, "REF2": true}, nil)
		if len(ts) != 1 || ts[0].Reference != "REF2" {
			t.Fatalf("both watched: %+v", ts)
		}
	}
	if ref, many := in.reference(map[string]bool{"REF1": true, "REF2": true}); ref != "REF2" || !many {
		t.Errorf("reference = %s, %v", ref, many)
	}
}

// TestRetryAfter reads seconds and HTTP-dates, and bounds both.
func TestRetryAfter(t *testing.T) {
	now := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	for h, want := range map[string]time.Duration{
		"7": 7 * time.Second, "": defaultRetryAfter, "x": defaultRetryAfter, "-1": defaultRetryAfter,
		"99999": maxRetryAfter,
		now.Add(12 * time.Second).Format(http.TimeFormat): 12 * time.Second,
		now.Add(-time.Hour).Format(http.TimeFormat):       0,
		now.Add(time.Hour).Format(http.TimeFormat):        maxRetryAfter,
	} {
		if got := retryAfter(h, now); got != want {
			t.Errorf("retryAfter(%q) = %s, want %s", h, got, want)
		}
	}
}

// TestRateLimitErrors: a provider's rate-limit error inside a 200 is
// throttled (NotYet) like a 429, any other error is not.
func TestRateLimitErrors(t *testing.T) {
	for e, want := range map[rpcError]bool{
		{Code: -32005, Message: "Node is behind"}:                         true,
		{Code: -32000, Message: "Your app has exceeded its rate limit"}:   true,
		{Code: 429, Message: "Too many requests for a specific RPC call"}: true,
		{Code: -32602, Message: "Invalid params"}:                         false,
	} {
		if got := rateLimit(&e); got != want {
			t.Errorf("rateLimit(%+v) = %v", e, got)
		}
	}
	clk := clock.NewFake(time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC))
	c, err := newClient("http://node.example", nil, clk, 10)
	if err != nil {
		t.Fatal(err)
	}
	err = c.decode(rpcCall{method: "getSlot"}, response{Error: &rpcError{Code: -32005, Message: "limit"}})
	var ny interface{ NotYet() bool }
	if payd.ErrorCode(err) != payd.ErrUpstreamUnavailable || !errors.As(err, &ny) || !ny.NotYet() {
		t.Errorf("a -32005 answer: %v", err)
	}
	// No call is made until the limit has passed.
	if err := c.wait(context.Background(), c.limit, "getSlot", 1); !errors.As(err, &ny) {
		t.Errorf("a call within the limit: %v", err)
	}
	clk.Advance(defaultRetryAfter)
	if err := c.wait(context.Background(), c.limit, "getSlot", 1); err != nil {
		t.Errorf("a call after the limit: %v", err)
	}
}

// TestLimiterGivesBack: a wait whose context ends gives its calls back,
// so the calls after it do not wait for calls never made.
func TestLimiterGivesBack(t *testing.T) {
	clk := clock.NewFake(time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC))
	l := newLimiter(clk, 10)
	if err := l.wait(context.Background(), 10); err != nil {
		t.Fatal(err)
	}
	before := l.at
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.wait(ctx, 100); err == nil {
		t.Fatal("a wait past its context went through")
	}
	if !l.at.Equal(before) {
		t.Errorf("the bucket is %s further on after a canceled wait", l.at.Sub(before))
	}
}

// FuzzRetryAfter: any header reads as a wait between 0 and maxRetryAfter.
func FuzzRetryAfter(f *testing.F) {
	now := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, s := range []string{"7", "", "-1", "99999999999999999999", "Thu, 02 Jan 2031 03:04:17 GMT", " 3 ", "1.5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		if d := retryAfter(h, now); d < 0 || d > maxRetryAfter {
			t.Errorf("retryAfter(%q) = %s", h, d)
		}
	})
}
