package storetest

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"payd"
)

// devnetLog is the devnet's operation log (chain/devnet.Log), which the
// store keeps beside payd.Store.
type devnetLog interface {
	AppendDevnetOp(ctx context.Context, op []byte) error
	DevnetOps(ctx context.Context) ([][]byte, error)
}

// asDevnetLog returns st's devnet log; every payd store keeps one.
func asDevnetLog(t *testing.T, st payd.Store) devnetLog {
	t.Helper()
	lg, ok := st.(devnetLog)
	if !ok {
		t.Fatalf("%T does not keep the devnet log", st)
	}
	return lg
}

func testDevnet(t *testing.T, b *bundle) {
	t.Run("AppendInOrder", func(t *testing.T) {
		ctx, st := b.setup(t)
		lg := asDevnetLog(t, st)
		got, err := lg.DevnetOps(ctx)
		must(t, err)
		if len(got) != 0 {
			t.Fatalf("a new store holds %d devnet ops", len(got))
		}
		want := [][]byte{
			[]byte(`{"v":1,"op":"mine","network":"bitcoin","count":1}`),
			[]byte(`{"v":1,"op":"transfer","to":"Ωmega ✓ \"quoted\"\n"}`),
			bytes.Repeat([]byte("x"), 64<<10),
			[]byte(`{"v":1,"op":"mine","network":"bitcoin","count":1}`), // the same op twice is two ops
		}
		for _, op := range want {
			must(t, lg.AppendDevnetOp(ctx, op))
		}
		got, err = lg.DevnetOps(ctx)
		must(t, err)
		wantOps(t, got, want)
	})
	t.Run("InsideATransaction", func(t *testing.T) {
		ctx, st := b.setup(t)
		lg := asDevnetLog(t, st)
		must(t, st.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
			return lg.AppendDevnetOp(ctx, []byte("kept"))
		}))
		err := st.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
			if err := lg.AppendDevnetOp(ctx, []byte("rolled back")); err != nil {
				return err
			}
			return payd.Errorf(payd.ErrConflict, "roll back")
		})
		wantCode(t, err, payd.ErrConflict)
		got, err := lg.DevnetOps(ctx)
		must(t, err)
		wantOps(t, got, [][]byte{[]byte("kept")})
	})
	t.Run("RacingWritersLoseNothing", func(t *testing.T) { testDevnetRace(t, b) })
}

// testDevnetRace appends from many goroutines at once, which the devnet
// never does (one mutex serialises it): each append either lands exactly
// once or fails with conflict, two writers having taken one sequence
// number, and nothing acknowledged is lost.
func testDevnetRace(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	lg := asDevnetLog(t, st)
	_, errs := parallel(20, func(i int) (struct{}, error) {
		return struct{}{}, lg.AppendDevnetOp(ctx, []byte(fmt.Sprint("op ", i)))
	})
	got, err := lg.DevnetOps(ctx)
	must(t, err)
	seen := map[string]int{}
	for _, op := range got {
		seen[string(op)]++
	}
	for i, err := range errs {
		n := seen[fmt.Sprint("op ", i)]
		switch {
		case err == nil && n != 1:
			t.Errorf("acknowledged op %d is in the log %d times", i, n)
		case err != nil && (n != 0 || payd.ErrorCode(err) != payd.ErrConflict):
			t.Errorf("failed op %d (%v) is in the log %d times", i, err, n)
		}
	}
}

// wantOps compares two op lists.
func wantOps(t *testing.T, got, want [][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("DevnetOps returned %d ops, want %d", len(got), len(want))
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("op %d = %.80q, want %.80q", i, got[i], want[i])
		}
	}
}
