package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"payd"
)

func testEmail(t *testing.T, b *bundle) {
	t.Run("CreateAndRead", testEmailCreate(b))
	t.Run("WithTheChange", testEmailTx(b))
	t.Run("ClaimAndSave", testEmailClaim(b))
	t.Run("ClaimedOnce", testEmailClaimedOnce(b))
	t.Run("GivenUp", testEmailGivenUp(b))
	t.Run("List", testListEmails(b))
}

// mustEmail stores a new email to to, created (and due) at at.
func mustEmail(t *testing.T, ctx context.Context, st payd.Store, to string, at time.Time) *payd.Email {
	t.Helper()
	e, err := payd.NewEmail(to, "Your code", "Your code is 123456.", "<p>Your code is <b>123456</b>.</p>", "signup_code", at)
	must(t, err)
	must(t, st.CreateEmail(ctx, e))
	return e
}

func testEmailCreate(b *bundle) func(t *testing.T) {
	return func(t *testing.T) {
		ctx, st := b.setup(t)
		e := mustEmail(t, ctx, st, "Ada@Example.com", t0)
		got, err := st.EmailByID(ctx, e.ID)
		must(t, err)
		if !reflect.DeepEqual(got, e) {
			t.Fatalf("EmailByID = %+v, want %+v", got, e)
		}
		wantCode(t, st.CreateEmail(ctx, e), payd.ErrConflict)
		_, err = st.EmailByID(ctx, payd.NewID(payd.PrefixEmail))
		wantCode(t, err, payd.ErrNotFound)
		unknown := *e
		unknown.ID = payd.NewID(payd.PrefixEmail)
		wantCode(t, st.SaveEmail(ctx, &unknown), payd.ErrNotFound)
	}
}

// testEmailTx stores an email in a transaction that fails: it is gone with
// the change, as a committed one stays with it.
func testEmailTx(b *bundle) func(t *testing.T) {
	return func(t *testing.T) {
		ctx, st := b.setup(t)
		boom := errors.New("boom")
		var id string
		err := st.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
			e, err := payd.NewEmail("ada@example.com", "Hi", "Hello", "", "test", t0)
			if err != nil {
				return err
			}
			id = e.ID
			if err := q.CreateEmail(ctx, e); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("Tx = %v", err)
		}
		_, err = st.EmailByID(ctx, id)
		wantCode(t, err, payd.ErrNotFound)
		if due, _ := st.ClaimDueEmails(ctx, t0.Add(time.Hour), t0.Add(2*time.Hour), 10); len(due) != 0 {
			t.Fatalf("a rolled-back email is queued")
		}
	}
}

func testEmailClaim(b *bundle) func(t *testing.T) {
	return func(t *testing.T) {
		ctx, st := b.setup(t)
		e := mustEmail(t, ctx, st, "ada@example.com", t0)
		if none, _ := st.ClaimDueEmails(ctx, t0.Add(-time.Second), t0.Add(time.Minute), 10); len(none) != 0 {
			t.Fatalf("claimed %d emails before they were due", len(none))
		}
		claimed, err := st.ClaimDueEmails(ctx, t0, t0.Add(time.Minute), 10)
		must(t, err)
		if len(claimed) != 1 || claimed[0].ID != e.ID || claimed[0].LeaseUntil == nil || claimed[0].Version != e.Version+1 {
			t.Fatalf("claimed %+v", claimed)
		}
		if again, _ := st.ClaimDueEmails(ctx, t0.Add(time.Second), t0.Add(time.Minute), 10); len(again) != 0 {
			t.Fatalf("a leased email was claimed again")
		}
		// The lease lapses (a crashed holder): another claim takes it over,
		// and the first holder can no longer save.
		taken, err := st.ClaimDueEmails(ctx, t0.Add(time.Minute), t0.Add(2*time.Minute), 10)
		must(t, err)
		if len(taken) != 1 || taken[0].ID != e.ID {
			t.Fatalf("a lapsed lease was not claimed again: %+v", taken)
		}
		stale := claimed[0]
		stale.Sent(t0.Add(time.Second))
		wantCode(t, st.SaveEmail(ctx, stale), payd.ErrConflict)

		fresh := taken[0]
		fresh.Failed("dial tcp: connection refused", t0.Add(time.Minute), retryIn(time.Hour))
		must(t, st.SaveEmail(ctx, fresh))
		got, err := st.EmailByID(ctx, e.ID)
		must(t, err)
		if !reflect.DeepEqual(got, fresh) {
			t.Fatalf("after failing: %+v, want %+v", got, fresh)
		}
		if got.Status != payd.EmailRetrying || got.Attempts != 1 || !got.NextAttemptAt.Equal(t0.Add(time.Minute+time.Hour)) ||
			got.Text == "" || got.LastError == "" {
			t.Fatalf("after failing: %+v", got)
		}
		if early, _ := st.ClaimDueEmails(ctx, t0.Add(time.Hour), t0.Add(2*time.Hour), 10); len(early) != 0 {
			t.Fatalf("claimed before its retry was due")
		}
		retry, err := st.ClaimDueEmails(ctx, t0.Add(time.Minute+time.Hour), t0.Add(2*time.Hour), 10)
		must(t, err)
		if len(retry) != 1 {
			t.Fatalf("the retry was not claimed")
		}
		retry[0].Sent(t0.Add(time.Minute + time.Hour))
		must(t, st.SaveEmail(ctx, retry[0]))
		got, err = st.EmailByID(ctx, e.ID)
		must(t, err)
		if got.Status != payd.EmailSent || got.Attempts != 2 || got.Text != "" || got.HTML != "" || got.NextAttemptAt != nil ||
			got.LeaseUntil != nil || got.SentAt == nil || !got.SentAt.Equal(t0.Add(time.Minute+time.Hour)) || got.Subject != e.Subject {
			t.Fatalf("after sending: %+v", got)
		}
		if due, _ := st.ClaimDueEmails(ctx, t0.Add(100*time.Hour), t0.Add(101*time.Hour), 10); len(due) != 0 {
			t.Fatalf("a sent email is still queued")
		}
	}
}

