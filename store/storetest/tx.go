package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"payd"
)

var errBoom = errors.New("boom")

func testTx(t *testing.T, b *bundle) {
	t.Run("CommitsTogether", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz, _ := payd.NewBusiness("Tx Ltd", "tx@example.com", false, t0)
		_, key := payd.NewAPIKey(biz.ID, payd.KeySecret, payd.ModeLive, nil, t0)
		must(t, st.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
			if err := q.CreateBusiness(ctx, biz); err != nil {
				return err
			}
			if _, err := q.BusinessByID(ctx, biz.ID); err != nil {
				return fmt.Errorf("reading the transaction's own write: %w", err)
			}
			return q.CreateAPIKey(ctx, key)
		}))
		_, err := st.APIKeyByHash(ctx, key.Hash)
		must(t, err)
	})
	t.Run("ErrorRollsBack", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz, _ := payd.NewBusiness("Tx Ltd", "tx@example.com", false, t0)
		err := st.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
			must(t, q.CreateBusiness(ctx, biz))
			return errBoom
		})
		if !errors.Is(err, errBoom) {
			t.Fatalf("Tx = %v, want the function's error", err)
		}
		_, err = st.BusinessByID(ctx, biz.ID)
		wantCode(t, err, payd.ErrNotFound)
	})
	t.Run("DoneContextDoesNotRun", func(t *testing.T) {
		ctx, st := b.setup(t)
		ctx, cancel := context.WithCancel(ctx)
		cancel()
		ran := false
		err := st.Tx(ctx, func(context.Context, payd.Queries) error { ran = true; return nil })
		if !errors.Is(err, context.Canceled) || ran {
			t.Fatalf("Tx on a cancelled context = %v, ran = %v; want context.Canceled without running", err, ran)
		}
	})
	t.Run("FailuresStayIsolated", func(t *testing.T) { testIsolation(t, b) })
	t.Run("NestedRunsInline", func(t *testing.T) { testNested(t, b) })
	t.Run("NestedFailureOfOuterRollsBackAll", func(t *testing.T) { testNestedOuterFails(t, b) })
	t.Run("ContextKeptPastTheTxJoinsNothing", func(t *testing.T) { testStaleContext(t, b) })
}

// testIsolation runs many transactions at once, so that SQLite's writer
// batches them, where some fail, panic or conflict: only those roll back.
func testIsolation(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	taken := mustBusiness(t, ctx, st)
	const n = 40
	bizs := make([]*payd.Business, n)
	for i := range bizs {
		bizs[i], _ = payd.NewBusiness(fmt.Sprint("Shop ", i), "shop@example.com", false, t0)
	}
	_, errs := parallel(n, func(i int) (struct{}, error) {
		return struct{}{}, st.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
			if err := q.CreateBusiness(ctx, bizs[i]); err != nil {
				return err
			}
			switch i % 4 {
			case 1:
				return errBoom
			case 2:
				panic("boom")
			case 3:
				return q.CreateBusiness(ctx, taken)
			}
			return nil
		})
	})
	for i, err := range errs {
		_, lookup := st.BusinessByID(ctx, bizs[i].ID)
		switch {
		case i%4 == 0 && (err != nil || lookup != nil):
			t.Errorf("tx %d: %v, lookup %v; want committed", i, err, lookup)
		case i%4 == 1 && !errors.Is(err, errBoom), i%4 == 2 && err == nil:
			t.Errorf("tx %d: error %v", i, err)
		case i%4 == 3 && payd.ErrorCode(err) != payd.ErrConflict:
			t.Errorf("tx %d: error %v, want conflict", i, err)
		case i%4 != 0 && !payd.IsNotFound(lookup):
			t.Errorf("tx %d failed but its business is there (%v)", i, lookup)
		}
	}
}

func testNested(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	b1, b2, b3 := newBiz(), newBiz(), newBiz()
	must(t, st.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		if err := q.CreateBusiness(ctx, b1); err != nil {
			return err
		}
		if err := st.Tx(ctx, func(ctx context.Context, q payd.Queries) error { return q.CreateBusiness(ctx, b2) }); err != nil {
			return fmt.Errorf("nested Tx: %w", err)
		}
		err := st.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
			if err := q.CreateBusiness(ctx, b3); err != nil {
				return err
			}
			return errBoom
		})
		if !errors.Is(err, errBoom) {
			return fmt.Errorf("failing nested Tx = %v, want boom", err)
		}
		// Store methods called with the transaction's context join it: the
		// read sees b1 before commit, and the write does not wait for a
		// writer that is busy running this very function.
		if _, err := st.BusinessByID(ctx, b1.ID); err != nil {
			return fmt.Errorf("store read inside the transaction: %w", err)
		}
		return st.SetBusinessSuspended(ctx, b2.ID, &t0)
	}))
	for _, id := range []string{b1.ID, b2.ID} {
		_, err := st.BusinessByID(ctx, id)
		must(t, err)
	}
	_, err := st.BusinessByID(ctx, b3.ID)
	wantCode(t, err, payd.ErrNotFound)
}

func testNestedOuterFails(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	inner := newBiz()
	err := st.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		if err := st.Tx(ctx, func(ctx context.Context, q payd.Queries) error { return q.CreateBusiness(ctx, inner) }); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("Tx = %v, want boom", err)
	}
	_, err = st.BusinessByID(ctx, inner.ID)
	wantCode(t, err, payd.ErrNotFound)
}

func testStaleContext(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	var kept context.Context
	must(t, st.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		kept = ctx
		return nil
	}))
	biz := newBiz()
	must(t, st.CreateBusiness(kept, biz))
	_, err := st.BusinessByID(ctx, biz.ID)
	must(t, err)
}

func newBiz() *payd.Business {
	b, _ := payd.NewBusiness("Nested Ltd", "nested@example.com", false, t0)
	return b
}
