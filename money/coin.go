package money

import (
	"fmt"
	"math/big"
	"strings"
)

// CoinAmount is an amount of a coin counted in its on-chain base units
// (satoshi, wei, lamports, token units). Base units rather than display
// units because what arrives on chain may be finer than a quote, and an
// underpayment of one wei must still be visible. Units is a big.Int because
// wei overflow int64 at about 9.2 ETH.
//
// Methods never modify Units in place, so amounts may share a big.Int; a
// nil Units reads as zero, which makes the zero CoinAmount usable.
type CoinAmount struct {
	Asset Asset
	Units *big.Int
}

// NewCoinAmount returns units base units of a, a shorthand for amounts that
// fit an int64 (any satoshi, lamport or token amount; wei only up to ~9 ETH).
func NewCoinAmount(a Asset, units int64) CoinAmount {
	return CoinAmount{Asset: a, Units: big.NewInt(units)}
}

// maxWholeDigits bounds the whole part ParseCoinAmount accepts. 10^20 coins
// is far beyond any supply, and the bound keeps a hostile string from
// costing big-number work.
const maxWholeDigits = 20

// ParseCoinAmount parses a plain decimal amount of a ("0.015", "12.50") into
// base units. It accepts up to a.BaseDecimals() decimals and refuses signs,
// exponents, spaces, leading zeros ("01"), an empty whole or fractional part
// (".5", "5.") and more than 20 whole digits, because an amount a person or
// a node sends must mean exactly one number.
func ParseCoinAmount(a Asset, s string) (CoinAmount, error) {
	if !a.Valid() {
		return CoinAmount{}, fmt.Errorf("money: unknown asset %q", a)
	}
	whole, frac, dot := strings.Cut(s, ".")
	base := a.BaseDecimals()
	if !plainDigits(whole, maxWholeDigits) || (whole[0] == '0' && len(whole) > 1) ||
		(dot && !plainDigits(frac, base)) {
		return CoinAmount{}, fmt.Errorf("money: %q is not a %s amount with at most %d decimals", s, a, base)
	}
	u, _ := new(big.Int).SetString(whole+frac+strings.Repeat("0", base-len(frac)), 10)
	return CoinAmount{Asset: a, Units: u}, nil
}

// plainDigits reports whether s is 1 to max ASCII digits.
func plainDigits(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// String prints the amount as a fixed-decimal string: exactly the coin's
// display Decimals when the units are a whole multiple of them ("12.50"
// USDC), otherwise as many more decimals as needed, up to BaseDecimals, to
// show every base unit ("12.500001"). Nothing is ever rounded away.
func (c CoinAmount) String() string {
	return formatUnits(c.units(), c.Asset.BaseDecimals(), c.Asset.Decimals())
}

// units returns Units, or zero when it is nil.
func (c CoinAmount) units() *big.Int {
	if c.Units == nil {
		return new(big.Int)
	}
	return c.Units
}

// Add returns c + o. Adding different coins is a programming error, not bad
// input, so it panics rather than produce a meaningless number.
func (c CoinAmount) Add(o CoinAmount) CoinAmount {
	c.mustMatch(o)
	return CoinAmount{Asset: c.Asset, Units: new(big.Int).Add(c.units(), o.units())}
}

// Sub returns c - o, which may be negative (an underpayment's shortfall). It
// panics for different coins, like Add.
func (c CoinAmount) Sub(o CoinAmount) CoinAmount {
	c.mustMatch(o)
	return CoinAmount{Asset: c.Asset, Units: new(big.Int).Sub(c.units(), o.units())}
}

// Cmp compares c and o: -1 if c < o, 0 if equal, +1 if c > o. It panics for
// different coins, like Add.
func (c CoinAmount) Cmp(o CoinAmount) int {
	c.mustMatch(o)
	return c.units().Cmp(o.units())
}

// IsZero reports whether the amount is zero.
func (c CoinAmount) IsZero() bool { return c.units().Sign() == 0 }

// Sign returns -1, 0 or +1 as the amount is negative, zero or positive.
func (c CoinAmount) Sign() int { return c.units().Sign() }

// mustMatch panics unless o is an amount of the same coin as c.
func (c CoinAmount) mustMatch(o CoinAmount) {
	if c.Asset != o.Asset {
		panic(fmt.Sprintf("money: cannot combine %s with %s", c.Asset, o.Asset))
	}
}
