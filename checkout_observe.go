package payd

import (
	"encoding/json"
	"math/big"
	"time"

	"payd/money"
)

// Outcome is what one Observe or Expire changed.
type Outcome struct {
	// Changed reports whether the checkout or the payment must be stored.
	Changed bool
	// Counted is the coin newly counted as received: what to add to the
	// wallet's holdings in the same transaction. Zero when nothing was.
	Counted money.CoinAmount
	// Foreign is coin of other assets newly confirmed into the deposit (a
	// customer sent USDT to a USDC checkout): it is in the wallet too, so
	// it joins the holdings, but it pays nothing and goes to review.
	Foreign []money.CoinAmount
}

func (o *Outcome) add(b Outcome) {
	o.Changed = o.Changed || b.Changed
	if !b.Counted.IsZero() {
		if o.Counted.Units == nil {
			o.Counted = b.Counted
		} else {
			o.Counted = o.Counted.Add(b.Counted)
		}
	}
	o.Foreign = append(o.Foreign, b.Foreign...)
}

// Observe applies what the network reports about the checkout's deposit
// at now to the checkout and its payment p (spec 3): a new transfer is
// detected, each block adds a confirmation up to Required, a transfer with
// the confirmations required is counted once, and once nothing sent on
// time is still unconfirmed the payment succeeds (overpaid when more
// arrived) or is underpaid. Funds first seen after the checkout stopped
// taking them, or in a coin other than the quoted one, put the payment in
// needs_review once confirmed. A reorg lowers
// confirmations but never takes back a confirmation event or a count.
// Observing the same report twice changes nothing the second time, so a
// watcher that crashed before storing the outcome can simply observe again.
// explorer gives a transaction's explorer address.
func (c *Checkout) Observe(p *Payment, seen []Transfer, explorer func(string) string, now time.Time) Outcome {
	var o Outcome
	o.add(c.forget(p, seen, explorer, now))
	for _, t := range seen {
		if c.pays(t) {
			o.add(c.see(p, t, explorer, now))
		}
	}
	o.add(c.reportConfirmations(p, now))
	o.add(c.count(p, explorer, now))
	o.add(c.Expire(p, now))
	if o.Changed {
		c.UpdatedAt = now
	}
	return o
}

// pays reports whether t pays this checkout's deposit, in any coin.
func (c *Checkout) pays(t Transfer) bool {
	q := c.Crypto
	return q != nil && t.Amount.Sign() > 0 && t.To == q.Deposit.Address && t.Reference == q.Deposit.Reference
}

// inCoin reports whether st is in the quoted coin. Only those pay the
// payment; another coin sent to the deposit is recorded (so it is read
// once, not on every watcher run) and, once confirmed, goes to review.
func (c *Checkout) inCoin(st SeenTransfer) bool { return st.Amount.Asset == c.Crypto.Asset }

// forget marks gone every transfer not counted yet that the report no
// longer holds: replaced or double-spent before it confirmed, or orphaned
// and not mined again. One in the quoted coin is recorded as dropped; the
// checkout, still taking funds, waits again for a payment, and the
// payment's method no longer names it. A counted transfer is never taken
// back: what it paid stays paid (DESIGN §4).
func (c *Checkout) forget(p *Payment, seen []Transfer, explorer func(string) string, now time.Time) Outcome {
	reported := make(map[TransferKey]bool, len(seen))
	for _, t := range seen {
		if c.pays(t) {
			reported[t.Key()] = true
		}
	}
	var o Outcome
	for i := range c.Transfers {
		st := &c.Transfers[i]
		if st.Counted || st.Gone || reported[st.Key()] {
			continue
		}
		st.Gone, st.Confirmations, o.Changed = true, 0, true
		if !c.inCoin(*st) {
			continue
		}
		data, _ := json.Marshal(map[string]string{"amount": st.Amount.String(), "network": string(c.Crypto.Network),
			"tx_hash": st.TxHash})
		p.addEvent(EventDropped, data, now)
	}
	if !o.Changed {
		return o
	}
	if c.Status == CheckoutProcessing && !c.waiting() {
		// Back to what it was before the transfer arrived: underpaid when
		// part of the quote was counted already, open otherwise.
		c.Status = CheckoutOpen
		if c.received(true).Sign() > 0 {
			c.Status = CheckoutUnderpaid
		}
	}
	if _, ok := c.LastSent(); !ok {
		c.SentAt = nil
	}
	if p.Method != nil && c.current(p) && !c.names(p.Method.TxHash) {
		p.Method.FromAddress, p.Method.TxHash, p.Method.ExplorerURL = "", "", ""
		if last, ok := c.LastSent(); ok {
			p.Method.FromAddress, p.Method.TxHash, p.Method.ExplorerURL = last.From, last.TxHash, explorer(last.TxHash)
		}
	}
	return o
}

