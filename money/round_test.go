package money

import (
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"
)

func TestRound(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"0", "0"},
		{"1/2", "1"}, {"-1/2", "-1"},
		{"3/2", "2"}, {"-3/2", "-2"},
		{"5/2", "3"}, {"-5/2", "-3"},
		{"1234.5", "1235"}, {"-1234.5", "-1235"},
		{"49/100", "0"}, {"-49/100", "0"},
		{"51/100", "1"}, {"-51/100", "-1"},
		{"1/3", "0"}, {"7/3", "2"}, {"-7/3", "-2"}, {"8/3", "3"}, {"-8/3", "-3"},
		{"99.4999999999", "99"}, {"99.5", "100"},
		{"7", "7"}, {"-7", "-7"},
		{"1000000000000000000000000000000.5", "1000000000000000000000000000001"},
	}
	for _, tt := range tests {
		x, ok := new(big.Rat).SetString(tt.in)
		if !ok {
			t.Fatalf("bad test input %q", tt.in)
		}
		before := x.String()
		if got := Round(x).String(); got != tt.want {
			t.Errorf("Round(%s) = %s, want %s", tt.in, got, tt.want)
		}
		if x.String() != before {
			t.Errorf("Round(%s) changed its argument to %s", tt.in, x)
		}
	}
}

func TestToUSDCents(t *testing.T) {
	tests := []struct {
		amount int64
		rate   string
		want   int64
		err    bool
	}{
		{100, "1", 100, false},
		{1000, "1.0842", 1084, false},    // 1084.2
		{1005, "1.1", 1106, false},       // 1105.5: tie goes up
		{-1005, "1.1", -1106, false},     // and mirrors below zero
		{92, "1.0842", 100, false},       // 99.7464
		{91, "1.0842", 99, false},        // 98.6622
		{12345, "0.654321", 8078, false}, // 8077.592745
		{MaxPrice, "1.27", 127000000, false},
		{1, "0.5", 1, false},
		{0, "1.23", 0, false},
		{math.MaxInt64, "1", math.MaxInt64, false},
		{math.MaxInt64, "2", 0, true},
		{math.MinInt64, "1.5", 0, true},
	}
	for _, tt := range tests {
		got, err := ToUSDCents(tt.amount, MustRate(tt.rate))
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ToUSDCents(%d, %s) = %d, %v; want %d, error %v", tt.amount, tt.rate, got, err, tt.want, tt.err)
		}
	}
}

func TestFromUSDCents(t *testing.T) {
	tests := []struct {
		cents int64
		rate  string
		want  int64
		err   bool
	}{
		{100, "1", 100, false},
		{100, "1.0842", 92, false}, // 92.2339
		{3, "1.0842", 3, false},    // 2.767
		{1, "2", 1, false},         // 0.5: tie goes up
		{5, "2", 3, false},         // 2.5
		{-5, "2", -3, false},
		{100, "0.65", 154, false}, // 153.846
		{0, "1.5", 0, false},
		{1, "0", 0, true},
		{math.MaxInt64, "0.5", 0, true},
	}
	for _, tt := range tests {
		got, err := FromUSDCents(tt.cents, MustRate(tt.rate))
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("FromUSDCents(%d, %s) = %d, %v; want %d, error %v", tt.cents, tt.rate, got, err, tt.want, tt.err)
		}
	}
	if _, err := FromUSDCents(1, Rate{}); err == nil {
		t.Error("FromUSDCents at the zero Rate succeeded")
	}
}

func TestMinPrice(t *testing.T) {
	tests := []struct {
		c    Currency
		rate string
		want int64
		err  bool
	}{
		{USD, "1", 100, false},
		{EUR, "1.0842", 92, false}, // 99.5 / 1.0842 = 91.77
		{GBP, "1.27", 79, false},   // 78.35
		{AUD, "0.65", 154, false},  // 153.08
		{CAD, "0.73", 137, false},  // 136.30
		{USD, "0.995", 100, false}, // exactly 100: 100 × 0.995 = 99.5 rounds to 100
		{EUR, "2", 50, false},      // 49.75
		{EUR, "0", 0, true},
		{"JPY", "1", 0, true},
		{EUR, "0.000000000000000001", 0, true}, // 9.95e19 minor units overflow
	}
	for _, tt := range tests {
		got, err := MinPrice(tt.c, MustRate(tt.rate))
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("MinPrice(%s, %s) = %d, %v; want %d, error %v", tt.c, tt.rate, got, err, tt.want, tt.err)
			continue
		}
		if err != nil {
			continue
		}
		// The defining property: the minimum reports at least 1.00 USD and
		// one minor unit less does not.
		at, _ := ToUSDCents(got, MustRate(tt.rate))
		below, _ := ToUSDCents(got-1, MustRate(tt.rate))
		if at < 100 || below >= 100 {
			t.Errorf("MinPrice(%s, %s) = %d worth %d cents; one less is worth %d", tt.c, tt.rate, got, at, below)
		}
	}
}

func TestCheckPrice(t *testing.T) {
	eur := MustRate("1.0842")
	tests := []struct {
		amount  int64
		c       Currency
		rate    Rate
		inRange bool  // nil error
		errIs   error // when not in range
		msg     string
	}{
		{92, EUR, eur, true, nil, ""},
		{MaxPrice, EUR, eur, true, nil, ""},
		{91, EUR, eur, false, ErrPriceRange,
			"money: price out of range: amount must be from 92 to 100000000 minor units (0.92 to 1000000.00 EUR, the equivalent of 1.00 USD up to 1000000.00 EUR)"},
		{MaxPrice + 1, EUR, eur, false, ErrPriceRange, ""},
		{-1, USD, MustRate("1"), false, ErrPriceRange, ""},
		{100, EUR, MustRate("0.0000001"), false, ErrPriceRange,
			"money: price out of range: no EUR price is allowed at the current rate: 1000000.00 EUR is worth less than 1.00 USD"},
		{100, EUR, Rate{}, false, nil, "money: no exchange rate for EUR"},
		{100, "JPY", eur, false, nil, `money: unknown currency "JPY"`},
	}
	for _, tt := range tests {
		err := CheckPrice(tt.amount, tt.c, tt.rate)
		if (err == nil) != tt.inRange {
			t.Errorf("CheckPrice(%d, %s, %s) = %v", tt.amount, tt.c, tt.rate, err)
			continue
		}
		if err == nil {
			continue
		}
		if errors.Is(err, ErrPriceRange) != (tt.errIs == ErrPriceRange) {
			t.Errorf("CheckPrice(%d, %s, %s) = %v; errors.Is ErrPriceRange wrong", tt.amount, tt.c, tt.rate, err)
		}
		if tt.msg != "" && err.Error() != tt.msg {
			t.Errorf("CheckPrice(%d, %s, %s) message\n got %s\nwant %s", tt.amount, tt.c, tt.rate, err, tt.msg)
		}
		if strings.Contains(err.Error(), "%!") {
			t.Errorf("bad format verb in %q", err)
		}
	}
}
