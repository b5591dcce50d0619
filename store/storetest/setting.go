package storetest

import (
	"fmt"
	"testing"
)

func testSetting(t *testing.T, b *bundle) {
	t.Run("FirstValueStays", func(t *testing.T) {
		ctx, st := b.setup(t)
		for _, v := range []string{"first", "second"} {
			got, err := st.EnsureSetting(ctx, "cursor_key", v)
			must(t, err)
			if got != "first" {
				t.Fatalf("EnsureSetting(%q) = %q, want first", v, got)
			}
		}
	})
	t.Run("RaceAgreesOnOneValue", func(t *testing.T) {
		ctx, st := b.setup(t)
		got, errs := parallel(20, func(i int) (string, error) {
			return st.EnsureSetting(ctx, "cursor_key", fmt.Sprint("value-", i))
		})
		noErrors(t, errs)
		for _, v := range got {
			if v != got[0] {
				t.Fatalf("racing EnsureSetting returned %v, want one value", got)
			}
		}
	})
}
