package money

import (
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"path/filepath"
	"reflect"
	"testing"
)

func TestParseCurrency(t *testing.T) {
	tests := []struct {
		in   string
		want Currency
		ok   bool
	}{
		{"USD", USD, true}, {"EUR", EUR, true}, {"GBP", GBP, true}, {"CAD", CAD, true}, {"AUD", AUD, true},
		{"usd", "", false}, {"JPY", "", false}, {"", "", false}, {" USD", "", false},
	}
	for _, tt := range tests {
		got, ok := ParseCurrency(tt.in)
		if ok != tt.ok || got != tt.want {
			t.Errorf("ParseCurrency(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestCurrencyMinorDigits(t *testing.T) {
	for _, c := range Currencies {
		if got := c.MinorDigits(); got != 2 {
			t.Errorf("%s.MinorDigits() = %d, want 2", c, got)
		}
	}
	if got := Currency("JPY").MinorDigits(); got != 0 {
		t.Errorf("JPY.MinorDigits() = %d, want 0", got)
	}
}

func TestCurrencyFormat(t *testing.T) {
	tests := []struct {
		c    Currency
		in   int64
		want string
	}{
		{EUR, 0, "0.00"},
		{EUR, 5, "0.05"},
		{EUR, 92, "0.92"},
		{USD, 1234, "12.34"},
		{GBP, MaxPrice, "1000000.00"},
		{CAD, -5, "-0.05"},
		{AUD, math.MinInt64, "-92233720368547758.08"},
		{"JPY", 1234, "1234"},
	}
	for _, tt := range tests {
		if got := tt.c.Format(tt.in); got != tt.want {
			t.Errorf("%s.Format(%d) = %q, want %q", tt.c, tt.in, got, tt.want)
		}
	}
}

func TestParseAsset(t *testing.T) {
	for _, a := range Assets {
		if got, ok := ParseAsset(string(a)); !ok || got != a {
			t.Errorf("ParseAsset(%q) = %q, %v", a, got, ok)
		}
	}
	for _, s := range []string{"usdc", "DOGE", "", "BTC "} {
		if a, ok := ParseAsset(s); ok || a != "" {
			t.Errorf("ParseAsset(%q) accepted", s)
		}
	}
}

func TestAssetDecimals(t *testing.T) {
	tests := []struct {
		a             Asset
		display, base int
		stable        bool
	}{
		{USDC, 2, 6, true},
		{USDT, 2, 6, true},
		{BTC, 8, 8, false},
		{ETH, 6, 18, false},
		{SOL, 4, 9, false},
		{"DOGE", 0, 0, false},
	}
	for _, tt := range tests {
		if d, b, s := tt.a.Decimals(), tt.a.BaseDecimals(), tt.a.Stable(); d != tt.display || b != tt.base || s != tt.stable {
			t.Errorf("%s: Decimals %d BaseDecimals %d Stable %v; want %d %d %v", tt.a, d, b, s, tt.display, tt.base, tt.stable)
		}
	}
}

func TestParseNetwork(t *testing.T) {
	for _, n := range Networks {
		if got, ok := ParseNetwork(string(n)); !ok || got != n {
			t.Errorf("ParseNetwork(%q) = %q, %v", n, got, ok)
		}
	}
	for _, s := range []string{"Ethereum", "base", "", "tron\x00"} {
		if n, ok := ParseNetwork(s); ok || n != "" {
			t.Errorf("ParseNetwork(%q) accepted", s)
		}
	}
}

func TestNetworkNative(t *testing.T) {
	want := map[Network]Asset{Bitcoin: BTC, Ethereum: ETH, Polygon: "", Solana: SOL, Tron: "", "base": ""}
	for n, a := range want {
		if got := n.Native(); got != a {
			t.Errorf("%s.Native() = %q, want %q", n, got, a)
		}
	}
}

func TestNetworksFor(t *testing.T) {
	want := map[Asset][]Network{
		USDC:   {Polygon, Ethereum, Solana},
		USDT:   {Tron, Ethereum, Solana},
		BTC:    {Bitcoin},
		ETH:    {Ethereum},
		SOL:    {Solana},
		"DOGE": nil,
	}
	for a, ns := range want {
		got := NetworksFor(a)
		if !reflect.DeepEqual(got, ns) {
			t.Errorf("NetworksFor(%s) = %v, want %v", a, got, ns)
		}
		for _, n := range Networks {
			if s := Supports(a, n); s != contains(ns, n) {
				t.Errorf("Supports(%s, %s) = %v", a, n, s)
			}
		}
	}
	NetworksFor(USDC)[0] = Tron // a caller's change must not leak back
	if NetworksFor(USDC)[0] != Polygon {
		t.Error("NetworksFor returned the package's own slice")
	}
}

func contains(ns []Network, n Network) bool {
	for _, x := range ns {
		if x == n {
			return true
		}
	}
	return false
}

// TestNoFloat proves the rule that money never touches floating point: no
// file of the package, tests included, names a float type or the float
// parts of strconv and math/big.
func TestNoFloat(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("glob: %v %v", files, err)
	}
	banned := map[string]bool{"float32": true, "float64": true, "ParseFloat": true, "FormatFloat": true,
		"SetFloat64": true, "Float64": true, "Float32": true, "NewFloat": true, "Float": true}
	for _, f := range files {
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(af, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && banned[id.Name] {
				t.Errorf("%s: uses %s", f, id.Name)
			}
			return true
		})
	}
}
