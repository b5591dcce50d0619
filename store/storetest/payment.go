package storetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"payd"
	"payd/money"
)

// paymentRates are the rates the suite's payments are made at.
var paymentRates = &payd.ExchangeRates{Fiat: map[money.Currency]money.Rate{money.USD: money.MustRate("1"), money.EUR: money.MustRate("1.0842")}}

// newPayment returns an unsaved pending payment of biz for amount USD cents.
func newPayment(t *testing.T, biz *payd.Business, amount int64, ref string) *payd.Payment {
	t.Helper()
	p, err := payd.NewPayment(biz.ID, payd.PaymentParams{Amount: amount, Currency: money.USD, Reference: ref,
		FeePayer: money.FeePayerBusiness}, paymentRates, false, t0)
	must(t, err)
	return p
}

// fullPayment returns a payment with every field set, for round trips.
func fullPayment(t *testing.T, biz *payd.Business) *payd.Payment {
	t.Helper()
	exp := t0.Add(time.Hour)
	p, err := payd.NewPayment(biz.ID, payd.PaymentParams{
		Amount: 12_345, Currency: money.EUR, Description: "Two books\nand a pen", Reference: "order-1",
		Metadata: map[string]string{"order_id": "A-1", "sku": "book", "empty": ""}, CustomerID: payd.NewID(payd.PrefixCustomer),
		LinkID: payd.NewID(payd.PrefixLink), SuccessURL: "https://shop.example/ok", CancelURL: "https://shop.example/no",
		ExpiresAt: &exp, FeePayer: money.FeePayerCustomer, Country: "DE",
	}, paymentRates, false, t0)
	must(t, err)
	fee := int64(402)
	p.Status, p.CustomerFee, p.AmountReceived, p.FeeRateBps = payd.PaymentSucceeded, 371, 12_716, 300
	p.Reporting.FeeUSD, p.Reporting.CustomerFeeUSD = &fee, 402
	p.Method = &payd.Method{Rail: payd.RailCrypto, Asset: money.USDC, Network: money.Polygon, Amount: "133.84",
		ExpectedAmount: "133.84", FromAddress: "0xabc", TxHash: "0xdef", ExplorerURL: "https://polygonscan.com/tx/0xdef"}
	p.Settlement = &payd.Settlement{Destination: "wallet", Asset: money.USDC, Network: money.Polygon, Amount: "133.84",
		WalletID: payd.NewID(payd.PrefixWallet), Address: "0x123", TxHash: "0xdef", ExplorerURL: "https://polygonscan.com/tx/0xdef"}
	confirmed := t0.Add(time.Minute)
	p.ConfirmedAt, p.CheckoutID = &confirmed, payd.NewID(payd.PrefixCheckout)
	p.FailureCode, p.FailureMessage = "x", "y"
	p.Events = append(p.Events, payd.PaymentEvent{Type: payd.EventDetected, Data: []byte(`{"amount":"133.84"}`), CreatedAt: t0.Add(time.Second)})
	return p
}

// samePayment fails unless got equals want field by field.
func samePayment(t *testing.T, got, want *payd.Payment) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("payment read back differs:\n got %+v\nwant %+v", got, want)
	}
}

