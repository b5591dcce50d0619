package money

import (
	"math"
	"testing"
)

func TestCoinFromUSDCents(t *testing.T) {
	tests := []struct {
		cents int64
		a     Asset
		price int64
		want  string // String() of the result; "" means an error
	}{
		{10000, BTC, 6412350, "0.00155949"}, // 155949.067 sat
		{10000, ETH, 345678, "0.028929"},    // 28928.656 millionths, exact in wei
		{10000, SOL, 15025, "0.6656"},       // 6655.574 ten-thousandths
		{1234, USDC, 0, "12.34"},            // stablecoin: the price is ignored
		{1234, USDT, 99, "12.34"},           // even a depegged one
		{1, USDT, 100, "0.01"},              //
		{1, BTC, 200000000, "0.00000001"},   // 0.5 sat: tie goes up
		{1, ETH, 2000000, "0.000001"},       // 0.5 millionth: tie goes up
		{1, ETH, 2000001, "0.000000"},       // just under the tie
		{0, BTC, 6412350, "0.00000000"},     //
		{10000000000, BTC, 1, "10000000000.00000000"},
		{-1, BTC, 6412350, ""},
		{100, BTC, 0, ""},
		{100, BTC, -5, ""},
		{100, "DOGE", 10, ""},
	}
	for _, tt := range tests {
		got, err := CoinFromUSDCents(tt.cents, tt.a, tt.price)
		if tt.want == "" {
			if err == nil {
				t.Errorf("CoinFromUSDCents(%d, %s, %d) = %s, want error", tt.cents, tt.a, tt.price, got)
			}
			continue
		}
		if err != nil || got.Asset != tt.a || got.String() != tt.want {
			t.Errorf("CoinFromUSDCents(%d, %s, %d) = %s %s, %v; want %s", tt.cents, tt.a, tt.price, got.Asset, got, err, tt.want)
		}
	}
	// The quote is a whole number of display units, in base units.
	eth, _ := CoinFromUSDCents(10000, ETH, 345678)
	if eth.Units.String() != "28929000000000000" {
		t.Errorf("ETH quote units = %s, want 28929000000000000", eth.Units)
	}
}

func TestCoinToUSDCents(t *testing.T) {
	tests := []struct {
		a     Asset
		units string
		price int64
		want  int64
	}{
		{BTC, "155949", 6412350, 10000}, // 9999.9957
		{BTC, "-155949", 6412350, -10000},
		{USDC, "12345678", 0, 1235}, // 1234.5678; stablecoin price ignored
		{USDT, "5000", 1, 1},        // 0.5 cent: tie goes up
		{USDT, "4999", 1, 0},
		{ETH, "1", 345678, 0},
		{ETH, "1000000000000000000", 345678, 345678},
		{ETH, "28929000000000000", 345678, 10000}, // 10000.0187
		{SOL, "665600000", 15025, 10001},          // 10000.64
		{ETH, "10000000000000000000000000000000000000000", 345678, math.MaxInt64},
		{ETH, "-10000000000000000000000000000000000000000", 345678, math.MinInt64},
	}
	for _, tt := range tests {
		c := CoinAmount{Asset: tt.a, Units: units(t, tt.units)}
		if got := CoinToUSDCents(c, tt.price); got != tt.want {
			t.Errorf("CoinToUSDCents(%s %s, %d) = %d, want %d", tt.units, tt.a, tt.price, got, tt.want)
		}
	}
	if got := CoinToUSDCents(CoinAmount{Asset: BTC}, 6412350); got != 0 {
		t.Errorf("zero CoinAmount is worth %d cents", got)
	}
}

func TestCoinRate(t *testing.T) {
	tests := []struct {
		a     Asset
		price int64
		c     Currency
		rate  string
		want  int64
		err   bool
	}{
		{BTC, 6412350, EUR, "1.0842", 5914361, false}, // 5914360.819
		{BTC, 6412350, USD, "1", 6412350, false},
		{USDC, 0, EUR, "1.0842", 92, false},     // 100 / 1.0842 = 92.23
		{USDT, 250, USD, "1", 100, false},       // one dollar whatever the source says
		{SOL, 15025, AUD, "0.65", 23115, false}, // 23115.38
		{ETH, 1, USD, "2", 1, false},            // 0.5: tie goes up
		{BTC, 0, EUR, "1.0842", 0, true},
		{BTC, 6412350, EUR, "0", 0, true},
		{"DOGE", 10, EUR, "1", 0, true},
		{BTC, 6412350, "JPY", "1", 0, true},
	}
	for _, tt := range tests {
		got, err := CoinRate(tt.a, tt.price, tt.c, MustRate(tt.rate))
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("CoinRate(%s, %d, %s, %s) = %d, %v; want %d, error %v", tt.a, tt.price, tt.c, tt.rate, got, err, tt.want, tt.err)
		}
	}
}