// names reports whether a transfer of the checkout that is not gone has
// the transaction hash.
func (c *Checkout) names(txHash string) bool {
	for _, st := range c.Transfers {
		if !st.Gone && st.TxHash == txHash {
			return true
		}
	}
	return false
}

// see records t: a new transfer is detected, a known one gets its
// confirmations updated, and one gone and reported again is detected
// again.
func (c *Checkout) see(p *Payment, t Transfer, explorer func(string) string, now time.Time) Outcome {
	t.Confirmations = c.KeptConfirmations(t.Confirmations)
	for i := range c.Transfers {
		st := &c.Transfers[i]
		if st.Key() != t.Key() {
			continue
		}
		if st.Gone {
			// Back after the checkout stopped taking funds, it is late.
			st.Gone, st.Confirmations, st.Late = false, t.Confirmations, st.Late || !c.Active()
			if c.inCoin(*st) {
				c.detected(p, *st, explorer, now)
			}
			return Outcome{Changed: true}
		}
		if st.Confirmations == t.Confirmations {
			return Outcome{}
		}
		st.Confirmations = t.Confirmations
		return Outcome{Changed: true}
	}
	// Late is first seen once the checkout stopped taking funds: its quote
	// ended by the expirer (or by this Observe, after it), canceled or
	// replaced. A transfer seen while it still takes funds is on time,
	// its quote's end not yet applied: the expirer holds quotes while
	// payd cannot see a chain, so one sent then is judged once seen.
	late := !c.Active()
	st := SeenTransfer{TxHash: t.TxHash, Index: t.Index, From: t.From,
		Amount: t.Amount, Confirmations: t.Confirmations, Late: late, SeenAt: now}
	c.Transfers = append(c.Transfers, st)
	if c.inCoin(st) {
		c.detected(p, st, explorer, now)
	}
	return Outcome{Changed: true}
}

// detected records transfer t in the quoted coin as on its way: the
// checkout, still taking funds, is processing, the payment's method names
// t, and the history has its detected entry.
func (c *Checkout) detected(p *Payment, t SeenTransfer, explorer func(string) string, now time.Time) {
	late := t.Late
	if c.SentAt == nil {
		c.SentAt = &now
	}
	if !late {
		c.Status = CheckoutProcessing
	}
	if p.Method != nil && c.current(p) {
		p.Method.FromAddress, p.Method.TxHash, p.Method.ExplorerURL = t.From, t.TxHash, explorer(t.TxHash)
	}
	data, _ := json.Marshal(map[string]string{"amount": t.Amount.String(), "network": string(c.Crypto.Network),
		"tx_hash": t.TxHash})
	p.addEvent(EventDetected, data, now)
	// Late funds pay nothing while they confirm: no payment.processing;
	// they are told once confirmed (unpaid).
	p.Events[len(p.Events)-1].Unannounced = late
}

// KeptConfirmations is how many of a transfer's n confirmations the
// checkout keeps: at most the required count, which is all anything
// decides on (events, counting, the confirmations a checkout shows). Past
// it a block changes nothing, so the checkouts paid in the last week,
// followed for late funds, are not written again at every block.
func (c *Checkout) KeptConfirmations(n int) int {
	if c.Required > 0 {
		return min(n, c.Required)
	}
	return n
}

// reportConfirmations appends one confirmation event per new confirmation
// of each transfer sent on time, up to Required.
func (c *Checkout) reportConfirmations(p *Payment, now time.Time) Outcome {
	var o Outcome
	for i := range c.Transfers {
		st := &c.Transfers[i]
		if st.Late || !c.inCoin(*st) {
			continue
		}
		for n := st.Reported + 1; n <= min(st.Confirmations, c.Required); n++ {
			data, _ := json.Marshal(map[string]int{"current": n, "required": c.Required})
			p.addEvent(EventConfirmation, data, now)
			st.Reported, o.Changed = n, true
		}
	}
	return o
}

// Confirmations is the checkout's {current, required}: the least
// confirmed transfer still being waited for, Required once all are
// counted, 0 before anything arrived.
func (c *Checkout) Confirmations() (current, required int) {
	current = -1
	for _, st := range c.Transfers {
		if !st.Counted && !st.Late && !st.Gone && c.inCoin(st) && (current < 0 || st.Confirmations < current) {
			current = min(st.Confirmations, c.Required)
		}
	}
	if current >= 0 {
		return current, c.Required
	}
	for _, st := range c.Transfers {
		if st.Counted && !st.Late && c.inCoin(st) {
			return c.Required, c.Required
		}
	}
	return 0, c.Required
}

