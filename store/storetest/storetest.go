// Package storetest is the conformance suite every payd.Store passes, and
// helpers that open migrated test databases for other packages' tests.
//
// Run exercises every store method on a fresh store per subtest. The store
// package runs it on SQLite always and on PostgreSQL when
// PAYD_TEST_POSTGRES is set; API tests use Each to run on both.
package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"payd"
)

// Run runs the conformance suite. open must return a fresh, migrated,
// empty store, and close it when its test ends.
func Run(t *testing.T, open func(t *testing.T) payd.Store) {
	suites := []struct {
		name string
		run  func(*testing.T, *bundle)
	}{
		{"Business", testBusiness},
		{"APIKey", testAPIKey},
		{"Pause", testPause},
		{"ExchangeRates", testExchangeRates},
		{"Idempotency", testIdempotency},
		{"RateCounter", testRateCounter},
		{"Setting", testSetting},
		{"Tx", testTx},
		{"Search", testSearch},
		{"ListPayments", testListPayments},
		{"PaymentStatusCounts", testPaymentStatusCounts},
		{"PaymentDays", testPaymentDays},
		{"FoldRollups", testFoldRollups},
		{"Payment", testPayment},
		{"CheckoutSettings", testCheckoutSettings},
		{"Customer", testCustomer},
		{"Link", testLink},
		{"Wallet", testWallet},
		{"Devnet", testDevnet},
		{"Checkout", testCheckout},
		{"Lease", testLease},
		{"Event", testEvent},
		{"Webhook", testWebhook},
		{"Delivery", testDelivery},
		{"Chain", testChain},
		{"ChallengeToken", testChallengeToken},
		{"Email", testEmail},
		{"Account", testAccount},
		{"Recovery", testRecovery},
		{"Team", testTeam},
		{"Passkey", testPasskey},
		{"WebAuthnChallenge", testWebAuthnChallenge},
		{"TwoFactorChallenge", testTwoFactorChallenge},
		{"CardSandbox", testCardSandbox},
		{"TextValues", testTextValues},
	}
	for _, s := range suites {
		t.Run(s.name, func(t *testing.T) { s.run(t, &bundle{open: open}) })
	}
}

// RunSearch runs the search suites alone (search and the payment list's
// q), for a store set to answer them through its trigram index.
func RunSearch(t *testing.T, open func(t *testing.T) payd.Store) {
	t.Run("Search", func(t *testing.T) { testSearch(t, &bundle{open: open}) })
	t.Run("ListPayments", func(t *testing.T) { testListPayments(t, &bundle{open: open}) })
}

// bundle is what every conformance test starts from.
type bundle struct {
	open func(t *testing.T) payd.Store
}

// setup opens a fresh store for one test, run in parallel with the others.
func (b *bundle) setup(t *testing.T) (context.Context, payd.Store) {
	t.Helper()
	t.Parallel()
	return context.Background(), b.open(t)
}

// t0 is the suite's reference time: whole microseconds, the precision
// every timestamp is stored with.
var t0 = time.Date(2031, 4, 5, 6, 7, 8, 123456000, time.UTC)

// mustBusiness stores a new business and returns it.
func mustBusiness(t *testing.T, ctx context.Context, st payd.Store) *payd.Business {
	t.Helper()
	b, err := payd.NewBusiness("Ada's Shop", "ada@example.com", false, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateBusiness(ctx, b); err != nil {
		t.Fatal(err)
	}
	return b
}

// wantCode fails unless err is a payd error with the given code.
func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var pe *payd.Error
	if !errors.As(err, &pe) || pe.Code != code {
		t.Fatalf("error = %v, want code %s", err, code)
	}
}

// must fails the test on an error.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// parallel runs fn n times at once and returns the results in call order.
func parallel[T any](n int, fn func(i int) (T, error)) ([]T, []error) {
	out, errs := make([]T, n), make([]error, n)
	start := make(chan struct{})
	done := make(chan struct{})
	for i := range n {
		go func() {
			defer func() { done <- struct{}{} }()
			<-start
			out[i], errs[i] = fn(i)
		}()
	}
	close(start)
	for range n {
		<-done
	}
	return out, errs
}

// noErrors fails the test on the first error of a parallel run.
func noErrors(t *testing.T, errs []error) {
	t.Helper()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
}
