package chain

import (
	"bytes"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"payd"
	"payd/hd"
	"payd/money"
)

// Receive addresses from docs/wallets.md (the BIP39 test phrase "abandon
// … about").
const (
	btcAddr  = "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"
	evmAddr  = "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"
	solAddr  = "HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk"
	tronAddr = "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH"
)

// testReference is a Solana Pay reference made from a fixed seed.
func testReference(t *testing.T) string {
	t.Helper()
	ref, err := hd.NewReference(bytes.NewReader(bytes.Repeat([]byte{7}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// request builds a payment request for amount (a decimal string) of a.
func request(t *testing.T, a money.Asset, addr, ref, amount, label string) payd.PaymentRequest {
	t.Helper()
	c, err := money.ParseCoinAmount(a, amount)
	if err != nil {
		t.Fatal(err)
	}
	return payd.PaymentRequest{Deposit: payd.Deposit{Address: addr, Reference: ref}, Amount: c, Label: label}
}

// uriCase is one network and coin with the URI PaymentURI must write.
type uriCase struct {
	network      money.Network
	asset        money.Asset
	addr, amount string
	ref, label   string
	want         string
}

func uriCases(ref string) []uriCase {
	return []uriCase{
		{money.Bitcoin, money.BTC, btcAddr, "0.00123", "", "Ada's Books",
			"bitcoin:" + btcAddr + "?amount=0.00123"},
		{money.Bitcoin, money.BTC, btcAddr, "2", "", "", "bitcoin:" + btcAddr + "?amount=2"},
		{money.Ethereum, money.ETH, evmAddr, "0.015", "", "",
			"ethereum:" + evmAddr + "@1?value=15000000000000000"},
		{money.Ethereum, money.USDC, evmAddr, "12.50", "", "",
			"ethereum:0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48@1/transfer?address=" + evmAddr + "&uint256=12500000"},
		{money.Ethereum, money.USDT, evmAddr, "0.01", "", "",
			"ethereum:0xdAC17F958D2ee523a2206206994597C13D831ec7@1/transfer?address=" + evmAddr + "&uint256=10000"},
		{money.Polygon, money.USDC, evmAddr, "99.999999", "", "",
			"ethereum:0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359@137/transfer?address=" + evmAddr + "&uint256=99999999"},
		{money.Solana, money.SOL, solAddr, "1.5", ref, "Ada's Books & Café",
			"solana:" + solAddr + "?amount=1.5&reference=" + ref + "&label=Ada%27s%20Books%20%26%20Caf%C3%A9"},
		{money.Solana, money.USDC, solAddr, "0.01", ref, "Ada",
			"solana:" + solAddr + "?amount=0.01&spl-token=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v&reference=" + ref + "&label=Ada"},
		{money.Solana, money.USDT, solAddr, "25", ref, "",
			"solana:" + solAddr + "?amount=25&spl-token=Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB&reference=" + ref},
		{money.Tron, money.USDT, tronAddr, "100.25", "", "",
			"tron:TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t/transfer?address=" + tronAddr + "&uint256=100250000"},
	}
}

func TestPaymentURI(t *testing.T) {
	for _, c := range uriCases(testReference(t)) {
		t.Run(string(c.network)+"/"+string(c.asset)+"/"+c.amount, func(t *testing.T) {
			got := PaymentURI(c.network, request(t, c.asset, c.addr, c.ref, c.amount, c.label))
			if got != c.want {
				t.Fatalf("PaymentURI =\n %s\nwant\n %s", got, c.want)
			}
		})
	}
}

// TestPaymentURIEveryPair makes sure the table covers every coin on every
// network it moves on.
func TestPaymentURIEveryPair(t *testing.T) {
	covered := map[[2]string]bool{}
	for _, c := range uriCases("") {
		covered[[2]string{string(c.network), string(c.asset)}] = true
	}
	for _, a := range money.Assets {
		for _, n := range money.NetworksFor(a) {
			if !covered[[2]string{string(n), string(a)}] {
				t.Errorf("no PaymentURI case for %s on %s", a, n)
			}
		}
	}
}

// TestPaymentURIParsesBack reads every URI with net/url and checks that
// each field carries what was asked: the scheme, the target, the chain id,
// the function, and the amount back in base units.
func TestPaymentURIParsesBack(t *testing.T) {
	for _, c := range uriCases(testReference(t)) {
		t.Run(string(c.network)+"/"+string(c.asset), func(t *testing.T) {
			req := request(t, c.asset, c.addr, c.ref, c.amount, c.label)
			u, err := url.Parse(PaymentURI(c.network, req))
			if err != nil {
				t.Fatal(err)
			}
			q, err := url.ParseQuery(u.RawQuery)
			if err != nil {
				t.Fatal(err)
			}
			checkParsed(t, c, req, u, q)
		})
	}
}

// checkParsed checks one parsed URI against its case.
func checkParsed(t *testing.T, c uriCase, req payd.PaymentRequest, u *url.URL, q url.Values) {
	t.Helper()
	contract, token := TokenContract(c.network, c.asset)
	target, path, _ := strings.Cut(u.Opaque, "/")
	switch c.network {
	case money.Bitcoin:
		wantFields(t, u.Scheme, "bitcoin", target, c.addr)
		wantUnits(t, c.asset, q.Get("amount"), req)
	case money.Ethereum, money.Polygon:
		id, _ := ChainID(c.network)
		addr, chain, _ := strings.Cut(target, "@")
		wantFields(t, u.Scheme, "ethereum", chain, strconv.Itoa(id))
		if !token {
			wantFields(t, addr, c.addr, path, "")
			wantBaseUnits(t, q.Get("value"), req)
			return
		}
		wantFields(t, addr, contract, path, "transfer", q.Get("address"), c.addr)
		wantBaseUnits(t, q.Get("uint256"), req)
	case money.Solana:
		wantFields(t, u.Scheme, "solana", target, c.addr, q.Get("spl-token"), contract,
			q.Get("reference"), c.ref, q.Get("label"), c.label)
		wantUnits(t, c.asset, q.Get("amount"), req)
	case money.Tron:
		wantFields(t, u.Scheme, "tron", target, contract, path, "transfer", q.Get("address"), c.addr)
		wantBaseUnits(t, q.Get("uint256"), req)
	}
}

// wantFields takes got, want pairs.
func wantFields(t *testing.T, pairs ...string) {
	t.Helper()
	for i := 0; i < len(pairs); i += 2 {
		if pairs[i] != pairs[i+1] {
			t.Errorf("field %d = %q, want %q", i/2, pairs[i], pairs[i+1])
		}
	}
}

// wantUnits checks a decimal amount in whole coins.
func wantUnits(t *testing.T, a money.Asset, s string, req payd.PaymentRequest) {
	t.Helper()
	got, err := money.ParseCoinAmount(a, s)
	if err != nil || got.Cmp(req.Amount) != 0 {
		t.Errorf("amount %q does not read back as %s (%v)", s, req.Amount, err)
	}
}

// wantBaseUnits checks an integer amount in base units.
func wantBaseUnits(t *testing.T, s string, req payd.PaymentRequest) {
	t.Helper()
	if s != req.Amount.Units.String() {
		t.Errorf("base units %q, want %s", s, req.Amount.Units)
	}
}

func TestPaymentURIOmits(t *testing.T) {
	zero := payd.PaymentRequest{Deposit: payd.Deposit{Address: btcAddr}, Amount: money.CoinAmount{Asset: money.BTC}}
	if got := PaymentURI(money.Bitcoin, zero); got != "bitcoin:"+btcAddr {
		t.Errorf("zero amount: %s", got)
	}
	sol := payd.PaymentRequest{Deposit: payd.Deposit{Address: solAddr}, Amount: money.CoinAmount{Asset: money.SOL}}
	if got := PaymentURI(money.Solana, sol); got != "solana:"+solAddr {
		t.Errorf("no amount, reference or label: %s", got)
	}
	for _, bad := range []struct {
		n money.Network
		a money.Asset
	}{{money.Bitcoin, money.ETH}, {money.Polygon, money.USDT}, {money.Tron, money.USDC}, {"dogecoin", money.BTC}} {
		req := payd.PaymentRequest{Deposit: payd.Deposit{Address: evmAddr}, Amount: money.NewCoinAmount(bad.a, 1)}
		if got := PaymentURI(bad.n, req); got != "" {
			t.Errorf("%s on %s: %q, want \"\"", bad.a, bad.n, got)
		}
	}
}

func TestDecimal(t *testing.T) {
	for _, c := range []struct {
		a     money.Asset
		units int64
		want  string
	}{
		{money.BTC, 1, "0.00000001"}, {money.BTC, 100_000_000, "1"}, {money.BTC, 123_000, "0.00123"},
		{money.SOL, 1_500_000_000, "1.5"}, {money.USDC, 10_000, "0.01"}, {money.USDC, 1_234_567_891, "1234.567891"},
		{money.ETH, 0, ""}, {money.ETH, -5, ""},
	} {
		if got := decimal(money.NewCoinAmount(c.a, c.units)); got != c.want {
			t.Errorf("decimal(%d %s) = %q, want %q", c.units, c.a, got, c.want)
		}
	}
}

// TestTokenContracts checks every contract and mint against the network's
// own address format (EIP-55 checksums, base58check, 32-byte keys), which
// catches a mistyped character.
func TestTokenContracts(t *testing.T) {
	for n, byAsset := range tokens {
		for a, c := range byAsset {
			if !money.Supports(a, n) {
				t.Errorf("%s has a contract on %s where payd does not accept it", a, n)
			}
			if err := hd.ValidAddress(n, c); err != nil {
				t.Errorf("%s on %s: %v", a, n, err)
			}
		}
	}
	for _, n := range []money.Network{money.Bitcoin, money.Ethereum, money.Solana} {
		if _, ok := TokenContract(n, n.Native()); ok {
			t.Errorf("native %s on %s has a contract", n.Native(), n)
		}
	}
	if id, ok := ChainID(money.Tron); ok || id != 0 {
		t.Errorf("ChainID(tron) = %d, %v", id, ok)
	}
}

// TestEIP681OtherChain writes requests for a development chain (1337) with
// its own token contract, and checks that the main chains' requests are
// EIP681 with their ids and contracts.
func TestEIP681OtherChain(t *testing.T) {
	const devToken = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
	eth := request(t, money.ETH, evmAddr, "", "0.015", "")
	if got, want := EIP681(1337, "", eth), "ethereum:"+evmAddr+"@1337?value=15000000000000000"; got != want {
		t.Errorf("ETH on 1337 = %s, want %s", got, want)
	}
	usdc := request(t, money.USDC, evmAddr, "", "12.50", "")
	want := "ethereum:" + devToken + "@1337/transfer?address=" + evmAddr + "&uint256=12500000"
	if got := EIP681(1337, devToken, usdc); got != want {
		t.Errorf("USDC on 1337 = %s, want %s", got, want)
	}
	for _, n := range []money.Network{money.Ethereum, money.Polygon} {
		id, _ := ChainID(n)
		contract, _ := TokenContract(n, money.USDC)
		if got, want := PaymentURI(n, usdc), EIP681(uint64(id), contract, usdc); got != want {
			t.Errorf("%s: PaymentURI = %s, EIP681 = %s", n, got, want)
		}
	}
}

// TestTRC20OtherChain writes a request with a test network's token
// contract, and checks that the mainnet request is TRC20 with Tether's.
func TestTRC20OtherChain(t *testing.T) {
	const nileToken = "TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf"
	usdt := request(t, money.USDT, tronAddr, "", "12.50", "")
	want := "tron:" + nileToken + "/transfer?address=" + tronAddr + "&uint256=12500000"
	if got := TRC20(nileToken, usdt); got != want {
		t.Errorf("USDT on nile = %s, want %s", got, want)
	}
	contract, _ := TokenContract(money.Tron, money.USDT)
	if got, want := PaymentURI(money.Tron, usdt), TRC20(contract, usdt); got != want {
		t.Errorf("PaymentURI = %s, TRC20 = %s", got, want)
	}
}

// TestSolanaPayMint writes the mint it is given, as an adapter off
// mainnet does, and none for SOL.
func TestSolanaPayMint(t *testing.T) {
	req := payd.PaymentRequest{Deposit: payd.Deposit{Address: "Owner", Reference: "Ref"},
		Amount: money.NewCoinAmount(money.USDC, 1_500_000)}
	if got, want := SolanaPay("DevMint", req), "solana:Owner?amount=1.5&spl-token=DevMint&reference=Ref"; got != want {
		t.Errorf("SolanaPay = %s, want %s", got, want)
	}
	if got := SolanaPay("", payd.PaymentRequest{Deposit: req.Deposit, Amount: money.NewCoinAmount(money.SOL, 1)}); got !=
		"solana:Owner?amount=0.000000001&reference=Ref" {
		t.Errorf("SolanaPay of SOL = %s", got)
	}
}
