package rate

import (
	"testing"

	"payd"
	"payd/money"
)

// The parsers read whatever a remote server sends, so they must never
// panic, and anything they accept must be a positive exact price.

func wantPositive(t *testing.T, q payd.Quotes) {
	t.Helper()
	for a, r := range q.Coins {
		if r.Rat().Sign() <= 0 {
			t.Fatalf("accepted %s at %s", a, r)
		}
	}
	for c, r := range q.Fiat {
		if r.Rat().Sign() <= 0 {
			t.Fatalf("accepted %s at %s", c, r)
		}
	}
}

func FuzzCoinbase(f *testing.F) {
	for _, name := range []string{"coinbase_btc.json", "coinbase_eth.json", "coinbase_not_found.json"} {
		f.Add(readTestdata(f, name))
	}
	f.Add([]byte(`{"data":{"amount":"1e5","base":"BTC","currency":"USD"}}`))
	f.Add([]byte(`{"data":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := parseCoinbase(money.BTC, body)
		if err == nil && r.Rat().Sign() <= 0 {
			t.Fatalf("accepted %s", r)
		}
	})
}

func FuzzKraken(f *testing.F) {
	f.Add(readTestdata(f, "kraken_ticker.json"))
	f.Add(readTestdata(f, "kraken_unknown_pair.json"))
	f.Add([]byte(`{"error":[],"result":{"XBTUSD":{"c":["1"]},"ETHUSD":{"c":["2"]},"SOLUSD":{"c":["3"]}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		q, err := parseKraken(body)
		if err == nil {
			wantPositive(t, q)
		}
	})
}

func FuzzCoinGecko(f *testing.F) {
	f.Add(readTestdata(f, "coingecko_simple_price.json"))
	f.Add(readTestdata(f, "coingecko_rate_limited.json"))
	f.Add([]byte(`{"bitcoin":{"usd":1.2e-5},"ethereum":{"usd":"3"},"solana":{"usd":1E+3}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		q, err := parseCoinGecko(body)
		if err == nil {
			wantPositive(t, q)
		}
	})
}

func FuzzECB(f *testing.F) {
	f.Add(readTestdata(f, "ecb_daily.xml"))
	f.Add([]byte(`<Envelope><Cube><Cube time='2024-01-02'><Cube currency='USD' rate='1'/></Cube></Cube></Envelope>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		q, _, err := parseECB(body)
		if err == nil {
			wantPositive(t, q)
		}
	})
}

func FuzzBankOfCanada(f *testing.F) {
	f.Add(readTestdata(f, "boc_fx_rates_daily.json"))
	f.Add([]byte(`{"observations":[{"d":"2024-05-17","FXUSDCAD":{"v":1.362},"FXEURCAD":{"v":"1.48"},"FXGBPCAD":{"v":"1.7"},"FXAUDCAD":{"v":"9.1e-1"}}]}`))
	f.Add([]byte(`{"observations":[]}`))
	f.Add([]byte(`{"observations":[{"d":"2024-05-17","FXUSDCAD":{"v":"0"}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		q, err := parseBankOfCanada(body)
		if err == nil {
			wantPositive(t, q)
			if q.AsOf.IsZero() {
				t.Fatal("accepted an answer without its date")
			}
		}
	})
}
