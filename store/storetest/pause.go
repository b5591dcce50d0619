package storetest

import (
	"testing"
	"time"

	"payd"
)

func testPause(t *testing.T, b *bundle) {
	t.Run("SetListDelete", func(t *testing.T) {
		ctx, st := b.setup(t)
		got, err := st.Pauses(ctx)
		must(t, err)
		if len(got) != 0 {
			t.Fatalf("Pauses on a new store = %v", got)
		}
		must(t, st.SetPause(ctx, payd.Pause{Name: payd.PauseSignups, Reason: "spam", PausedAt: t0}))
		must(t, st.SetPause(ctx, payd.Pause{Name: payd.PauseCard, Reason: "provider down", PausedAt: t0}))
		must(t, st.SetPause(ctx, payd.Pause{Name: payd.PauseCard, Reason: "still down", PausedAt: t0.Add(time.Hour)}))
		got, err = st.Pauses(ctx)
		must(t, err)
		want := []payd.Pause{
			{Name: payd.PauseCard, Reason: "still down", PausedAt: t0},
			{Name: payd.PauseSignups, Reason: "spam", PausedAt: t0},
		}
		wantPauses(t, got, want)
		must(t, st.DeletePause(ctx, payd.PauseCard))
		must(t, st.DeletePause(ctx, payd.PauseCard))
		got, err = st.Pauses(ctx)
		must(t, err)
		wantPauses(t, got, want[1:])
	})
}

func wantPauses(t *testing.T, got, want []payd.Pause) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("Pauses = %v, want %v", got, want)
	}
	for i := range got {
		if got[i].Name != want[i].Name || got[i].Reason != want[i].Reason || !got[i].PausedAt.Equal(want[i].PausedAt) {
			t.Fatalf("Pauses = %v, want %v", got, want)
		}
	}
}
