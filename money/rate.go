package money

import (
	"fmt"
	"math/big"
	"regexp"
)

// Rate is an exact non-negative decimal, such as a currency's US dollars per
// unit ("1.0842"). It is parsed from and printed as a decimal string, never a
// float.
type Rate struct{ r *big.Rat }

var decimalRe = regexp.MustCompile(`^(0|[1-9][0-9]{0,17})(\.[0-9]{1,18})?$`)

// ParseRate parses a plain decimal string ("1", "0.92", "64123.5").
// Signs, exponents, spaces and more than 18 digits on either side are refused.
func ParseRate(s string) (Rate, error) {
	if !decimalRe.MatchString(s) {
		return Rate{}, fmt.Errorf("money: %q is not a plain decimal", s)
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return Rate{}, fmt.Errorf("money: %q is not a plain decimal", s)
	}
	return Rate{r}, nil
}

// MustRate is ParseRate for constants; it panics on a malformed string.
func MustRate(s string) Rate {
	r, err := ParseRate(s)
	if err != nil {
		panic(err)
	}
	return r
}

// Rat returns a copy of the rate as a big.Rat.
func (x Rate) Rat() *big.Rat {
	if x.r == nil {
		return new(big.Rat)
	}
	return new(big.Rat).Set(x.r)
}

// IsZero reports whether the rate is zero (or unset).
func (x Rate) IsZero() bool { return x.r == nil || x.r.Sign() == 0 }

// String prints the rate as a plain decimal with no trailing zeros.
func (x Rate) String() string {
	if x.r == nil {
		return "0"
	}
	s := x.r.FloatString(18)
	for len(s) > 0 && s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	if s[len(s)-1] == '.' {
		s = s[:len(s)-1]
	}
	return s
}