func testPayment(t *testing.T, b *bundle) {
	t.Run("RoundTrip", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		for _, p := range []*payd.Payment{fullPayment(t, biz), newPayment(t, biz, 100, "")} {
			must(t, st.CreatePayment(ctx, p))
			got, err := st.PaymentByID(ctx, biz.ID, p.ID)
			must(t, err)
			samePayment(t, got, p)
			got, err = st.PaymentByCode(ctx, p.Code)
			must(t, err)
			samePayment(t, got, p)
		}
	})
	t.Run("OtherBusinessIsNotFound", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz, other := mustBusiness(t, ctx, st), mustBusiness(t, ctx, st)
		p := newPayment(t, biz, 100, "r")
		must(t, st.CreatePayment(ctx, p))
		_, err := st.PaymentByID(ctx, other.ID, p.ID)
		wantCode(t, err, payd.ErrNotFound)
		_, err = st.PaymentByReference(ctx, other.ID, "r", t0)
		wantCode(t, err, payd.ErrNotFound)
		q := *p
		q.BusinessID = other.ID
		wantCode(t, st.UpdatePayment(ctx, &q), payd.ErrNotFound)
		_, err = st.PaymentByCode(ctx, "nope")
		wantCode(t, err, payd.ErrNotFound)
	})
	t.Run("DuplicateCodeIsConflict", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		p, q := newPayment(t, biz, 100, ""), newPayment(t, biz, 100, "")
		q.Code = p.Code
		must(t, st.CreatePayment(ctx, p))
		wantCode(t, st.CreatePayment(ctx, q), payd.ErrConflict)
		if _, err := st.PaymentByID(ctx, biz.ID, q.ID); !payd.IsNotFound(err) {
			t.Fatalf("a refused payment left a row behind: %v", err)
		}
	})
	t.Run("Update", func(t *testing.T) { testUpdatePayment(t, b) })
	t.Run("UpdateRefusesStaleCopy", func(t *testing.T) {
		ctx, st := b.setup(t)
		biz := mustBusiness(t, ctx, st)
		p := newPayment(t, biz, 100, "")
		must(t, st.CreatePayment(ctx, p))
		stale := *p
		stale.Events = append([]payd.PaymentEvent(nil), p.Events...)
		_, err := p.Cancel(t0.Add(time.Minute))
		must(t, err)
		must(t, st.UpdatePayment(ctx, p))
		stale.Events = stale.Events[:0]
		wantCode(t, st.UpdatePayment(ctx, &stale), payd.ErrConflict)
	})
	t.Run("ConcurrentUpdatesAllLand", func(t *testing.T) { testConcurrentPaymentUpdates(t, b) })
	t.Run("ReadIsOneSnapshot", func(t *testing.T) { testPaymentSnapshot(t, b) })
	t.Run("Reference", func(t *testing.T) { testPaymentReference(t, b) })
	t.Run("ReferenceRace", func(t *testing.T) { testPaymentReferenceRace(t, b) })
}

// testUpdatePayment changes every mutable field and appends events.
func testUpdatePayment(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	biz := mustBusiness(t, ctx, st)
	p := newPayment(t, biz, 5000, "")
	must(t, st.CreatePayment(ctx, p))
	full := fullPayment(t, biz)
	later := t0.Add(time.Hour)
	p.Status, p.CustomerFee, p.AmountReceived, p.FeeRateBps = full.Status, full.CustomerFee, full.AmountReceived, full.FeeRateBps
	p.Reporting, p.Method, p.Settlement, p.CustomerID = full.Reporting, full.Method, full.Settlement, full.CustomerID
	p.ExpiresAt, p.CanceledAt, p.ConfirmedAt, p.CheckoutID = full.ExpiresAt, &later, full.ConfirmedAt, full.CheckoutID
	p.FailureCode, p.FailureMessage, p.UpdatedAt = "f", "m", later
	p.Events = append(p.Events, payd.PaymentEvent{Type: payd.EventMethodSelected, Data: []byte(`{"rail":"crypto"}`), CreatedAt: later},
		payd.PaymentEvent{Type: payd.EventSucceeded, CreatedAt: later})
	must(t, st.UpdatePayment(ctx, p))
	got, err := st.PaymentByID(ctx, biz.ID, p.ID)
	must(t, err)
	samePayment(t, got, p)
	// Clearing goes back to NULL; an update with no new event appends none.
	p.Method, p.Settlement, p.CustomerID, p.CheckoutID, p.Reporting.FeeUSD, p.CanceledAt = nil, nil, "", "", nil, nil
	must(t, st.UpdatePayment(ctx, p))
	got, err = st.PaymentByID(ctx, biz.ID, p.ID)
	must(t, err)
	samePayment(t, got, p)
}

// testConcurrentPaymentUpdates appends events from parallel transactions
// that each read the payment first: none may be lost or refused.
func testConcurrentPaymentUpdates(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	biz := mustBusiness(t, ctx, st)
	p := newPayment(t, biz, 100, "")
	must(t, st.CreatePayment(ctx, p))
	const n = 8
	_, errs := parallel(n, func(i int) (struct{}, error) {
		return struct{}{}, st.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
			cur, err := q.PaymentByID(ctx, biz.ID, p.ID)
			if err != nil {
				return err
			}
			cur.Events = append(cur.Events, payd.PaymentEvent{Type: payd.EventConfirmation, CreatedAt: t0})
			cur.AmountReceived++
			return q.UpdatePayment(ctx, cur)
		})
	})
	noErrors(t, errs)
	got, err := st.PaymentByID(ctx, biz.ID, p.ID)
	must(t, err)
	if len(got.Events) != n+1 || got.AmountReceived != n {
		t.Fatalf("after %d updates: %d events, amount_received %d", n, len(got.Events), got.AmountReceived)
	}
}

