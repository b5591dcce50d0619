package seed

import (
	"crypto/sha256"
	"math/big"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"payd"
	"payd/money"
)

// formats are the shapes of addresses and hashes on each network.
var formats = map[money.Network][2]*regexp.Regexp{
	money.Bitcoin:  {regexp.MustCompile(`^bc1q[02-9ac-hj-np-z]{38}$`), regexp.MustCompile(`^[0-9a-f]{64}$`)},
	money.Ethereum: {regexp.MustCompile(`^0x[0-9a-f]{40}$`), regexp.MustCompile(`^0x[0-9a-f]{64}$`)},
	money.Polygon:  {regexp.MustCompile(`^0x[0-9a-f]{40}$`), regexp.MustCompile(`^0x[0-9a-f]{64}$`)},
	money.Solana:   {regexp.MustCompile(`^[1-9A-HJ-NP-Za-km-z]{32,44}$`), regexp.MustCompile(`^[1-9A-HJ-NP-Za-km-z]{86,88}$`)},
	money.Tron:     {regexp.MustCompile(`^T[1-9A-HJ-NP-Za-km-z]{33}$`), regexp.MustCompile(`^[0-9a-f]{64}$`)},
}

func TestAddressFormats(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		for n, f := range formats {
			a, h := address(r, n), txHash(r, n)
			if !f[0].MatchString(a) || !f[1].MatchString(h) {
				t.Fatalf("%s: address %q or hash %q has the wrong shape", n, a, h)
			}
			if n == money.Bitcoin && !bech32Valid(a) {
				t.Fatalf("bech32 checksum of %q is wrong", a)
			}
			if n == money.Tron && !base58CheckValid(a) {
				t.Fatalf("base58check checksum of %q is wrong", a)
			}
		}
	}
	// BIP 173's test vector: the P2WPKH address of its example key.
	prog, _ := new(big.Int).SetString("751e76e8199196d454941c45d1b3a323f1433bd6", 16)
	if got := bech32Segwit("bc", 0, prog.Bytes()); got != "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4" {
		t.Fatalf("bech32 of the BIP 173 vector: %s", got)
	}
}

func bech32Valid(s string) bool {
	hrp, data, _ := strings.Cut(s, "1")
	values := hrpExpand(hrp)
	for _, c := range data {
		values = append(values, byte(strings.IndexRune(bech32Charset, c)))
	}
	return bech32Polymod(values) == 1
}

func base58CheckValid(s string) bool {
	n := new(big.Int)
	for _, c := range s {
		n.Mul(n, big.NewInt(58)).Add(n, big.NewInt(int64(strings.IndexRune(base58Alphabet, c))))
	}
	b := n.Bytes()
	first := sha256.Sum256(b[:len(b)-4])
	second := sha256.Sum256(first[:])
	return string(second[:4]) == string(b[len(b)-4:]) && b[0] == 0x41
}

// TestPaymentsValid checks every generated payment against the rules a
// real one follows.
func TestPaymentsValid(t *testing.T) {
	gd := generate(t, testConfig(3000, 9))
	for _, p := range gd.payments() {
		if err := validPayment(p); err != "" {
			t.Fatalf("payment %s: %s", p.ID, err)
		}
	}
	for _, c := range gd.customers() {
		if !payd.HasPrefix(c.ID, payd.PrefixCustomer) || (c.Email != "" && payd.CheckEmail("email", c.Email) != nil) {
			t.Fatalf("customer %+v is not valid", c)
		}
	}
}

func validPayment(p *payd.Payment) string {
	switch {
	case !payd.HasPrefix(p.ID, payd.PrefixPayment) || len(p.Code) != 20:
		return "bad id or code"
	case payd.CheckMetadata(p.Metadata) != nil:
		return "bad metadata"
	case len(p.Events) == 0 || p.Events[0].Type != payd.EventCreated:
		return "history does not start with created"
	case p.UpdatedAt.After(testNow) || !p.UpdatedAt.Equal(p.Events[len(p.Events)-1].CreatedAt):
		return "updated_at is not the last event, or after now"
	case (p.Status == payd.PaymentSucceeded) != (p.Reporting.FeeUSD != nil):
		return "fee shown before success, or missing after"
	case p.Status == payd.PaymentSucceeded && p.AmountReceived < p.Amount+p.CustomerFee && !accepted(p):
		return "succeeded without the full amount"
	case p.Method != nil && p.Method.TxHash != "" && !formats[p.Method.Network][1].MatchString(p.Method.TxHash):
		return "tx hash in the wrong format"
	}
	for i := 1; i < len(p.Events); i++ {
		if p.Events[i].CreatedAt.Before(p.Events[i-1].CreatedAt) {
			return "events out of order"
		}
	}
	return ""
}

func accepted(p *payd.Payment) bool {
	for _, e := range p.Events {
		if e.Type == payd.EventAccepted {
			return true
		}
	}
	return false
}
