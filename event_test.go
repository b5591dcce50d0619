package payd

import (
	"fmt"
	"testing"
	"time"
)

// TestPaymentEventTypes follows a payment through its life and checks the
// events each change announces: one per status change, none for a
// confirmation, and an underpaid payment's quote ending is not expiry.
func TestPaymentEventTypes(t *testing.T) {
	p := mustPayment(t)
	want := func(old *Payment, types ...string) {
		t.Helper()
		if got := PaymentEventTypes(old, p); fmt.Sprint(got) != fmt.Sprint(types) {
			t.Fatalf("events = %v, want %v", got, types)
		}
	}
	want(nil, EventPaymentCreated)
	c := openFor(t, p, false)
	old := *p
	c.Observe(p, []Transfer{xfer("0xa", "60.00", 1)}, explorer, testNow)
	want(&old, EventPaymentProcessing)
	old = *p
	c.Observe(p, []Transfer{xfer("0xa", "60.00", 2)}, explorer, testNow)
	want(&old, EventPaymentUnderpaid)
	old = *p
	c.Observe(p, nil, explorer, c.ExpiresAt)
	want(&old)
	old = *p
	if err := p.Accept(testNow); err != nil {
		t.Fatal(err)
	}
	want(&old, EventPaymentSucceeded)
	// More funds for the succeeded payment: seen, nothing is being paid, so
	// no payment.processing; confirmed, they are announced as received.
	old = *p
	c.Observe(p, []Transfer{xfer("0xa", "60.00", 2), xfer("0xb", "5.00", 0)}, explorer, c.ExpiresAt)
	want(&old)
	old = *p
	c.Observe(p, []Transfer{xfer("0xa", "60.00", 2), xfer("0xb", "5.00", 2)}, explorer, c.ExpiresAt)
	want(&old, EventPaymentFundsReceived)

	link := mustPayment(t, func(in *PaymentParams) { in.LinkID = "lnk_1" })
	lc := openFor(t, link, false)
	p, old = link, *link
	lc.Observe(link, nil, explorer, lc.ExpiresAt.Add(time.Second))
	want(&old, EventPaymentExpired)
	// Late funds for the expired payment: told once confirmed, by the move
	// to needs_review.
	old = *p
	lc.Observe(link, []Transfer{xfer("0xl", "100.00", 0)}, explorer, lc.ExpiresAt.Add(time.Minute))
	want(&old)
	old = *p
	lc.Observe(link, []Transfer{xfer("0xl", "100.00", 2)}, explorer, lc.ExpiresAt.Add(time.Minute))
	want(&old, EventPaymentNeedsReview)
	// More late funds for the payment in review: told once confirmed, as
	// received.
	old = *p
	lc.Observe(link, []Transfer{xfer("0xl", "100.00", 2), xfer("0xm", "1.00", 0)}, explorer, lc.ExpiresAt.Add(time.Minute))
	want(&old)
	old = *p
	lc.Observe(link, []Transfer{xfer("0xl", "100.00", 2), xfer("0xm", "1.00", 2)}, explorer, lc.ExpiresAt.Add(time.Minute))
	want(&old, EventPaymentFundsReceived)

	// An underpaid payment whose quote ended: late funds are no
	// payment.processing either.
	under := mustPayment(t)
	uc := openFor(t, under, false)
	uc.Observe(under, []Transfer{xfer("0xu", "60.00", 2)}, explorer, testNow)
	uc.Observe(under, []Transfer{xfer("0xu", "60.00", 2)}, explorer, uc.ExpiresAt)
	if under.Status != PaymentUnderpaid || uc.Status != CheckoutExpired {
		t.Fatalf("underpaid: %s, checkout %s", under.Status, uc.Status)
	}
	p, old = under, *under
	uc.Observe(under, []Transfer{xfer("0xu", "60.00", 2), xfer("0xv", "40.00", 0)}, explorer, uc.ExpiresAt.Add(time.Minute))
	want(&old)
}

// TestPaymentEventTypesCoverEveryStatus checks that every status a
// payment can enter has an event type in the catalogue.
func TestPaymentEventTypesCoverEveryStatus(t *testing.T) {
	for _, s := range PaymentStatuses {
		if !KnownEventType(PaymentStatusEventType(s)) {
			t.Errorf("status %s has no event type", s)
		}
	}
}

func TestCheckoutEventType(t *testing.T) {
	c := &Checkout{Status: CheckoutOpen}
	for _, tc := range []struct {
		old, now CheckoutStatus
		want     string
	}{
		{"", CheckoutOpen, EventCheckoutCreated},
		{CheckoutOpen, CheckoutProcessing, ""},
		{CheckoutProcessing, CheckoutCompleted, EventCheckoutCompleted},
		{CheckoutUnderpaid, CheckoutExpired, EventCheckoutExpired},
		{CheckoutOpen, CheckoutCanceled, EventCheckoutCanceled},
		{CheckoutExpired, CheckoutExpired, ""},
	} {
		c.Status = tc.now
		if got := CheckoutEventType(tc.old, c); got != tc.want {
			t.Errorf("%s → %s: %q, want %q", tc.old, tc.now, got, tc.want)
		}
	}
}
