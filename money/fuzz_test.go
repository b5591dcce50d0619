package money

import (
	"math/big"
	"strings"
	"testing"
)

// The fuzz targets check each result against the exact big.Rat value it
// rounds, using the definition of "nearest, half away from zero" rather
// than Round itself, so a bug in Round cannot hide behind its own use.

// assetAt picks a coin by index, with one unknown coin in the cycle so the
// refusal path is fuzzed too.
func assetAt(i uint8) Asset {
	all := append(append([]Asset(nil), Assets...), "DOGE")
	return all[int(i)%len(all)]
}

// fuzzRate builds a rate of n / 10^scale as ParseRate would see it, or
// reports false when that decimal is outside what ParseRate accepts.
func fuzzRate(n uint64, scale uint8) (Rate, bool) {
	r, err := ParseRate(formatUnits(new(big.Int).SetUint64(n), int(scale%19), 0))
	return r, err == nil
}

// checkNearest fails unless got is the integer nearest exact, ties away
// from zero: got - exact lies in (-1/2, 1/2] for exact ≥ 0 and in
// [-1/2, 1/2) below zero.
func checkNearest(t *testing.T, what string, got *big.Int, exact *big.Rat) {
	t.Helper()
	diff := new(big.Rat).Sub(new(big.Rat).SetInt(got), exact)
	half := big.NewRat(1, 2)
	lo, hi := diff.Cmp(new(big.Rat).Neg(half)), diff.Cmp(half)
	if exact.Sign() >= 0 && (lo <= 0 || hi > 0) || exact.Sign() < 0 && (lo < 0 || hi >= 0) {
		t.Fatalf("%s = %s, exact %s: off by %s", what, got, exact.RatString(), diff.RatString())
	}
}

func FuzzSplitFee(f *testing.F) {
	f.Add(int64(10000), uint64(10842), uint8(4), 300, true)
	f.Add(int64(2000), uint64(127), uint8(2), 300, true)
	f.Add(int64(1000), uint64(65), uint8(2), 300, false)
	f.Add(int64(1005), uint64(11), uint8(1), 5000, true)
	f.Add(int64(-1), uint64(1), uint8(0), 300, true)
	f.Add(int64(9223372036854775807), uint64(1), uint8(0), 300, true)
	f.Fuzz(func(t *testing.T, price int64, n uint64, scale uint8, bps int, customer bool) {
		rate, ok := fuzzRate(n, scale)
		if !ok {
			return
		}
		payer := FeePayerBusiness
		if customer {
			payer = FeePayerCustomer
		}
		s, err := SplitFee(price, EUR, rate, bps, payer)
		valid := price >= 0 && bps >= 0 && bps <= MaxFeeBps && !rate.IsZero()
		if err != nil {
			// Only bad input or a number beyond int64 may fail.
			if valid && price <= MaxPrice && rate.Rat().Cmp(big.NewRat(1_000_000, 1)) <= 0 {
				t.Fatalf("SplitFee(%d, %s, %d, %s): %v", price, rate, bps, payer, err)
			}
			return
		}
		if !valid {
			t.Fatalf("SplitFee(%d, %s, %d, %s) accepted bad input", price, rate, bps, payer)
		}
		checkFeeSplit(t, s, price, rate, bps, payer)
	})
}

// checkFeeSplit asserts the invariants of one SplitFee result.
func checkFeeSplit(t *testing.T, s FeeSplit, price int64, rate Rate, bps int, payer FeePayer) {
	t.Helper()
	if s.CustomerFeeUSD+s.BusinessFeeUSD != s.FeeUSD || s.FeeUSD < 0 || s.FeeUSD > s.AmountUSD {
		t.Fatalf("split does not add up: %+v", s)
	}
	if s.Total != price+s.CustomerFee {
		t.Fatalf("total %d != price %d + customer fee %d", s.Total, price, s.CustomerFee)
	}
	if payer == FeePayerBusiness && (s.CustomerFee != 0 || s.CustomerFeeUSD != 0) {
		t.Fatalf("business pays but the customer is charged: %+v", s)
	}
	if payer == FeePayerCustomer && s.BusinessFeeUSD != 0 {
		t.Fatalf("customer pays but the business is charged: %+v", s)
	}
	exactUSD := new(big.Rat).Mul(ratOf(price), rate.Rat())
	checkNearest(t, "AmountUSD", big.NewInt(s.AmountUSD), exactUSD)
	exactFee := new(big.Rat).Mul(ratOf(s.AmountUSD), big.NewRat(int64(bps), MaxFeeBps))
	checkNearest(t, "FeeUSD", big.NewInt(s.FeeUSD), exactFee)
	exactCustomer := new(big.Rat).Quo(ratOf(s.CustomerFeeUSD), rate.Rat())
	checkNearest(t, "CustomerFee", big.NewInt(s.CustomerFee), exactCustomer)
	// A minor unit worth at most a cent converts back without losing one
	// (docs/money.md): CAD, AUD and USD customers see the reported fee.
	if rate.Rat().Cmp(big.NewRat(1, 1)) <= 0 {
		if back, err := ToUSDCents(s.CustomerFee, rate); err != nil || back != s.CustomerFeeUSD {
			t.Fatalf("customer fee %d converts back to %d cents, not %d", s.CustomerFee, back, s.CustomerFeeUSD)
		}
	}
}

