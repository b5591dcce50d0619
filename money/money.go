// Package money holds payd's exact arithmetic: price currencies, coins and
// networks, exact decimal rates, conversion to US cents and coin amounts,
// and fees. Nothing here uses floating point.
//
// Every conversion rounds once, with Round, from an exact big.Rat; see
// docs/money.md for the units of each amount and worked examples.
package money

import (
	"math/big"
	"strings"
)

// Currency is a price currency. Every supported currency has two minor digits.
type Currency string

// The price currencies of the specification.
const (
	USD Currency = "USD"
	EUR Currency = "EUR"
	GBP Currency = "GBP"
	CAD Currency = "CAD"
	AUD Currency = "AUD"
)

// Currencies lists the price currencies in a stable order.
var Currencies = []Currency{USD, EUR, GBP, CAD, AUD}

// Valid reports whether c is a supported currency.
func (c Currency) Valid() bool {
	for _, x := range Currencies {
		if x == c {
			return true
		}
	}
	return false
}

// ParseCurrency returns the currency spelled exactly s. Case matters because
// the wire format spells codes in capitals and a lenient parse would let two
// spellings of one currency reach the database.
func ParseCurrency(s string) (Currency, bool) {
	if c := Currency(s); c.Valid() {
		return c, true
	}
	return "", false
}

// MinorDigits is how many decimal digits the currency's minor unit has: a
// price of 1234 with two minor digits reads 12.34. It is 2 for every
// supported currency and 0 for an unknown one, so a bad code never silently
// scales an amount.
func (c Currency) MinorDigits() int {
	if c.Valid() {
		return 2
	}
	return 0
}

// Format prints an amount in the currency's minor units as a plain decimal
// with exactly MinorDigits decimals ("0.92", "1000000.00"), for messages and
// pages; the API itself carries integers.
func (c Currency) Format(minor int64) string {
	d := c.MinorDigits()
	return formatUnits(big.NewInt(minor), d, d)
}

// formatUnits prints u, counted in units of 10^-digits, as a decimal. It keeps
// at least keep decimals and drops further trailing zeros, so no unit is
// ever lost and nothing is padded beyond what the caller asked for.
func formatUnits(u *big.Int, digits, keep int) string {
	s := new(big.Int).Abs(u).String()
	if len(s) <= digits {
		s = strings.Repeat("0", digits-len(s)+1) + s
	}
	whole, frac := s[:len(s)-digits], s[len(s)-digits:]
	for len(frac) > keep && frac[len(frac)-1] == '0' {
		frac = frac[:len(frac)-1]
	}
	if u.Sign() < 0 {
		whole = "-" + whole
	}
	if frac == "" {
		return whole
	}
	return whole + "." + frac
}
