package rate

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"payd/money"
)

// fiatOnly covers every currency, for tests about coins.
var fiatOnly = map[string]string{"EUR": "1.08", "GBP": "1.27", "CAD": "0.73", "AUD": "0.66"}

// coinsOnly covers every coin that needs a source, for tests about fiat.
var coinsOnly = map[string]string{"BTC": "64000", "ETH": "3200", "SOL": "150"}

func with(base map[string]string, kv ...string) map[string]string {
	m := maps.Clone(base)
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func TestCombineMedian(t *testing.T) {
	tests := []struct {
		name      string
		reports   []map[string]string
		wantCoins map[money.Asset]int64
		wantFiat  map[money.Currency]string
	}{
		{
			name:      "one source",
			reports:   []map[string]string{with(fiatOnly, "BTC", "64000.004", "ETH", "3200.005", "SOL", "150.125")},
			wantCoins: map[money.Asset]int64{"BTC": 6400000, "ETH": 320001, "SOL": 15013, "USDC": 100, "USDT": 100},
		},
		{
			name: "odd count takes the middle value, whatever the order",
			reports: []map[string]string{
				with(fiatOnly, "BTC", "64100", "ETH", "3150", "SOL", "150"),
				with(fiatOnly, "BTC", "63900", "ETH", "3300", "SOL", "151"),
				with(fiatOnly, "BTC", "64000", "ETH", "3200", "SOL", "152"),
			},
			wantCoins: map[money.Asset]int64{"BTC": 6400000, "ETH": 320000, "SOL": 15100, "USDC": 100, "USDT": 100},
		},
		{
			name: "even count takes the exact mean of the middle two",
			reports: []map[string]string{
				with(fiatOnly, "BTC", "64000.01", "ETH", "3200.005", "SOL", "150"),
				with(fiatOnly, "BTC", "64000.00", "ETH", "3200.00", "SOL", "150.01"),
			},
			// 64000.005 → 6400000.5 cents rounds away from zero; 3200.0025 → 320000.25 rounds down.
			wantCoins: map[money.Asset]int64{"BTC": 6400001, "ETH": 320000, "SOL": 15001, "USDC": 100, "USDT": 100},
		},
		{
			name: "four sources ignore both extremes",
			reports: []map[string]string{
				with(fiatOnly, "BTC", "1000", "ETH", "3200", "SOL", "150"),
				with(fiatOnly, "BTC", "64000", "ETH", "3200", "SOL", "150"),
				with(fiatOnly, "BTC", "64002", "ETH", "3200", "SOL", "150"),
				with(fiatOnly, "BTC", "9000000", "ETH", "3200", "SOL", "150"),
			},
			wantCoins: map[money.Asset]int64{"BTC": 6400100, "ETH": 320000, "SOL": 15000, "USDC": 100, "USDT": 100},
		},
		{
			name: "fiat medians keep ten decimals",
			reports: []map[string]string{
				with(coinsOnly, "EUR", "1.0866", "GBP", "1.269985974754558204", "CAD", "0.735132940937690278", "AUD", "0.668471239618578898"),
				with(coinsOnly, "EUR", "1.0871", "GBP", "1.27", "CAD", "0.7351325", "AUD", "0.6684715"),
			},
			wantFiat: map[money.Currency]string{"USD": "1", "EUR": "1.08685",
				// GBP (1.269985974754558204+1.27)/2 = 1.269992987377279102
				"GBP": "1.2699929874",
				// CAD mean 0.735132720468845139 → 0.7351327205
				"CAD": "0.7351327205",
				// AUD mean 0.668471369809289449 → 0.6684713698
				"AUD": "0.6684713698"},
		},
		{
			name:     "a half-way fiat rate rounds away from zero",
			reports:  []map[string]string{with(coinsOnly, "EUR", "1.00000000005", "GBP", "1.26999999995", "CAD", "0.730000000049", "AUD", "0.66")},
			wantFiat: map[money.Currency]string{"USD": "1", "EUR": "1.0000000001", "GBP": "1.27", "CAD": "0.73", "AUD": "0.66"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reports []Report
			for i, kv := range tt.reports {
				reports = append(reports, Report{Source: string(rune('a' + i)), Quotes: quotes(t, kv)})
			}
			x, err := combine(reports)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantCoins != nil && !maps.Equal(x.Coins, tt.wantCoins) {
				t.Errorf("coins = %v\nwant    %v", x.Coins, tt.wantCoins)
			}
			if tt.wantFiat != nil {
				got := map[money.Currency]string{}
				for c, r := range x.Fiat {
					got[c] = r.String()
				}
				if !maps.Equal(got, tt.wantFiat) {
					t.Errorf("fiat = %v\nwant   %v", got, tt.wantFiat)
				}
			}
			if len(x.Sources) != len(reports) {
				t.Errorf("sources = %v", x.Sources)
			}
		})
	}
}

func TestCombineStablecoinsAndUSDAreFixed(t *testing.T) {
	x, err := combine([]Report{
		{Source: "a", Quotes: quotes(t, with(fiatOnly, "BTC", "64000", "ETH", "3200", "SOL", "150", "USDC", "0.87", "USDT", "1.04", "USD", "1"))},
		{Source: "b", Quotes: quotes(t, with(fiatOnly, "USDC", "0.86", "USDT", "1.05"))},
	})
	if err != nil {
		t.Fatal(err)
	}
	if x.Coins[money.USDC] != 100 || x.Coins[money.USDT] != 100 {
		t.Errorf("stablecoins = %d, %d cents; want 100 each (spec 2.11 rule 8)", x.Coins[money.USDC], x.Coins[money.USDT])
	}
	if got := x.Fiat[money.USD].String(); got != "1" {
		t.Errorf("USD = %s", got)
	}
	if !slices.Equal(x.Sources, []string{"a", "b"}) {
		t.Errorf("sources = %v", x.Sources)
	}
}

func TestCombineLeavesOutWhatNoSourceReported(t *testing.T) {
	tests := []struct {
		name    string
		reports []Report
		missing []string
	}{
		{"coins only", []Report{{Source: "kraken", Quotes: quotes(t, coinsOnly)}}, []string{"EUR", "GBP", "CAD", "AUD"}},
		{"fiat only", []Report{{Source: "ecb", Quotes: quotes(t, fiatOnly)}}, []string{"BTC", "ETH", "SOL"}},
		{"one coin missing everywhere", []Report{
			{Source: "a", Quotes: quotes(t, map[string]string{"BTC": "64000", "ETH": "3200"})},
			{Source: "b", Quotes: quotes(t, with(fiatOnly, "BTC", "64000"))},
		}, []string{"SOL"}},
		{"stablecoins alone do not cover coins", []Report{
			{Source: "a", Quotes: quotes(t, with(fiatOnly, "USDC", "1", "USDT", "1"))},
		}, []string{"BTC", "ETH", "SOL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, err := combine(tt.reports)
			if err != nil {
				t.Fatal(err)
			}
			if m := Missing(x); !slices.Equal(m, tt.missing) {
				t.Errorf("missing %v, want %v", m, tt.missing)
			}
		})
	}
	// With nothing but the fixed values there is no snapshot: the one in
	// force serves better.
	for _, reports := range [][]Report{nil, {{Source: "a", Quotes: quotes(t, map[string]string{"USDC": "1"})}}} {
		if x, err := combine(reports); err == nil || !strings.Contains(err.Error(), "no source reported BTC, ETH, SOL, EUR, GBP, CAD, AUD") {
			t.Errorf("Combine = %+v, %v; want an error", x, err)
		}
	}
}

func TestCombineCoversFromDifferentSources(t *testing.T) {
	x, err := combine([]Report{
		{Source: "kraken", Quotes: quotes(t, coinsOnly)},
		{Source: "ecb", Quotes: quotes(t, fiatOnly)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if x.Coins[money.BTC] != 6_400_000 || x.Fiat[money.GBP].String() != "1.27" {
		t.Errorf("snapshot = %+v", x)
	}
}
