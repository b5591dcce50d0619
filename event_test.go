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

	link := mustPayment(t, func(in *PaymentParams) { in.LinkID = "lnk_1" })
	lc := openFor(t, link, false)
	p, old = link, *link
	lc.Observe(link, nil, explorer, lc.ExpiresAt.Add(time.Second))
	want(&old, EventPaymentExpired)
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