// count counts every transfer that reached Required, settles and judges
// the payment on what arrived on time, then tells the business of each
// transfer that pays nothing (another coin, or sent late; see unpaid).
// Judging first makes the history the same whether such a transfer
// confirms in the run that pays the payment or in a later one.
func (c *Checkout) count(p *Payment, explorer func(string) string, now time.Time) Outcome {
	o := Outcome{Counted: money.CoinAmount{Asset: c.Crypto.Asset, Units: new(big.Int)}}
	var extra []SeenTransfer
	paid := false
	for i := range c.Transfers {
		st := &c.Transfers[i]
		if st.Counted || st.Gone || st.Confirmations < c.Required {
			continue
		}
		st.Counted, o.Changed = true, true
		switch {
		case !c.inCoin(*st):
			o.Foreign = append(o.Foreign, st.Amount)
			extra = append(extra, *st)
			continue
		case st.Late:
			extra = append(extra, *st)
		}
		o.Counted = o.Counted.Add(st.Amount)
		paid = true
	}
	if paid {
		if c.current(p) {
			c.settle(p, explorer, now)
		}
		c.judge(p, now)
	} else {
		o.Counted = money.CoinAmount{}
	}
	for _, st := range extra {
		reason := ReviewLatePayment
		if !c.inCoin(st) {
			reason = ReviewWrongAsset
		}
		c.unpaid(p, reason, st, now)
	}
	return o
}

// unpaid tells of a confirmed transfer into the deposit that pays nothing,
// for reason (late, or in another coin): the funds are in the business's
// wallet all the same. A payment still waiting for its money goes to
// needs_review; one that succeeded or is in review already keeps its
// status and records a funds_received entry, so that no transfer into the
// wallet goes untold.
func (c *Checkout) unpaid(p *Payment, reason string, st SeenTransfer, now time.Time) {
	c.ReviewReason = reason
	if p.review(reason, st.TxHash, now) {
		return
	}
	data, _ := json.Marshal(map[string]string{"amount": st.Amount.String(), "asset": string(st.Amount.Asset),
		"network": string(c.Crypto.Network), "tx_hash": st.TxHash, "reason": reason})
	p.addEvent(EventFundsReceived, data, now)
}

// received sums the counted transfers, those sent on time or all.
func (c *Checkout) received(onTimeOnly bool) money.CoinAmount {
	sum := money.CoinAmount{Asset: c.Crypto.Asset, Units: new(big.Int)}
	for _, st := range c.Transfers {
		if st.Counted && (!onTimeOnly || !st.Late) && c.inCoin(st) {
			sum = sum.Add(st.Amount)
		}
	}
	return sum
}

// Sent sums every transfer in the quoted coin seen, confirmed or not.
func (c *Checkout) Sent() money.CoinAmount {
	sum := money.CoinAmount{Asset: c.Crypto.Asset, Units: new(big.Int)}
	for _, st := range c.Transfers {
		if c.inCoin(st) && !st.Gone {
			sum = sum.Add(st.Amount)
		}
	}
	return sum
}

// LastSent is the most recently seen transfer in the quoted coin, and
// false before any.
func (c *Checkout) LastSent() (SeenTransfer, bool) {
	for i := len(c.Transfers) - 1; i >= 0; i-- {
		if c.inCoin(c.Transfers[i]) && !c.Transfers[i].Gone {
			return c.Transfers[i], true
		}
	}
	return SeenTransfer{}, false
}

// waiting reports whether a transfer sent on time is still unconfirmed.
func (c *Checkout) waiting() bool {
	for _, st := range c.Transfers {
		if !st.Counted && !st.Late && !st.Gone && c.inCoin(st) {
			return true
		}
	}
	return false
}

// current reports whether c is the payment's current checkout. Only it
// speaks for the payment's method, settlement and amount_received: late
// funds on an earlier checkout (replaced, or in another coin) are counted
// into the holdings and reviewed, but never overwrite what the current one
// settled.
func (c *Checkout) current(p *Payment) bool { return p.CheckoutID == c.ID }

