package money

import (
	"math/big"
	"strings"
	"testing"
)

// units parses a decimal integer for test tables, where wei overflow int64.
func units(t *testing.T, s string) *big.Int {
	t.Helper()
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		t.Fatalf("bad units %q", s)
	}
	return n
}

func TestCoinAmountString(t *testing.T) {
	tests := []struct {
		a     Asset
		units string
		want  string
	}{
		{USDC, "12500000", "12.50"},
		{USDC, "12510000", "12.51"},
		{USDC, "12501000", "12.501"},
		{USDC, "12500001", "12.500001"},
		{USDC, "0", "0.00"},
		{USDT, "1", "0.000001"},
		{BTC, "1", "0.00000001"},
		{BTC, "150000000", "1.50000000"},
		{BTC, "2100000000000000", "21000000.00000000"},
		{ETH, "1", "0.000000000000000001"},
		{ETH, "1000000000000000000", "1.000000"},
		{ETH, "1234567000000000000", "1.234567"},
		{ETH, "1234567800000000000", "1.2345678"},
		{ETH, "1000000000000000000000000", "1000000.000000"},
		{SOL, "1", "0.000000001"},
		{SOL, "100000", "0.0001"},
		{SOL, "1500000000", "1.5000"},
		{USDC, "-1500000", "-1.50"},
		{BTC, "-1", "-0.00000001"},
	}
	for _, tt := range tests {
		c := CoinAmount{Asset: tt.a, Units: units(t, tt.units)}
		if got := c.String(); got != tt.want {
			t.Errorf("%s %s units: String() = %q, want %q", tt.a, tt.units, got, tt.want)
		}
	}
	if got := (CoinAmount{Asset: USDC}).String(); got != "0.00" {
		t.Errorf("nil Units: String() = %q, want 0.00", got)
	}
}

func TestParseCoinAmount(t *testing.T) {
	tests := []struct {
		a     Asset
		in    string
		units string // "" means refused
	}{
		{USDC, "12.5", "12500000"},
		{USDC, "12.50", "12500000"},
		{USDC, "12.500001", "12500001"},
		{USDC, "0", "0"},
		{USDC, "0.0", "0"},
		{USDC, "99999999999999999999", "99999999999999999999000000"},
		{BTC, "0.00000001", "1"},
		{BTC, "21000000", "2100000000000000"},
		{ETH, "0.000000000000000001", "1"},
		{ETH, "1", "1000000000000000000"},
		{ETH, "0.028929", "28929000000000000"},
		{SOL, "1.5", "1500000000"},
		{SOL, "0.000000001", "1"},
		{USDC, "0.0000001", ""}, // 7 decimals, finer than a token unit
		{BTC, "0.000000001", ""},
		{ETH, "0.0000000000000000001", ""},
		{USDC, "100000000000000000000", ""}, // 21 whole digits
		{USDC, "", ""}, {USDC, ".", ""}, {USDC, ".5", ""}, {USDC, "5.", ""},
		{USDC, "-1", ""}, {USDC, "+1", ""}, {USDC, "1e5", ""}, {USDC, "1E5", ""},
		{USDC, " 1", ""}, {USDC, "1 ", ""}, {USDC, "1. 5", ""}, {USDC, "01", ""}, {USDC, "00", ""},
		{USDC, "00.5", ""}, {USDC, "1.2.3", ""}, {USDC, "1,5", ""}, {USDC, "0x10", ""},
		{USDC, "\uff11", ""}, {USDC, "NaN", ""}, {USDC, "Inf", ""}, {USDC, "1_000", ""},
		{"DOGE", "1", ""}, {"", "1", ""},
	}
	for _, tt := range tests {
		got, err := ParseCoinAmount(tt.a, tt.in)
		if tt.units == "" {
			if err == nil {
				t.Errorf("ParseCoinAmount(%s, %q) = %s, want error", tt.a, tt.in, got.Units)
			}
			continue
		}
		if err != nil || got.Asset != tt.a || got.Units.Cmp(units(t, tt.units)) != 0 {
			t.Errorf("ParseCoinAmount(%s, %q) = %v %v, %v; want %s", tt.a, tt.in, got.Asset, got.Units, err, tt.units)
		}
	}
}

func TestCoinAmountArithmetic(t *testing.T) {
	a := NewCoinAmount(BTC, 150)
	b := NewCoinAmount(BTC, 200)
	var zero CoinAmount
	zero.Asset = BTC
	tests := []struct {
		name string
		got  CoinAmount
		want int64
	}{
		{"a+b", a.Add(b), 350},
		{"a-b", a.Sub(b), -50},
		{"b-a", b.Sub(a), 50},
		{"a+zero", a.Add(zero), 150},
		{"zero-a", zero.Sub(a), -150},
	}
	for _, tt := range tests {
		if tt.got.Asset != BTC || tt.got.Units.Int64() != tt.want {
			t.Errorf("%s = %s %v, want %d", tt.name, tt.got.Asset, tt.got.Units, tt.want)
		}
	}
	if a.Units.Int64() != 150 || b.Units.Int64() != 200 {
		t.Error("Add or Sub modified an operand")
	}
	if a.Cmp(b) != -1 || b.Cmp(a) != 1 || a.Cmp(NewCoinAmount(BTC, 150)) != 0 || zero.Cmp(NewCoinAmount(BTC, 0)) != 0 {
		t.Error("Cmp wrong")
	}
	if !zero.IsZero() || a.IsZero() || !NewCoinAmount(BTC, 0).IsZero() {
		t.Error("IsZero wrong")
	}
	if zero.Sign() != 0 || a.Sign() != 1 || a.Sub(b).Sign() != -1 {
		t.Error("Sign wrong")
	}
}

func TestCoinAmountMismatchPanics(t *testing.T) {
	ops := map[string]func(x, y CoinAmount){
		"Add": func(x, y CoinAmount) { x.Add(y) },
		"Sub": func(x, y CoinAmount) { x.Sub(y) },
		"Cmp": func(x, y CoinAmount) { x.Cmp(y) },
	}
	for name, op := range ops {
		func() {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(r.(string), "BTC with ETH") {
					t.Errorf("%s of BTC and ETH: recovered %v", name, r)
				}
			}()
			op(NewCoinAmount(BTC, 1), NewCoinAmount(ETH, 1))
		}()
	}
}