func FuzzCoinFromUSDCents(f *testing.F) {
	f.Add(int64(10000), uint8(2), int64(6412350))
	f.Add(int64(10000), uint8(3), int64(345678))
	f.Add(int64(1), uint8(3), int64(2000000))
	f.Add(int64(1234), uint8(0), int64(0))
	f.Add(int64(1), uint8(4), int64(15025))
	f.Add(int64(-1), uint8(2), int64(1))
	f.Add(int64(9223372036854775807), uint8(3), int64(1))
	f.Fuzz(func(t *testing.T, cents int64, ai uint8, price int64) {
		a := assetAt(ai)
		q, err := CoinFromUSDCents(cents, a, price)
		p := usdPrice(a, price)
		if err != nil {
			if a.Valid() && cents >= 0 && p > 0 {
				t.Fatalf("CoinFromUSDCents(%d, %s, %d): %v", cents, a, price, err)
			}
			return
		}
		if !a.Valid() || cents < 0 || p <= 0 || q.Asset != a {
			t.Fatalf("CoinFromUSDCents(%d, %s, %d) = %s %s for bad input", cents, a, price, q.Asset, q)
		}
		step := pow10(a.BaseDecimals() - a.Decimals())
		display, rem := new(big.Int).QuoRem(q.Units, step, new(big.Int))
		if rem.Sign() != 0 {
			t.Fatalf("quote %s is finer than %d decimals", q, a.Decimals())
		}
		exact := new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(cents), pow10(a.Decimals())), big.NewInt(p))
		checkNearest(t, "quote in display units", display, exact)
		back, err := ParseCoinAmount(a, q.String())
		if err != nil || back.Cmp(q) != 0 {
			t.Fatalf("quote %s does not parse back: %v", q, err)
		}
		if a.Stable() && CoinToUSDCents(q, price) != cents {
			t.Fatalf("%d cents of %s came back as %d cents", cents, a, CoinToUSDCents(q, price))
		}
	})
}

func FuzzParseCoinAmount(f *testing.F) {
	for _, s := range []string{"12.5", "0", "0.000000000000000001", "1.", ".5", "01", "-1", "1e5",
		"99999999999999999999", "12.500001", " 1", "1.2.3", "\uff11"} {
		f.Add(uint8(0), s)
		f.Add(uint8(3), s)
	}
	f.Fuzz(func(t *testing.T, ai uint8, s string) {
		a := assetAt(ai)
		c, err := ParseCoinAmount(a, s)
		if err != nil {
			return
		}
		if strings.Trim(s, "0123456789.") != "" || strings.Count(s, ".") > 1 {
			t.Fatalf("ParseCoinAmount(%s, %q) accepted a non-plain decimal", a, s)
		}
		exact, ok := new(big.Rat).SetString(s)
		if !ok || new(big.Rat).Mul(exact, new(big.Rat).SetInt(pow10(a.BaseDecimals()))).Cmp(new(big.Rat).SetInt(c.Units)) != 0 {
			t.Fatalf("ParseCoinAmount(%s, %q) = %s units, want %s", a, s, c.Units, exact.RatString())
		}
		out := c.String()
		back, err := ParseCoinAmount(a, out)
		if err != nil || back.Cmp(c) != 0 || back.String() != out {
			t.Fatalf("%q printed as %q, which reads back as %v (%v)", s, out, back.Units, err)
		}
		if _, frac, _ := strings.Cut(out, "."); len(frac) < a.Decimals() || len(frac) > a.BaseDecimals() {
			t.Fatalf("%q printed with %d decimals", out, len(frac))
		}
	})
}

func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"1", "0", "0.92", "1.50", "64123.5", "0.000000000000000001",
		"999999999999999999.999999999999999999", "01", "1.", ".1", "-1", "1e3", " 1", "1/2", "0x1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRate(s)
		if err != nil {
			return
		}
		exact, ok := new(big.Rat).SetString(s)
		if !ok || r.Rat().Cmp(exact) != 0 || exact.Sign() < 0 {
			t.Fatalf("ParseRate(%q) = %s, want %v", s, r, exact)
		}
		out := r.String()
		back, err := ParseRate(out)
		if err != nil || back.Rat().Cmp(exact) != 0 || back.String() != out {
			t.Fatalf("%q printed as %q, which reads back as %s (%v)", s, out, back, err)
		}
	})
}
