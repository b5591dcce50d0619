package money

import (
	"errors"
	"math/big"
)

// Round returns the integer nearest to x, taking a tie (an exact half) away
// from zero: 2.5 becomes 3 and -2.5 becomes -3.
//
// Every "rounded to the nearest" of the specification goes through here.
// Half away from zero is what a person means by "nearest cent" and what a
// receipt checked by hand shows; banker's rounding (half to even) would make
// 0.125 EUR of fee round to 0.12 and disagree with that check. Because the
// rule is symmetric, a refund or a negative difference rounds to the mirror
// image of the positive amount. Round never changes x.
func Round(x *big.Rat) *big.Int {
	num, den := x.Num(), x.Denom() // den > 0 always
	q, r := new(big.Int).QuoRem(new(big.Int).Abs(num), den, new(big.Int))
	if r.Lsh(r, 1).Cmp(den) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if num.Sign() < 0 {
		q.Neg(q)
	}
	return q
}

// errOverflow is returned when an exact result does not fit the int64 a
// caller stores it in; money never wraps around or saturates silently.
var errOverflow = errors.New("money: result does not fit in 64 bits")

// roundInt64 rounds x to the nearest integer and checks it fits an int64.
func roundInt64(x *big.Rat) (int64, error) {
	n := Round(x)
	if !n.IsInt64() {
		return 0, errOverflow
	}
	return n.Int64(), nil
}

// clampInt64 rounds x to the nearest integer, pinned to the int64 range, for
// the few functions whose callers cannot act on an error and where only
// absurd inputs (far more money than exists) reach the bounds.
func clampInt64(x *big.Rat) int64 {
	n := Round(x)
	switch {
	case n.IsInt64():
		return n.Int64()
	case n.Sign() > 0:
		return 1<<63 - 1
	default:
		return -1 << 63
	}
}

// pow10 returns 10^n as a new big.Int.
func pow10(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// ratOf returns n as a new big.Rat.
func ratOf(n int64) *big.Rat { return new(big.Rat).SetInt64(n) }
