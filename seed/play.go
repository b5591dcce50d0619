package seed

import (
	"math/big"
	"slices"
	"time"

	"payd"
	"payd/money"
)

// play takes a new pending payment to outcome o, appending the events a
// real payment would have on the way. A history that would reach past Now
// (a payment made minutes ago) leaves the payment pending instead.
func (g *gen) play(b *business, p *payd.Payment, o outcome) error {
	start := *p
	start.Events = slices.Clone(p.Events)
	err := g.playTo(b, p, o)
	if err == nil && p.UpdatedAt.After(g.cfg.Now) {
		*p = start
		err = g.pending(b, p)
	}
	return err
}

// playTo is play without the check against Now.
func (g *gen) playTo(b *business, p *payd.Payment, o outcome) error {
	switch o {
	case outSucceeded:
		if g.chance(0.25) {
			return g.card(b, p)
		}
		return g.succeed(b, p)
	case outExpired:
		return g.expire(b, p)
	case outCanceled:
		_, err := p.Cancel(p.CreatedAt.Add(g.between(10*time.Minute, 5*24*time.Hour)))
		return err
	case outUnderpaid:
		return g.underpay(b, p)
	case outReview:
		return g.overpay(b, p)
	}
	return g.pending(b, p)
}

// pending leaves p open: untouched, with a checkout opened, or (made in
// the last hour) with a transfer on its way.
func (g *gen) pending(b *business, p *payd.Payment) error {
	recent := p.CreatedAt.After(g.cfg.Now.Add(-time.Hour))
	switch {
	case recent && g.chance(0.3):
		at, rt := g.selectCrypto(p)
		_, last, err := g.send(b, p, rt, at, 100, g.r.IntN(Confirmations[rt.network]))
		if err != nil {
			return err
		}
		p.Settlement = nil
		p.UpdatedAt = last
	case recent && g.chance(0.4), !recent && g.chance(0.1):
		g.selectCrypto(p)
	}
	// The seed writes no checkout rows: an open payment that named one
	// would send the expirer looking for it at every pass once due.
	p.CheckoutID = ""
	return nil
}

// expire ends p unpaid: at its expires_at, or a quote window after the
// customer opened a checkout and left.
func (g *gen) expire(b *business, p *payd.Payment) error {
	at := p.CreatedAt.Add(g.between(15*time.Minute, time.Hour))
	if p.ExpiresAt != nil {
		at = *p.ExpiresAt
	}
	if g.chance(0.5) {
		g.selectCrypto(p)
	}
	p.Status = payd.PaymentExpired
	event(p, payd.EventExpired, nil, at)
	return nil
}

// selectCrypto records that the customer chose a coin, and returns when.
func (g *gen) selectCrypto(p *payd.Payment) (time.Time, route) {
	rt := routes[g.weighted(routeWeights)]
	at := p.CreatedAt.Add(g.between(5*time.Second, 10*time.Minute))
	p.CheckoutID = g.id(payd.PrefixCheckout, at)
	event(p, payd.EventMethodSelected, map[string]string{"rail": string(payd.RailCrypto),
		"asset": string(rt.asset), "network": string(rt.network)}, at)
	return at, rt
}

// send plays a transfer of pct percent of what p asks for in coins of rt,
// detected after at and confirmed confs times (all that are required when
// confs is negative). It fills method and settlement and returns the
// amount received in the price currency and when the last event happened.
func (g *gen) send(b *business, p *payd.Payment, rt route, at time.Time, pct int64, confs int) (int64, time.Time, error) {
	total := p.Reporting.AmountUSD + p.Reporting.CustomerFeeUSD
	expected, err := money.CoinFromUSDCents(total, rt.asset, g.rates.Coins[rt.asset])
	if err != nil {
		return 0, at, err
	}
	units := new(big.Int).Mul(expected.Units, big.NewInt(pct))
	received := money.CoinAmount{Asset: rt.asset, Units: units.Quo(units, big.NewInt(100))}
	hash := txHash(g.r, rt.network)
	at = at.Add(g.between(20*time.Second, 15*time.Minute))
	event(p, payd.EventDetected, map[string]string{"amount": received.String(), "network": string(rt.network),
		"tx_hash": hash}, at)
	required := Confirmations[rt.network]
	if confs < 0 {
		confs = required
	}
	for k := 1; k <= confs; k++ {
		at = at.Add(blockTime[rt.network] + g.between(0, blockTime[rt.network]))
		event(p, payd.EventConfirmation, map[string]int{"current": k, "required": required}, at)
	}
	g.fill(b, p, rt, expected, received, hash)
	return (p.Amount + p.CustomerFee) * pct / 100, at, nil
}

// fill writes what a crypto transfer shows on the payment.
func (g *gen) fill(b *business, p *payd.Payment, rt route, expected, received money.CoinAmount, hash string) {
	url := explorerURL(rt.network, hash)
	p.Method = &payd.Method{Rail: payd.RailCrypto, Asset: rt.asset, Network: rt.network, Amount: received.String(),
		ExpectedAmount: expected.String(), FromAddress: address(g.r, rt.network), TxHash: hash, ExplorerURL: url}
	if received.Cmp(expected) > 0 {
		p.Method.OverpaidAmount = received.Sub(expected).String()
	}
	p.Settlement = &payd.Settlement{Destination: "wallet", Asset: rt.asset, Network: rt.network,
		Amount: received.String(), WalletID: b.walletID, Address: address(g.r, rt.network), TxHash: hash, ExplorerURL: url}
}

