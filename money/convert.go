package money

import (
	"errors"
	"fmt"
	"math/big"
)

// MaxPrice is the largest allowed price, 1,000,000.00 in the price's own
// currency (spec 2.11 rule 2), in minor units. Unlike the minimum it does not
// follow the exchange rate, so a stored price never becomes too large.
const MaxPrice int64 = 100_000_000

// minPriceUSDCents is the smallest allowed US-dollar value of a price.
const minPriceUSDCents = 100

// ErrPriceRange is wrapped by CheckPrice's error when the price itself is
// out of range, so a caller can tell the customer's mistake (a 400 naming
// the amount) from a missing or broken rate (a 500).
var ErrPriceRange = errors.New("money: price out of range")

// ToUSDCents converts a price in minor units to US cents at the currency's
// US dollars per unit (spec 2.11 rule 4): price × usd_rate, rounded once to
// the nearest cent. Both currencies have two minor digits, so minor units
// times the rate are cents. It fails only when the result overflows int64.
func ToUSDCents(amount int64, usdRate Rate) (int64, error) {
	x := new(big.Rat).Mul(ratOf(amount), usdRate.Rat())
	return roundInt64(x)
}

// FromUSDCents converts US cents to minor units of a currency worth usdRate
// US dollars per unit: cents ÷ usd_rate, rounded once to the nearest minor
// unit (spec 2.11 rule 6, and a coin's rate in the price currency). It fails
// for a zero rate, which would mean the currency is worthless, and on
// overflow.
func FromUSDCents(cents int64, usdRate Rate) (int64, error) {
	if usdRate.IsZero() {
		return 0, errors.New("money: cannot convert at a zero rate")
	}
	x := new(big.Rat).Quo(ratOf(cents), usdRate.Rat())
	return roundInt64(x)
}

// FromUSDCentsUp converts US cents to minor units at usdRate rounding up:
// the least amount worth at least cents (a lower limit).
func FromUSDCentsUp(cents int64, usdRate Rate) (int64, error) {
	if usdRate.IsZero() {
		return 0, errors.New("money: cannot convert at a zero rate")
	}
	n := ceil(new(big.Rat).Quo(ratOf(cents), usdRate.Rat()))
	if !n.IsInt64() {
		return 0, errOverflow
	}
	return n.Int64(), nil
}

// FromUSDCentsDown converts US cents to minor units at usdRate rounding
// down: the most amount worth at most cents (an upper limit).
func FromUSDCentsDown(cents int64, usdRate Rate) (int64, error) {
	if usdRate.IsZero() {
		return 0, errors.New("money: cannot convert at a zero rate")
	}
	x := new(big.Rat).Quo(ratOf(cents), usdRate.Rat())
	n := new(big.Int).Quo(x.Num(), x.Denom())
	if !n.IsInt64() {
		return 0, errOverflow
	}
	return n.Int64(), nil
}

// MinPrice is the smallest price in c's minor units whose US-dollar value,
// as ToUSDCents reports it, is at least 1.00 US dollar (spec 2.11 rule 2).
//
// It is defined through ToUSDCents rather than as 1.00 USD converted and
// rounded, so that a price is allowed exactly when its reporting amount
// shows 100 cents or more: no price is refused whose own payment would
// report 1.00 USD. Because ToUSDCents rounds half up, that is the smallest p
// with p × usd_rate ≥ 99.5, that is ⌈99.5 ÷ usd_rate⌉.
func MinPrice(c Currency, usdRate Rate) (int64, error) {
	if !c.Valid() {
		return 0, fmt.Errorf("money: unknown currency %q", c)
	}
	if usdRate.IsZero() {
		return 0, fmt.Errorf("money: no exchange rate for %s", c)
	}
	half := big.NewRat(2*minPriceUSDCents-1, 2)
	x := new(big.Rat).Quo(half, usdRate.Rat())
	n := ceil(x)
	if !n.IsInt64() {
		return 0, errOverflow
	}
	return n.Int64(), nil
}

// CheckPrice reports whether amount, in c's minor units, lies in the allowed
// range at usdRate (spec 2.11 rule 2). An out-of-range price gives an error
// wrapping ErrPriceRange whose message states the range in the currency, fit
// to show the person who typed the price; any other error means the
// currency or rate is unusable.
func CheckPrice(amount int64, c Currency, usdRate Rate) error {
	lo, err := MinPrice(c, usdRate)
	if err != nil {
		return err
	}
	if amount >= lo && amount <= MaxPrice {
		return nil
	}
	if lo > MaxPrice {
		return fmt.Errorf("%w: no %s price is allowed at the current rate: %s %s is worth less than 1.00 USD",
			ErrPriceRange, c, c.Format(MaxPrice), c)
	}
	return fmt.Errorf("%w: amount must be from %d to %d minor units (%s to %s %s, the equivalent of 1.00 USD up to 1000000.00 %s)",
		ErrPriceRange, lo, MaxPrice, c.Format(lo), c.Format(MaxPrice), c, c)
}

// ceil returns the smallest integer not below x.
func ceil(x *big.Rat) *big.Int {
	q, r := new(big.Int).QuoRem(x.Num(), x.Denom(), new(big.Int))
	if r.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	return q
}
