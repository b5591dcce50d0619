package storetest

import (
	"context"
	"testing"

	"payd"
	"payd/store"
)

// textValuer is the audit *store.DB offers beside payd.Store.
type textValuer interface {
	TextValues(ctx context.Context, fn func(store.TextValue) error) error
}

// testTextValues checks the audit sees what is stored as text, in the
// column it is stored in, and nothing of other types.
func testTextValues(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	tv, ok := st.(textValuer)
	if !ok {
		t.Skip("the store has no TextValues")
	}
	biz := mustBusiness(t, ctx, st)
	u, err := payd.NewUser("Audit.Me@example.com", "Audit \"quoted\" Name", "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA", t0)
	must(t, err)
	must(t, st.CreateUser(ctx, u))
	found, columns := map[string]string{}, map[string]bool{}
	must(t, tv.TextValues(ctx, func(v store.TextValue) error {
		found[v.Value] = v.Table + "." + v.Column
		columns[v.Table+"."+v.Column] = true
		return nil
	}))
	for value, where := range map[string]string{
		"Audit.Me@example.com": "users.email",
		"audit.me@example.com": "users.email_key",
		`Audit "quoted" Name`:  "users.name",
		biz.ID:                 "businesses.id",
		"$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA": "users.password_hash",
	} {
		if found[value] != where {
			t.Errorf("%q found in %q, want %s", value, found[value], where)
		}
	}
	// Timestamps are integers: not text.
	for _, c := range []string{"users.created_at", "users.version", "businesses.created_at"} {
		if columns[c] {
			t.Errorf("the integers of %s were listed as text", c)
		}
	}
}
