package hd

import (
	"testing"

	"payd/money"
)

// TestKeyCache checks that a cached key derives what a freshly parsed one
// does, that a key is kept per network (an xpub is no solana key), that
// refusals are not kept, and that a full cache starts over.
func TestKeyCache(t *testing.T) {
	t.Parallel()
	c := NewKeyCache(2)
	for range 2 {
		k, err := c.Parse(money.Ethereum, ethXpub)
		if err != nil {
			t.Fatal(err)
		}
		if addr, _ := k.Address(0); addr != mustAddress(t, mustParse(t, money.Ethereum, ethXpub), 0) {
			t.Fatalf("cached key's address 0 = %s", addr)
		}
	}
	if _, err := c.Parse(money.Solana, ethXpub); ReasonOf(err) == "" {
		t.Fatalf("an xpub parsed for solana: %v; want a refusal", err)
	}
	if len(c.keys) != 1 {
		t.Fatalf("%d keys cached, want 1 (refusals are not kept)", len(c.keys))
	}
	for _, key := range []string{tronXpub, ethXpub} {
		if _, err := c.Parse(money.Tron, key); err != nil {
			t.Fatal(err)
		}
	}
	if len(c.keys) != 1 {
		t.Fatalf("%d keys cached after the third, want 1 (a full cache starts over)", len(c.keys))
	}
}

func mustAddress(t *testing.T, k AccountKey, i uint32) string {
	t.Helper()
	a, err := k.Address(i)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
