package password

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/clock"
)

// testParams keep the tests fast, under -race too; the code path is the
// same as Current's.
var testParams = Params{Memory: 1 << 10, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}

func TestHashVerify(t *testing.T) {
	ctx := context.Background()
	h := NewHasher(Config{Params: testParams})
	enc, err := h.Hash(ctx, "violet-tram-lantern")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(enc, "$argon2id$v=19$m=1024,t=1,p=1$") {
		t.Fatalf("Hash = %s", enc)
	}
	if again, _ := h.Hash(ctx, "violet-tram-lantern"); again == enc {
		t.Fatal("two hashes of one password are equal: the salt is not random")
	}
	for pw, want := range map[string]bool{"violet-tram-lantern": true, "violet-tram-lanterN": false, "": false} {
		ok, rehash, err := h.Verify(ctx, pw, enc)
		if ok != want || rehash || err != nil {
			t.Errorf("Verify(%q) = %v, %v, %v; want %v, false, nil", pw, ok, rehash, err, want)
		}
	}
}

func TestVerifyTooLong(t *testing.T) {
	ctx := context.Background()
	h := NewHasher(Config{Params: testParams})
	enc, _ := h.Hash(ctx, "")
	if ok, _, err := h.Verify(ctx, strings.Repeat("x", maxInput+1), enc); ok || err != nil {
		t.Errorf("Verify(too long) = %v, %v; want false, nil", ok, err)
	}
}

func TestNewHasherRefusesBadParams(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("NewHasher accepted m beyond MaxMemory")
		}
	}()
	NewHasher(Config{Params: Params{Memory: MaxMemory + 1, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}})
}

func TestVerifyRehash(t *testing.T) {
	ctx := context.Background()
	old := NewHasher(Config{Params: testParams})
	enc, _ := old.Hash(ctx, "violet-tram-lantern")
	newer := testParams
	newer.Time = 2
	h := NewHasher(Config{Params: newer})
	if ok, rehash, err := h.Verify(ctx, "violet-tram-lantern", enc); !ok || !rehash || err != nil {
		t.Errorf("Verify(old hash) = %v, %v, %v; want true, true, nil", ok, rehash, err)
	}
	if ok, rehash, err := h.Verify(ctx, "wrong-tram-lantern", enc); ok || rehash || err != nil {
		t.Errorf("Verify(old hash, wrong) = %v, %v, %v; want false, false, nil", ok, rehash, err)
	}
}

func TestVerifyNormalizes(t *testing.T) {
	ctx := context.Background()
	h := NewHasher(Config{Params: testParams})
	enc, _ := h.Hash(ctx, "caf\u00e9-tram-ｌａｎｔｅｒｎ") // precomposed é, full-width letters
	if ok, _, err := h.Verify(ctx, "cafe\u0301-tram-lantern", enc); !ok || err != nil {
		t.Errorf("Verify(decomposed, ASCII) = %v, %v; want a match", ok, err)
	}
}

func TestVerifyMalformed(t *testing.T) {
	h := NewHasher(Config{Params: testParams})
	_, _, err := h.Verify(context.Background(), "x", "$argon2id$v=19$m=4194304,t=1,p=1$AAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAA")
	if !errors.Is(err, ErrMalformed) {
		t.Fatalf("Verify(huge m) = %v, want ErrMalformed", err)
	}
}

// fill takes the whole semaphore, as hashes in flight would.
func fill(t *testing.T, h *Hasher) {
	t.Helper()
	if !h.sem.TryAcquire(h.size) {
		t.Fatal("semaphore not free")
	}
	t.Cleanup(func() { h.sem.Release(h.size) })
}

// TestBusy checks that a hash waits at most MaxWait on the service clock
// for room, then answers ErrBusy (503 with Retry-After).
func TestBusy(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	h := NewHasher(Config{Params: testParams, MaxConcurrent: 1, Clock: clk})
	fill(t, h)
	done := make(chan error, 1)
	go func() {
		_, _, err := h.Verify(context.Background(), "x", Encode(testParams, make([]byte, 16), make([]byte, 32)))
		done <- err
	}()
	for {
		select {
		case err := <-done:
			if err != ErrBusy {
				t.Fatalf("Verify on a full semaphore = %v, want ErrBusy", err)
			}
			return
		default:
			clk.Advance(DefaultMaxWait)
			waitBriefly()
		}
	}
}