// succeed plays a crypto payment of exactly the amount asked for.
func (g *gen) succeed(b *business, p *payd.Payment) error {
	at, rt := g.selectCrypto(p)
	received, last, err := g.send(b, p, rt, at, 100, -1)
	if err != nil {
		return err
	}
	p.AmountReceived, p.ConfirmedAt, p.Status = received, &last, payd.PaymentSucceeded
	settle(p)
	event(p, payd.EventSucceeded, nil, last)
	return nil
}

// settle shows the fee of a succeeded payment the way payd.Payment.Accept
// does (spec 2.11 rule 5): on the US value at fee_rate_bps, the customer's
// share already in CustomerFeeUSD.
func settle(p *payd.Payment) {
	fee := money.Fee(p.Reporting.AmountUSD, p.FeeRateBps)
	r := &p.Reporting
	r.FeeUSD = &fee
	r.TransactionFeeUSD = fee - r.CustomerFeeUSD
	r.NetUSD = r.AmountUSD + r.CustomerFeeUSD - fee
}

// underpay plays a transfer of 40–97 % of the amount; afterwards the
// business accepts about one in four as it stands and asks for the rest of
// about one in ten.
func (g *gen) underpay(b *business, p *payd.Payment) error {
	at, rt := g.selectCrypto(p)
	pct := int64(40 + g.r.IntN(58))
	received, last, err := g.send(b, p, rt, at, pct, -1)
	if err != nil {
		return err
	}
	p.AmountReceived, p.ConfirmedAt, p.Status = received, &last, payd.PaymentUnderpaid
	event(p, payd.EventUnderpaid, map[string]string{"expected": p.Method.ExpectedAmount,
		"received": p.Method.Amount}, last)
	later := last.Add(g.between(15*time.Minute, 3*24*time.Hour))
	switch {
	case g.chance(0.25):
		return p.Accept(later)
	case g.chance(0.13):
		event(p, payd.EventExpired, nil, last.Add(g.between(time.Minute, 15*time.Minute)))
		p.CheckoutID = g.id(payd.PrefixCheckout, later)
		event(p, payd.EventRemainderRequested, map[string]any{"checkout_id": p.CheckoutID,
			"amount": p.Amount + p.CustomerFee - p.AmountReceived, "currency": p.Currency}, later)
	}
	return nil
}

// overpay plays a transfer of 120–250 % of the amount, which waits for
// the business's review; about a third are accepted.
func (g *gen) overpay(b *business, p *payd.Payment) error {
	at, rt := g.selectCrypto(p)
	received, last, err := g.send(b, p, rt, at, int64(120+g.r.IntN(131)), -1)
	if err != nil {
		return err
	}
	p.AmountReceived, p.ConfirmedAt, p.Status = received, &last, payd.PaymentNeedsReview
	if g.chance(0.33) {
		return p.Accept(last.Add(g.between(time.Hour, 2*24*time.Hour)))
	}
	return nil
}

// cardRoutes are the coins the card provider delivers card payments in.
var cardRoutes = []route{{money.USDC, money.Polygon, 70}, {money.USDT, money.Tron, 20}, {money.USDC, money.Solana, 10}}

// card plays a card payment: the provider charges the card, takes the
// 300 bps fee (the customer's share on top when the customer pays fees)
// and delivers the rest to the wallet as a stablecoin.
func (g *gen) card(b *business, p *payd.Payment) error {
	rt := cardRoutes[g.weighted([]int{70, 20, 10})]
	split, err := money.SplitFee(p.Amount, p.Currency, g.rates.Fiat[p.Currency], cardFeeBps, p.FeePayer)
	if err != nil {
		return err
	}
	p.FeeRateBps, p.CustomerFee, p.Reporting.CustomerFeeUSD = cardFeeBps, split.CustomerFee, split.CustomerFeeUSD
	at := p.CreatedAt.Add(g.between(5*time.Second, 10*time.Minute))
	p.CheckoutID = g.id(payd.PrefixCheckout, at)
	event(p, payd.EventMethodSelected, map[string]string{"rail": string(payd.RailCard),
		"asset": string(rt.asset), "network": string(rt.network)}, at)
	charged, err := money.CoinFromUSDCents(p.Reporting.AmountUSD+split.CustomerFeeUSD, rt.asset, 100)
	if err != nil {
		return err
	}
	net, err := money.CoinFromUSDCents(p.Reporting.AmountUSD+split.CustomerFeeUSD-split.FeeUSD, rt.asset, 100)
	if err != nil {
		return err
	}
	hash := txHash(g.r, rt.network)
	url := explorerURL(rt.network, hash)
	p.Method = &payd.Method{Rail: payd.RailCard, Asset: rt.asset, Network: rt.network, Amount: charged.String(),
		ExpectedAmount: charged.String(), FromAddress: g.provider[rt.network], TxHash: hash, ExplorerURL: url}
	p.Settlement = &payd.Settlement{Destination: "wallet", Asset: rt.asset, Network: rt.network, Amount: net.String(),
		WalletID: b.walletID, Address: address(g.r, rt.network), TxHash: hash, ExplorerURL: url}
	done := at.Add(g.between(40*time.Second, 6*time.Minute))
	p.AmountReceived, p.ConfirmedAt, p.Status = p.Amount+p.CustomerFee, &done, payd.PaymentSucceeded
	settle(p)
	event(p, payd.EventSucceeded, nil, done)
	return nil
}

// cardFeeBps is the card rail's fee rate (spec 2.11 rule 5).
const cardFeeBps = 300
