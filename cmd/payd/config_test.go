package main

import (
	"testing"

	"payd/money"
)

// TestConfirmationsFlag parses --confirmations and refuses what is not
// NETWORK=COUNT with a count of 1 to 1,000.
func TestConfirmationsFlag(t *testing.T) {
	c := Config{Confirmations: " bitcoin=3, polygon=64 ,"}
	got, err := c.confirmations()
	if err != nil || len(got) != 2 || got[money.Bitcoin] != 3 || got[money.Polygon] != 64 {
		t.Fatalf("confirmations = %v, %v", got, err)
	}
	for _, bad := range []string{"bitcoin", "bitcoin=0", "bitcoin=1001", "doge=3", "bitcoin=x", "=3"} {
		c := Config{Confirmations: bad}
		if _, err := c.confirmations(); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}
