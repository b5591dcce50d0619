package money

import (
	"fmt"
	"math/big"
)

// MaxFeeBps is the largest fee rate, 100%. A larger one would take more than
// the payment and is a configuration mistake.
const MaxFeeBps = 10_000

// Fee is the fee on usdCents at bps hundredths of a percent (spec 2.11 rule
// 5: 0 for crypto, 300 for card), rounded once to the nearest cent. It is
// computed on the US-dollar value so every currency pays the same fee for
// the same value. bps is expected within 0..MaxFeeBps; SplitFee checks it.
func Fee(usdCents int64, bps int) int64 {
	x := new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(usdCents), big.NewInt(int64(bps))), big.NewInt(MaxFeeBps))
	return clampInt64(x)
}

// FeePayer says who carries a payment's fee (the payment's fee_payer).
type FeePayer string

// The fee payers. The business is the default: the customer pays the price
// and the fee comes out of what the business receives.
const (
	FeePayerBusiness FeePayer = "business"
	FeePayerCustomer FeePayer = "customer"
)

// Valid reports whether p is a known fee payer.
func (p FeePayer) Valid() bool { return p == FeePayerBusiness || p == FeePayerCustomer }

// FeeSplit is who carries how much of one payment's fee. The US-cent fields
// feed the payment's reporting object; CustomerFee and Total are what the
// customer is asked for, in the price currency. CustomerFeeUSD +
// BusinessFeeUSD == FeeUSD always.
type FeeSplit struct {
	// AmountUSD is the price's US value (rule 4), the base the fee is on.
	AmountUSD int64
	// FeeUSD is the whole fee in US cents (rule 5).
	FeeUSD int64
	// CustomerFeeUSD is the part of FeeUSD the customer carries: all of it
	// when the customer pays, else 0.
	CustomerFeeUSD int64
	// BusinessFeeUSD is the part of FeeUSD taken from the business.
	BusinessFeeUSD int64
	// CustomerFee is CustomerFeeUSD converted to minor units of the price
	// currency (rule 6): the payment's customer_fee and the breakdown's
	// processing_fee.
	CustomerFee int64
	// Total is price + CustomerFee, the amount the customer is charged.
	Total int64
}

// SplitFee works out the fee on a price of amount minor units of c, worth
// usdRate US dollars per unit, at bps, carried by payer.
//
// The fee is bps of the price's US value, never of the total: a fee the
// customer carries is not itself charged a fee, so the business nets the
// price's value exactly (AmountUSD + CustomerFeeUSD - FeeUSD == AmountUSD).
// The customer's share is that same US-cent fee converted once into the
// price currency (rule 6); see docs/money.md for why its re-conversion to
// US cents is not what reporting shows.
func SplitFee(price int64, c Currency, usdRate Rate, bps int, payer FeePayer) (FeeSplit, error) {
	if err := checkSplit(price, c, usdRate, bps, payer); err != nil {
		return FeeSplit{}, err
	}
	usd, err := ToUSDCents(price, usdRate)
	if err != nil {
		return FeeSplit{}, err
	}
	f := FeeSplit{AmountUSD: usd, FeeUSD: Fee(usd, bps), Total: price}
	if payer == FeePayerBusiness {
		f.BusinessFeeUSD = f.FeeUSD
		return f, nil
	}
	f.CustomerFeeUSD = f.FeeUSD
	if f.CustomerFee, err = FromUSDCents(f.FeeUSD, usdRate); err != nil {
		return FeeSplit{}, err
	}
	if f.Total += f.CustomerFee; f.Total < price {
		return FeeSplit{}, errOverflow
	}
	return f, nil
}

// checkSplit refuses SplitFee inputs that have no meaningful split.
func checkSplit(price int64, c Currency, usdRate Rate, bps int, payer FeePayer) error {
	switch {
	case !c.Valid():
		return fmt.Errorf("money: unknown currency %q", c)
	case usdRate.IsZero():
		return fmt.Errorf("money: no exchange rate for %s", c)
	case price < 0:
		return fmt.Errorf("money: negative price %d", price)
	case bps < 0 || bps > MaxFeeBps:
		return fmt.Errorf("money: fee rate %d bps is outside 0..%d", bps, MaxFeeBps)
	case !payer.Valid():
		return fmt.Errorf("money: unknown fee payer %q", payer)
	}
	return nil
}