// testPaymentSnapshot reads a payment while it is updated: every update
// appends an event and counts it in amount_received, so a read whose row
// and events come from different commits shows them disagree (a payment
// still pending with its succeeded event). Each read must be one snapshot.
func testPaymentSnapshot(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	biz := mustBusiness(t, ctx, st)
	p := newPayment(t, biz, 100, "")
	p.AmountReceived = int64(len(p.Events))
	must(t, st.CreatePayment(ctx, p))
	const updates = 300
	done := make(chan error, 1)
	go func() {
		for range updates {
			p.Events = append(p.Events, payd.PaymentEvent{Type: payd.EventConfirmation, CreatedAt: t0})
			p.AmountReceived = int64(len(p.Events))
			if err := st.UpdatePayment(ctx, p); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	reads := []func() (*payd.Payment, error){
		func() (*payd.Payment, error) { return st.PaymentByID(ctx, biz.ID, p.ID) },
		func() (*payd.Payment, error) { return st.PaymentByCode(ctx, p.Code) },
		func() (*payd.Payment, error) { return st.PublicPayment(ctx, p.ID) },
	}
	for i := 0; ; i++ {
		select {
		case err := <-done:
			must(t, err)
			return
		default:
		}
		got, err := reads[i%len(reads)]()
		must(t, err)
		if got.AmountReceived != int64(len(got.Events)) {
			<-done
			t.Fatalf("read %d: amount_received %d with %d events: the row and the events are of different commits",
				i, got.AmountReceived, len(got.Events))
		}
	}
}

// testPaymentReference covers which payments hold a reference.
func testPaymentReference(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	biz := mustBusiness(t, ctx, st)
	_, err := st.PaymentByReference(ctx, biz.ID, "r", t0)
	wantCode(t, err, payd.ErrNotFound)
	canceled := newPayment(t, biz, 100, "r")
	_, err = canceled.Cancel(t0)
	must(t, err)
	expired := newPayment(t, biz, 100, "r")
	expired.Status = payd.PaymentExpired
	lapsed := newPayment(t, biz, 100, "r")
	soon := t0.Add(time.Minute)
	lapsed.ExpiresAt = &soon
	for _, p := range []*payd.Payment{canceled, expired, lapsed} {
		must(t, st.CreatePayment(ctx, p))
	}
	got, err := st.PaymentByReference(ctx, biz.ID, "r", t0)
	must(t, err)
	if got.ID != lapsed.ID {
		t.Fatalf("before its expiry the pending payment holds the reference; got %s", got.ID)
	}
	_, err = st.PaymentByReference(ctx, biz.ID, "r", soon)
	wantCode(t, err, payd.ErrNotFound)
	first, second := newPayment(t, biz, 100, "r"), newPayment(t, biz, 200, "r")
	first.Status, first.ExpiresAt = payd.PaymentSucceeded, &soon
	second.CreatedAt = t0.Add(time.Second)
	must(t, st.CreatePayment(ctx, second))
	must(t, st.CreatePayment(ctx, first))
	got, err = st.PaymentByReference(ctx, biz.ID, "r", soon.Add(time.Hour))
	must(t, err)
	if got.ID != first.ID {
		t.Fatalf("the oldest live payment (succeeded, past expiry) holds the reference; got %s", got.ID)
	}
}

// testPaymentReferenceRace creates payments with one reference from
// parallel transactions that each look first: exactly one is made.
func testPaymentReferenceRace(t *testing.T, b *bundle) {
	ctx, st := b.setup(t)
	biz := mustBusiness(t, ctx, st)
	const n = 8
	ids, errs := parallel(n, func(i int) (string, error) {
		var id string
		err := st.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
			cur, err := q.PaymentByReference(ctx, biz.ID, "race", t0)
			if err == nil {
				id = cur.ID
				return nil
			} else if !payd.IsNotFound(err) {
				return err
			}
			p := newPayment(t, biz, 100, "race")
			id = p.ID
			return q.CreatePayment(ctx, p)
		})
		return id, err
	})
	noErrors(t, errs)
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("parallel creations with one reference made several payments: %v", ids)
		}
	}
}