// TestHashWait checks the wait a request sets (payd.WithHashWait): a
// request with no time left answers ErrBusy at once on a full semaphore,
// without waiting for MaxWait; one with some waits that long on the
// service clock, not MaxWait; room is still taken when there is some.
func TestHashWait(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	h := NewHasher(Config{Params: testParams, MaxConcurrent: 1, Clock: clk})
	if err := h.VerifyNone(payd.WithHashWait(context.Background(), -time.Second)); err != nil {
		t.Fatalf("with room and no time left: %v, want the hash done", err)
	}
	fill(t, h)
	for _, d := range []time.Duration{0, -time.Second} {
		if err := h.VerifyNone(payd.WithHashWait(context.Background(), d)); err != ErrBusy {
			t.Fatalf("full, wait %v: %v, want ErrBusy at once", d, err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- h.VerifyNone(payd.WithHashWait(context.Background(), 100*time.Millisecond)) }()
	var advanced time.Duration
	for {
		select {
		case err := <-done:
			if err != ErrBusy || advanced >= DefaultMaxWait {
				t.Fatalf("full, wait 100 ms: %v after %v of the service clock, want ErrBusy well before %v", err, advanced, DefaultMaxWait)
			}
			return
		default:
			clk.Advance(50 * time.Millisecond)
			advanced += 50 * time.Millisecond
			waitBriefly()
		}
	}
}

func TestWaitRespectsContext(t *testing.T) {
	h := NewHasher(Config{Params: testParams, MaxConcurrent: 1})
	fill(t, h)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.VerifyNone(ctx) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("VerifyNone after cancel = %v, want context.Canceled", err)
	}
}

// TestSemaphoreSize checks the sizing: memory budget and concurrency, the
// smaller wins, never below one hash.
func TestSemaphoreSize(t *testing.T) {
	tests := []struct {
		budget uint64
		n      int
		want   int64 // KiB
	}{
		{0, 4, 4 * int64(Current.Memory)},
		{0, 100, 256 << 10},
		{64 << 20, 100, 64 << 10},
		{1 << 20, 1, int64(Current.Memory)},
	}
	for _, tt := range tests {
		if got := NewHasher(Config{MemoryBudget: tt.budget, MaxConcurrent: tt.n}).size; got != tt.want {
			t.Errorf("budget %d, %d at once: size %d KiB, want %d", tt.budget, tt.n, got, tt.want)
		}
	}
}

// TestVerifyNoneTiming compares VerifyNone with a wrong password against a
// stored hash at the same parameters: the medians must be close, so an
// unknown email cannot be told from a wrong password by time. With
// PAYD_BENCH_PASSWORDS=1 it runs at Current.
func TestVerifyNoneTiming(t *testing.T) {
	ctx := context.Background()
	p := Params{Memory: 4 << 10, Time: 2, Threads: 1, SaltLen: 16, KeyLen: 32}
	if os.Getenv("PAYD_BENCH_PASSWORDS") == "1" {
		p = Current
	}
	h := NewHasher(Config{Params: p})
	enc, _ := h.Hash(ctx, "violet-tram-lantern")
	// The two are measured in turn, so load from elsewhere on the machine
	// falls on both alike.
	var wrong, none []time.Duration
	timed := func(f func()) time.Duration {
		start := clock.Real{}.Now()
		f()
		return clock.Real{}.Now().Sub(start)
	}
	for range 41 {
		wrong = append(wrong, timed(func() { h.Verify(ctx, "wrong-tram-lantern", enc) }))
		none = append(none, timed(func() { h.VerifyNone(ctx) }))
	}
	median := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	wrongM, noneM := median(wrong), median(none)
	t.Logf("median wrong password %v, no account %v", wrongM, noneM)
	if diff := (wrongM - noneM).Abs(); diff > wrongM/4 {
		t.Errorf("medians differ by %v (wrong %v, none %v)", diff, wrongM, noneM)
	}
}
