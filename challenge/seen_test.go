package challenge

import (
	"strconv"
	"testing"
	"time"

	"payd/clock"
)

var t0 = time.Date(2031, 4, 5, 6, 7, 8, 0, time.UTC)

func TestSeenBounded(t *testing.T) {
	s := newSeen()
	clk := clock.NewFake(t0)
	for i := range seenMax + 10 {
		if !s.add(hashToken(strconv.Itoa(i)), clk.Now()) {
			t.Fatalf("add %d: not new", i)
		}
	}
	if n := s.size(); n != seenMax {
		t.Fatalf("size = %d, want the bound %d", n, seenMax)
	}
	if s.has(hashToken(strconv.Itoa(0)), clk.Now()) {
		t.Fatal("the oldest hash is still remembered past the bound")
	}
	if !s.has(hashToken(strconv.Itoa(seenMax+9)), clk.Now()) {
		t.Fatal("the newest hash is forgotten")
	}
}
