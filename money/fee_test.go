package money

import (
	"math"
	"testing"
)

func TestFee(t *testing.T) {
	tests := []struct {
		cents int64
		bps   int
		want  int64
	}{
		{10000, 300, 300},
		{1234, 300, 37}, // 37.02
		{50, 300, 2},    // 1.5: tie goes up
		{16, 300, 0},    // 0.48
		{17, 300, 1},    // 0.51
		{10000, 0, 0},
		{1, 5000, 1},   // 0.5
		{-50, 300, -2}, // a refund's fee mirrors
		{math.MaxInt64, 10000, math.MaxInt64},
		{math.MaxInt64, 20000, math.MaxInt64}, // pinned, never wrapped
	}
	for _, tt := range tests {
		if got := Fee(tt.cents, tt.bps); got != tt.want {
			t.Errorf("Fee(%d, %d) = %d, want %d", tt.cents, tt.bps, got, tt.want)
		}
	}
}

func TestSplitFee(t *testing.T) {
	tests := []struct {
		name  string
		price int64
		c     Currency
		rate  string
		bps   int
		payer FeePayer
		want  FeeSplit
	}{
		{"business pays", 10000, USD, "1", 300, FeePayerBusiness,
			FeeSplit{AmountUSD: 10000, FeeUSD: 300, BusinessFeeUSD: 300, Total: 10000}},
		{"customer pays", 10000, USD, "1", 300, FeePayerCustomer,
			FeeSplit{AmountUSD: 10000, FeeUSD: 300, CustomerFeeUSD: 300, CustomerFee: 300, Total: 10300}},
		// 100.00 EUR = 108.42 USD; fee 3.2526 -> 3.25 USD; 325 / 1.0842 = 299.76 -> 3.00 EUR.
		{"EUR customer", 10000, EUR, "1.0842", 300, FeePayerCustomer,
			FeeSplit{AmountUSD: 10842, FeeUSD: 325, CustomerFeeUSD: 325, CustomerFee: 300, Total: 10300}},
		{"EUR business", 10000, EUR, "1.0842", 300, FeePayerBusiness,
			FeeSplit{AmountUSD: 10842, FeeUSD: 325, BusinessFeeUSD: 325, Total: 10000}},
		// 20.00 GBP = 25.40 USD; fee 0.762 -> 0.76 USD; 76 / 1.27 = 59.84 -> 0.60 GBP.
		{"GBP customer", 2000, GBP, "1.27", 300, FeePayerCustomer,
			FeeSplit{AmountUSD: 2540, FeeUSD: 76, CustomerFeeUSD: 76, CustomerFee: 60, Total: 2060}},
		// 1.84 GBP = 2.34 USD; fee 0.0702 -> 0.07 USD; 7 / 1.27 = 5.51 -> 0.06 GBP.
		// The 6 pence re-converted would be 7.62 -> 8 cents; reporting keeps
		// the 7 cents the fee is (docs/money.md, "Fee split").
		{"GBP customer, re-conversion differs", 184, GBP, "1.27", 300, FeePayerCustomer,
			FeeSplit{AmountUSD: 234, FeeUSD: 7, CustomerFeeUSD: 7, CustomerFee: 6, Total: 190}},
		// 10.00 AUD = 6.50 USD; fee 0.195 -> 0.20 USD (tie); 20 / 0.65 = 30.77 -> 0.31 AUD.
		{"AUD customer", 1000, AUD, "0.65", 300, FeePayerCustomer,
			FeeSplit{AmountUSD: 650, FeeUSD: 20, CustomerFeeUSD: 20, CustomerFee: 31, Total: 1031}},
		{"crypto passes on nothing", 10000, CAD, "0.73", 0, FeePayerCustomer,
			FeeSplit{AmountUSD: 7300, Total: 10000}},
		{"zero price", 0, USD, "1", 300, FeePayerCustomer, FeeSplit{}},
	}
	for _, tt := range tests {
		got, err := SplitFee(tt.price, tt.c, MustRate(tt.rate), tt.bps, tt.payer)
		if err != nil || got != tt.want {
			t.Errorf("%s: SplitFee = %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
	}
}

func TestSplitFeeRefuses(t *testing.T) {
	one := MustRate("1")
	tests := []struct {
		name  string
		price int64
		c     Currency
		rate  Rate
		bps   int
		payer FeePayer
	}{
		{"negative price", -1, USD, one, 300, FeePayerBusiness},
		{"bps above 100%", 100, USD, one, MaxFeeBps + 1, FeePayerBusiness},
		{"negative bps", 100, USD, one, -1, FeePayerBusiness},
		{"no payer", 100, USD, one, 300, ""},
		{"unknown payer", 100, USD, one, 300, "platform"},
		{"unknown currency", 100, "JPY", one, 300, FeePayerBusiness},
		{"zero rate", 100, USD, Rate{}, 300, FeePayerCustomer},
		{"total overflows", math.MaxInt64, USD, one, 300, FeePayerCustomer},
		{"US value overflows", math.MaxInt64, EUR, MustRate("2"), 300, FeePayerBusiness},
	}
	for _, tt := range tests {
		if got, err := SplitFee(tt.price, tt.c, tt.rate, tt.bps, tt.payer); err == nil {
			t.Errorf("%s: SplitFee = %+v, want error", tt.name, got)
		}
	}
}

// TestSplitFeeSweep runs the fuzz invariants over every small price at
// realistic and awkward rates, so they hold without a fuzzing session.
func TestSplitFeeSweep(t *testing.T) {
	for _, r := range []string{"0.65", "0.73", "1", "1.0842", "1.27", "2.5", "0.000123"} {
		rate := MustRate(r)
		for price := int64(0); price <= 500; price++ {
			for _, bps := range []int{1, 300, MaxFeeBps} {
				for _, payer := range []FeePayer{FeePayerBusiness, FeePayerCustomer} {
					s, err := SplitFee(price, EUR, rate, bps, payer)
					if err != nil {
						t.Fatalf("SplitFee(%d, %s, %d, %s): %v", price, r, bps, payer, err)
					}
					checkFeeSplit(t, s, price, rate, bps, payer)
				}
			}
		}
	}
}
