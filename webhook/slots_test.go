package webhook

import (
	"slices"
	"testing"
	"time"

	"payd"
)

// TestSlotsShares walks one endpoint from fast to slow and back: a fast
// endpoint takes its share from a fan-out and more from a claim (the soft
// bound), a slow one only 4 from either, and claims pass over it while it
// has them. Places in all come back only when results are saved.
func TestSlotsShares(t *testing.T) {
	s := newSlots(100, 3)
	for range 3 {
		if ok, _ := s.tryTake("a"); !ok {
			t.Fatal("a fast endpoint refused below its share")
		}
	}
	if ok, full := s.tryTake("a"); ok || full {
		t.Fatalf("a fan-out past the share: ok %v, full %v", ok, full)
	}
	if n, busy := s.room(); n != 3 || !slices.Equal(busy, []string{"a"}) {
		t.Fatalf("room %d, busy %v", n, busy)
	}
	if !s.takeClaimed("a") {
		t.Fatal("a claimed row of a fast endpoint was put off")
	}
	for range 4 {
		s.done("a", 6*time.Second) // timed out: slow from now on
	}
	if s.share("a") != slowShare || s.endpoint["a"] != 0 {
		t.Fatalf("share %d, in flight %d", s.share("a"), s.endpoint["a"])
	}
	for range slowShare {
		if !s.takeClaimed("a") {
			t.Fatal("a slow endpoint refused below its share")
		}
	}
	if s.takeClaimed("a") {
		t.Fatal("a claimed row past a slow endpoint's share was attempted")
	}
	if _, busy := s.room(); !slices.Equal(busy, []string{"a"}) {
		t.Fatalf("a slow endpoint at its share is not passed over: %v", busy)
	}
	s.more.Store(false)
	s.done("a", -1) // nothing sent: still slow
	if !s.more.Load() || s.share("a") != slowShare {
		t.Fatalf("freeing a slow endpoint's share: more %v, share %d", s.more.Load(), s.share("a"))
	}
	s.done("a", 2*time.Second)
	if s.share("a") != 3 {
		t.Fatal("an attempt of 2 s did not give the endpoint the usual share again")
	}
	s.done("a", time.Millisecond)
	if s.share("a") != quickFactor*3 {
		t.Fatalf("a quick endpoint's share is %d", s.share("a"))
	}
	if s.inFlight != 3+1+slowShare {
		t.Fatalf("%d places held before any save", s.inFlight)
	}
	s.release(s.inFlight)
	if n, _ := s.room(); n != 3 {
		t.Fatalf("room %d after every result was saved", n)
	}
}

// TestSlotsFull: with every place held, a fan-out reports it, and the
// first save wakes the claiming side.
func TestSlotsFull(t *testing.T) {
	s := newSlots(2, 5)
	s.tryTake("a")
	s.tryTake("b")
	if ok, full := s.tryTake("c"); ok || !full {
		t.Fatalf("ok %v, full %v", ok, full)
	}
	if n, _ := s.room(); n != 0 {
		t.Fatalf("room %d with every place held", n)
	}
	s.done("a", time.Millisecond)
	s.more.Store(false)
	s.release(1)
	if !s.more.Load() {
		t.Fatal("the first place given back did not ask for a claim")
	}
	if s.filled([]*payd.WebhookDelivery{{WebhookID: "b"}}) {
		t.Fatal("one attempt of five counts as a full share")
	}
}