// settle writes what was counted onto the payment: method amount,
// amount_received and the settlement into the wallet.
func (c *Checkout) settle(p *Payment, explorer func(string) string, now time.Time) {
	q, all := c.Crypto, c.received(false)
	total := q.PriorAmount.Add(all)
	last := c.lastCounted()
	if p.Method != nil {
		p.Method.Amount = total.String()
		if c.Card != nil {
			// What the card paid is the coin's worth before the fee.
			p.Method.Amount = total.Add(c.Card.Gross.Sub(q.Amount)).String()
		}
		if over := total.Sub(q.PriorAmount.Add(q.Amount)); over.Sign() > 0 {
			p.Method.OverpaidAmount = over.String()
		}
	}
	p.AmountReceived = c.PriorReceived + c.share(all)
	p.Settlement = &Settlement{Destination: "wallet", Asset: q.Asset, Network: q.Network, Amount: total.String(),
		WalletID: q.WalletID, Address: q.Deposit.Address, TxHash: last.TxHash, ExplorerURL: explorer(last.TxHash)}
	p.UpdatedAt = now
}

// lastCounted is the most recently seen counted transfer.
func (c *Checkout) lastCounted() SeenTransfer {
	var last SeenTransfer
	for _, st := range c.Transfers {
		if st.Counted && c.inCoin(st) {
			last = st
		}
	}
	return last
}

// share is the part of the checkout's total (breakdown.total: the price
// it collects, plus the fee passed on to the customer, as a card checkout
// may carry; a crypto one carries none) that coin arrived covers, in minor
// units, rounded down so that what a payment shows as received never
// exceeds what arrived; all of it once the quoted amount arrived.
func (c *Checkout) share(coin money.CoinAmount) int64 {
	collects := c.Breakdown.Total
	if coin.Cmp(c.Crypto.Amount) >= 0 {
		return collects
	}
	n := new(big.Int).Mul(big.NewInt(collects), coin.Units)
	return n.Quo(n, c.Crypto.Amount.Units).Int64()
}

// judge decides the payment's status from what arrived on time: succeeded
// once the quoted amount is in, underpaid once nothing sent on time is
// still unconfirmed and it falls short. A payment already in review (a
// wrong coin, or late funds on an earlier checkout, came first) still
// succeeds when this checkout is paid in full on time; short, it stays in
// review and the checkout's quote runs out as an underpaid one's does.
func (c *Checkout) judge(p *Payment, now time.Time) {
	onTime := c.received(true)
	full := onTime.Cmp(c.Crypto.Amount) >= 0
	payable := p.Status == PaymentPending || p.Status == PaymentUnderpaid ||
		(p.Status == PaymentNeedsReview && c.Active())
	switch {
	case full && payable:
		p.Status, p.ConfirmedAt = PaymentSucceeded, &now
		p.settleFee()
		p.addEvent(EventSucceeded, nil, now)
		c.Status = CheckoutCompleted
		c.stop(now)
	case full || c.waiting() || onTime.IsZero():
	case p.Status == PaymentPending || p.Status == PaymentUnderpaid:
		p.Status = PaymentUnderpaid
		data, _ := json.Marshal(map[string]string{"expected": c.Crypto.PriorAmount.Add(c.Crypto.Amount).String(),
			"received": c.Crypto.PriorAmount.Add(onTime).String()})
		p.addEvent(EventUnderpaid, data, now)
		if c.Active() {
			c.Status = CheckoutUnderpaid
		}
	case p.Status == PaymentNeedsReview && c.Active():
		c.Status = CheckoutUnderpaid
	}
}

// Expire ends the checkout once its quote is over with nothing on its way
// (spec 3): an open one expires, and so does a link's payment, which
// exists only for it, or any payment past its expires_at; an underpaid one
// expires and its payment, still underpaid, records expired, after which
// the business may request the remainder. A checkout with a transfer sent
// in time but unconfirmed waits for it.
func (c *Checkout) Expire(p *Payment, now time.Time) Outcome {
	paymentOver := p.ExpiresAt != nil && !now.Before(*p.ExpiresAt)
	quoteOver := !now.Before(c.ExpiresAt)
	if c.Card.InProgress() && now.Before(c.ExpiresAt.Add(CardHold)) {
		// The customer may be paying on the provider's page: held, so
		// that a charge finds its checkout open (CardHold).
		return Outcome{}
	}
	switch {
	case c.Status == CheckoutOpen && (quoteOver || paymentOver):
		c.Status = CheckoutExpired
		c.stop(now)
		if p.Status == PaymentPending && p.CheckoutID == c.ID && (p.LinkID != "" || paymentOver) {
			p.Status = PaymentExpired
			p.addEvent(EventExpired, nil, now)
		}
		return Outcome{Changed: true}
	case c.Status == CheckoutUnderpaid && quoteOver:
		c.Status = CheckoutExpired
		c.stop(now)
		if p.Status == PaymentUnderpaid && p.CheckoutID == c.ID {
			p.addEvent(EventExpired, nil, now)
		}
		return Outcome{Changed: true}
	}
	return Outcome{}
}