// testEmailClaimedOnce races four claimers for 20 due emails: each goes to
// exactly one of them.
func testEmailClaimedOnce(b *bundle) func(t *testing.T) {
	return func(t *testing.T) {
		ctx, st := b.setup(t)
		for i := range 20 {
			mustEmail(t, ctx, st, "ada@example.com", t0.Add(time.Duration(i)))
		}
		got, errs := parallel(4, func(int) ([]*payd.Email, error) {
			return st.ClaimDueEmails(ctx, t0.Add(time.Second), t0.Add(time.Minute), 20)
		})
		seen := map[string]bool{}
		for i, es := range got {
			must(t, errs[i])
			for _, e := range es {
				if seen[e.ID] {
					t.Fatalf("email %s claimed twice", e.ID)
				}
				seen[e.ID] = true
			}
		}
		if len(seen) != 20 {
			t.Fatalf("claimed %d of 20", len(seen))
		}
	}
}

// testEmailGivenUp fails an email with no retry left: failed for good,
// its bodies scrubbed, out of the queue.
func testEmailGivenUp(b *bundle) func(t *testing.T) {
	return func(t *testing.T) {
		ctx, st := b.setup(t)
		e := mustEmail(t, ctx, st, "ada@example.com", t0)
		claimed, err := st.ClaimDueEmails(ctx, t0, t0.Add(time.Minute), 10)
		must(t, err)
		if len(claimed) != 1 {
			t.Fatalf("claimed %d", len(claimed))
		}
		claimed[0].Failed("550 mailbox unavailable", t0.Add(time.Second), noRetry)
		must(t, st.SaveEmail(ctx, claimed[0]))
		got, err := st.EmailByID(ctx, e.ID)
		must(t, err)
		if got.Status != payd.EmailFailed || got.Text != "" || got.NextAttemptAt != nil || got.LastError != "550 mailbox unavailable" {
			t.Fatalf("given up: %+v", got)
		}
		if due, _ := st.ClaimDueEmails(ctx, t0.Add(100*time.Hour), t0.Add(101*time.Hour), 10); len(due) != 0 {
			t.Fatalf("a failed email is still queued")
		}
	}
}

func testListEmails(b *bundle) func(t *testing.T) {
	return func(t *testing.T) {
		ctx, st := b.setup(t)
		var ada []*payd.Email
		for i := range 3 {
			ada = append(ada, mustEmail(t, ctx, st, "ada@example.com", t0.Add(time.Duration(i)*time.Second)))
		}
		mustEmail(t, ctx, st, "bob@example.com", t0.Add(time.Hour))
		// The outbox keeps the oldest (development mode); the others are
		// listed as they are, pending.
		claimed, err := st.ClaimDueEmails(ctx, t0, t0.Add(time.Minute), 1)
		must(t, err)
		if len(claimed) != 1 || claimed[0].ID != ada[0].ID {
			t.Fatalf("claimed %+v", claimed)
		}
		claimed[0].Kept(t0.Add(time.Second))
		must(t, st.SaveEmail(ctx, claimed[0]))

		got, err := st.ListEmails(ctx, "ADA@example.COM", 10)
		must(t, err)
		if len(got) != 3 || got[0].ID != ada[2].ID || got[1].ID != ada[1].ID || got[2].ID != ada[0].ID {
			t.Fatalf("ListEmails = %+v", got)
		}
		if got[2].Status != payd.EmailKept || got[2].Text != ada[0].Text || got[0].Status != payd.EmailPending {
			t.Fatalf("kept %+v, pending %+v", got[2], got[0])
		}
		page, err := st.ListEmails(ctx, "ada@example.com", 2)
		must(t, err)
		if len(page) != 2 || page[0].ID != ada[2].ID {
			t.Fatalf("limit 2: %+v", page)
		}
		none, err := st.ListEmails(ctx, "carol@example.com", 10)
		must(t, err)
		if len(none) != 0 {
			t.Fatalf("another address sees %d emails", len(none))
		}
	}
}
